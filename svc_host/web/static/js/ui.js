// Shared pieces of the dashboard's pages: cards, stat tiles, gauges, toasts, confirm dialogs, field errors.
import { h, replace } from './dom.js';
import { errorText, fieldName } from './api.js';

/** A titled panel; `actions` go to the right of the title. */
export function card(title, body, { actions = null, cls = '' } = {}) {
  return h(
    'section',
    { class: ['card', cls] },
    title || actions
      ? h(
          'div',
          { class: 'card-head' },
          title ? h('h2', null, title) : h('span'),
          actions ? h('div', { class: 'card-actions' }, actions) : null,
        )
      : null,
    h('div', { class: 'card-body' }, body),
  );
}

/** A stat tile: big number, label, optional hint line and tone (ok, warn, bad, info). */
export function statCard(label, value, { hint = null, tone = '', href = null } = {}) {
  const inner = [
    h('div', { class: 'stat-value' }, value),
    h('div', { class: 'stat-label' }, label),
    hint ? h('div', { class: 'stat-hint' }, hint) : null,
  ];
  return href
    ? h('a', { class: ['stat', tone && `tone-${tone}`], href }, inner)
    : h('div', { class: ['stat', tone && `tone-${tone}`] }, inner);
}

/** A horizontal gauge: used of total with a label; colour follows how full it is. */
export function gauge(used, total, { label = '', detail = '' } = {}) {
  const frac = total > 0 ? Math.min(1, used / total) : 0;
  const tone = frac >= 0.9 ? 'bad' : frac >= 0.6 ? 'warn' : 'ok';
  return h(
    'div',
    {
      class: 'gauge',
      role: 'meter',
      'aria-valuemin': '0',
      'aria-valuemax': String(total),
      'aria-valuenow': String(used),
      'aria-label': label,
    },
    h(
      'div',
      { class: 'gauge-head' },
      h('span', { class: 'gauge-label' }, label),
      h('span', { class: 'gauge-detail' }, detail),
    ),
    h(
      'div',
      { class: 'gauge-track' },
      h('div', { class: ['gauge-fill', `tone-${tone}`], style: { width: `${(frac * 100).toFixed(1)}%` } }),
    ),
  );
}

/** A short-lived message in the corner. */
export function toast(message, kind = 'info') {
  const box = document.getElementById('toasts');
  const el = h('div', { class: ['toast', `toast-${kind}`], role: kind === 'error' ? 'alert' : 'status' }, message);
  box.append(el);
  setTimeout(() => el.remove(), kind === 'error' ? 8000 : 4000);
}

/** An inline error next to what caused it; `alertBox(null)` is an empty, hidden placeholder to fill later. */
export function alertBox(err, kind = 'error') {
  const el = h('div', { class: ['alert', `alert-${kind}`], role: 'alert', hidden: !err });
  if (err) el.textContent = typeof err === 'string' ? err : errorText(err);
  return el;
}

/** Show (or clear with null) an error in a box made by alertBox. */
export function showError(box, err) {
  box.hidden = !err;
  box.textContent = err ? (typeof err === 'string' ? err : errorText(err)) : '';
}

/**
 * A modal confirmation. Resolves true when confirmed. `body` may be nodes; `danger` paints the button red.
 * Escape or Cancel resolves false. Focus starts on Cancel, so Enter alone never confirms a destructive action.
 */
export function confirmDialog({ title, body, confirmLabel = 'Confirm', danger = false }) {
  return new Promise((resolve) => {
    const cancel = h('button', { type: 'button', class: 'btn', onClick: () => close(false) }, 'Cancel');
    const ok = h(
      'button',
      { type: 'button', class: ['btn', danger ? 'btn-danger' : 'btn-primary'], onClick: () => close(true) },
      confirmLabel,
    );
    const dialog = h(
      'dialog',
      { class: 'dialog', 'aria-labelledby': 'dialog-title' },
      h('h2', { id: 'dialog-title' }, title),
      h('div', { class: 'dialog-body' }, body),
      h('div', { class: 'dialog-actions' }, cancel, ok),
    );
    dialog.addEventListener('cancel', (e) => {
      e.preventDefault();
      close(false);
    });
    function close(value) {
      dialog.close();
      dialog.remove();
      resolve(value);
    }
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}

/**
 * Show what a form's request was refused for. A 422's problems (`err.fields`, in words) go next to the control
 * each names: its `name`, or a `data-field` listing API fields ("environment.conda environment.venv"), matching
 * the field's dotted path or its last part ("resources.time_limit" finds name="time_limit"). The rest, and any
 * other error, goes to `box` (an alertBox). `focus`: the first marked control takes the focus (after a submit; not
 * while one types). `showFormError(form, box, null)` clears it all.
 */
export function showFormError(form, box, err, { focus = true } = {}) {
  for (const note of form.querySelectorAll('.field-error[data-from="api"]')) unmark(note);
  const problems = err?.fields || [];
  const rest = [];
  let first = null;
  for (const problem of problems) {
    const control = problem.field ? controlFor(form, problem.field) : null;
    if (!control) {
      rest.push(problem.field ? `${fieldName(problem.field)}: ${problem.message}` : problem.message);
      continue;
    }
    markField(control, problem.message, 'api');
    first = first || control;
  }
  if (!err) showError(box, null);
  else if (!problems.length) showError(box, err);
  else showError(box, rest.length ? rest.join('\n') : null);
  if (first && focus) first.focus();
}

function controlFor(form, path) {
  const last = path
    .split('.')
    .filter((p) => !/^\d+$/.test(p))
    .pop();
  const controls = [...form.querySelectorAll('input, select, textarea')].filter((c) => !c.closest('[hidden]'));
  const names = (c) => [c.name, ...(c.dataset.field || '').split(' ')].filter(Boolean);
  return controls.find((c) => names(c).includes(path)) || controls.find((c) => names(c).includes(last)) || null;
}

/** Put `message` under a control (its words, capitalised), linked by aria-describedby and aria-invalid. */
function markField(control, message, from) {
  const holder = control.closest('.field') || control.parentElement;
  const old = holder.querySelector(`.field-error[data-for="${control.id}"]`);
  if (old) unmark(old);
  if (!control.id) control.id = `f-${Math.random().toString(36).slice(2, 9)}`;
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  const note = h('div', { class: 'field-error', id: `${control.id}-error`, dataset: { for: control.id, from } }, text);
  holder.append(note);
  control.setAttribute('aria-invalid', 'true');
  control.setAttribute('aria-describedby', note.id);
  control.addEventListener(
    'input',
    () => {
      if (note.isConnected && note.dataset.from === 'api') unmark(note);
    },
    { once: true },
  );
}

function unmark(note) {
  const control = document.getElementById(note.dataset.for);
  if (control) {
    control.removeAttribute('aria-invalid');
    control.removeAttribute('aria-describedby');
  }
  note.remove();
}

/**
 * A text control whose value must match `pattern` (a regex source without anchors, checked by the browser, so a
 * `-` or other syntax character inside a class is escaped: Chromium compiles it with the `v` flag). As one types,
 * a value that does not match is said in `words` under the field, before anything is sent; the same words are the
 * browser's own message. The API checks it again, in the same words.
 */
export function patternRule(control, pattern, words) {
  control.setAttribute('pattern', pattern);
  control.title = words;
  const check = () => {
    const holder = control.closest('.field') || control.parentElement;
    const note = holder?.querySelector(`.field-error[data-for="${control.id}"][data-from="typing"]`);
    if (control.value && control.validity.patternMismatch) {
      if (!note) markField(control, words, 'typing');
    } else if (note) unmark(note);
  };
  control.addEventListener('input', check);
  control.addEventListener('blur', check);
  return control;
}

/** A labelled form field; `input` is the control. */
export function field(label, input, { hint = null, id = null } = {}) {
  const inputId = id || input.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  input.id = inputId;
  return h(
    'div',
    { class: 'field' },
    h('label', { htmlFor: inputId }, label),
    input,
    hint ? h('div', { class: 'hint' }, hint) : null,
  );
}

/** A button that shows a busy state while its async action runs and reports errors into `errorBox`. */
export function actionButton(label, action, { cls = 'btn', errorBox = null, busyLabel = null, title = null } = {}) {
  const btn = h('button', { type: 'button', class: cls, title });
  btn.textContent = label;
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    btn.classList.add('busy');
    if (busyLabel) btn.textContent = busyLabel;
    if (errorBox) showError(errorBox, null);
    try {
      await action(btn);
    } catch (err) {
      if (errorBox) showError(errorBox, err);
      else toast(errorText(err), 'error');
    } finally {
      btn.disabled = false;
      btn.classList.remove('busy');
      btn.textContent = label;
    }
  });
  return btn;
}

/** Replace a container's content with a spinner line. */
export function loading(container, text = 'Loading…') {
  replace(container, h('div', { class: 'loading' }, text));
}

/**
 * Tabs: [{id, label, render(panel)}]; the active one is remembered in the URL hash-less query by the caller.
 * Returns {element, drawn}: `drawn` settles when the first tab's render (which may be async) has drawn.
 */
export function tabs(items, active, onChange) {
  const bar = h('div', { class: 'tabs', role: 'tablist' });
  const panel = h('div', { class: 'tab-panel', role: 'tabpanel' });
  const buttons = items.map((item) =>
    h(
      'button',
      {
        type: 'button',
        role: 'tab',
        class: 'tab',
        id: `tab-${item.id}`,
        onClick: () => select(item.id),
      },
      item.label,
    ),
  );
  bar.append(...buttons);
  function select(id) {
    items.forEach((item, i) => {
      const on = item.id === id;
      buttons[i].classList.toggle('active', on);
      buttons[i].setAttribute('aria-selected', String(on));
      buttons[i].tabIndex = on ? 0 : -1;
    });
    const item = items.find((i) => i.id === id) || items[0];
    replace(panel);
    const drawn = item.render(panel);
    if (onChange) onChange(item.id);
    return drawn;
  }
  bar.addEventListener('keydown', (e) => {
    const i = buttons.indexOf(document.activeElement);
    if (i < 0) return;
    const next =
      e.key === 'ArrowRight'
        ? (i + 1) % buttons.length
        : e.key === 'ArrowLeft'
          ? (i - 1 + buttons.length) % buttons.length
          : -1;
    if (next >= 0) {
      buttons[next].focus();
      select(items[next].id);
    }
  });
  const drawn = Promise.resolve(select(active || items[0].id));
  return { element: h('div', null, bar, panel), drawn };
}
