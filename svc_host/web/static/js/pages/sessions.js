// Sessions: start a web app on a GPU node (JupyterLab, TensorBoard, a command of one's own) from a form each kind
// draws from its fields' JSON schema, and follow every session live: queued (with why it waits), starting, ready
// (Open mints a one-time link on the sessions' own origin), ended with why. Time left ticks in the browser; the
// list is re-read on the session events, never on a timer.
import { h, replace, fmtDuration, fmtTime } from '../dom.js';
import { api } from '../api.js';
import { card, field, alertBox, showError, showFormError, confirmDialog, actionButton, toast } from '../ui.js';
import { emptyState, setQuery, setTitle } from '../router.js';
import { live, oneAtATime } from '../live.js';
import { liveIndicator } from '../events.js';
import { clusterField, clusterFilter } from '../components/cluster-field.js';
import { jobHref } from '../cluster.js';

const REASONS = {
  stopped: 'stopped',
  time_limit: 'time limit reached',
  app_exited: 'the app exited',
  node_failure: 'node failure',
  start_timeout: 'not ready within its start timeout',
  idle_timeout: 'idle timeout',
  job_ended: 'its job ended',
};
/** An app that never ran: the guard could not find its program (exit 127: bash's "command not found" too). */
const NOT_FOUND = /^exit code 127\b|cannot start '[^']*': \[Errno 2\]/m;
const FAILED = new Set(['app_exited', 'node_failure', 'start_timeout']);
const BADGES = {
  queued: 'status-pending',
  starting: 'status-running',
  ready: 'status-completed',
  ended: 'status-cancelled',
};

/** A form field's label from its key when the schema gives no title of its own ("work_dir" -> "Work dir"). */
function labelOf(key, prop) {
  const auto = key
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ');
  if (prop.title && prop.title !== auto) return prop.title;
  const words = key.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The controls of a kind's form, from its JSON schema (pydantic's): strings, numbers, booleans and enums, an
 * optional field being `anyOf [X, null]`. Each is `{key, element, read()}`; `read()` is the value to send, or
 * undefined for an empty optional one (the kind's own default then applies). Controls are named `fields.<key>`,
 * the path the API's 400 gives each problem, so its words land under the control.
 */
export function schemaControls(schema) {
  const defs = schema.$defs || {};
  const resolve = (s) => (s?.$ref ? defs[s.$ref.split('/').pop()] || {} : s || {});
  const required = new Set(schema.required || []);
  return Object.entries(schema.properties || {}).map(([key, raw]) => {
    // the field's own keys (title, description, default) sit beside its $ref or anyOf, and win over the type's
    const { $ref: _ref, anyOf, oneOf, ...own } = raw;
    const variants = anyOf || oneOf;
    const solid = variants ? variants.map(resolve).filter((v) => v.type !== 'null')[0] : resolve(raw);
    const prop = { ...solid, title: undefined, ...own }; // a $ref's title is its class name, not the field's
    const name = `fields.${key}`;
    const isRequired = required.has(key);
    const label = [labelOf(key, prop), isRequired ? h('span', { class: 'req', 'aria-hidden': 'true' }, ' *') : null];
    const hint = prop.description || null;
    const given = prop.default ?? null;
    if (prop.type === 'boolean') {
      const box = h('input', { type: 'checkbox', name, checked: given === true });
      const element = h(
        'div',
        { class: 'field field-check' },
        h('label', { class: 'check' }, box, label),
        hint ? h('div', { class: 'hint' }, hint) : null,
      );
      return { key, element, read: () => box.checked };
    }
    if (Array.isArray(prop.enum)) {
      const select = h(
        'select',
        { name, required: isRequired },
        isRequired ? null : h('option', { value: '' }, 'default'),
        prop.enum.map((v) => h('option', { value: String(v), selected: v === given }, String(v))),
      );
      return {
        key,
        element: field(label, select, { hint }),
        read: () => (select.value === '' ? undefined : prop.enum.find((v) => String(v) === select.value)),
      };
    }
    if (prop.type === 'integer' || prop.type === 'number') {
      const input = h('input', {
        name,
        type: 'number',
        required: isRequired,
        step: prop.type === 'integer' ? '1' : 'any',
        value: given === null ? '' : String(given),
      });
      if (prop.minimum !== undefined) input.min = String(prop.minimum);
      if (prop.maximum !== undefined) input.max = String(prop.maximum);
      return {
        key,
        element: field(label, input, { hint }),
        read: () => (input.value.trim() === '' ? undefined : Number(input.value)),
      };
    }
    // a string: one line unless it may be long text (a command line)
    const long = prop.maxLength === undefined || prop.maxLength > 4096;
    const input = long
      ? h(
          'textarea',
          { name, rows: '2', spellcheck: 'false', required: isRequired },
          given === null ? '' : String(given),
        )
      : h('input', { name, spellcheck: 'false', required: isRequired, value: given === null ? '' : String(given) });
    const element = field(label, input, { hint });
    if (long) element.classList.add('field-wide');
    return { key, element, read: () => (input.value.trim() === '' ? undefined : input.value) };
  });
}

export async function render(root, _params, query) {
  setTitle('Sessions');
  const kinds = await api('/api/session-kinds');
  const listBox = h('div');
  const listError = alertBox(null);
  const filterBox = h('span');
  let shownOn = query.on || '';
  const { formCard } = await startForm(kinds, query.kind, () => load());
  replace(
    root,
    formCard,
    listError,
    card('Sessions', listBox, { cls: 'flush sessions-card', actions: [filterBox, liveIndicator()] }),
  );
  let sessions = [];
  const pendingWhy = new Map(); // "cluster/job" -> why a queued session's job waits (GET /api/jobs/{id}/pending)

  const load = oneAtATime(async () => {
    try {
      sessions = await api('/api/sessions');
    } catch (err) {
      showError(listError, err);
      return;
    }
    showError(listError, null);
    await readPending();
    draw();
  });

  async function readPending() {
    const queued = sessions.filter((s) => s.state === 'queued');
    await Promise.all(
      queued.map(async (s) => {
        try {
          const answer = await api(`/api/jobs/${encodeURIComponent(s.job_id)}/pending`, {
            query: { transport: s.cluster },
          });
          pendingWhy.set(keyOf(s), answer.pending ? answer : null);
        } catch {
          pendingWhy.delete(keyOf(s)); // not known yet (the monitor has not seen the job): the badge says queued
        }
      }),
    );
  }

  function draw() {
    replace(
      filterBox,
      new Set(sessions.map((s) => s.cluster)).size > 1 || shownOn
        ? clusterFilter(
            sessions.map((s) => s.cluster),
            shownOn,
            (name) => {
              shownOn = name;
              setQuery({ on: name });
              draw();
            },
          )
        : null,
    );
    const shown = sessions.filter((s) => !shownOn || s.cluster === shownOn);
    if (!shown.length) {
      replace(
        listBox,
        emptyState(
          'No sessions yet',
          'A session runs JupyterLab, TensorBoard or a command of your own on a node, as a job; ' +
            'svc opens it for you in a tab of its own.',
        ),
      );
      return;
    }
    replace(
      listBox,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'data sessions' },
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              ['Kind', 'Cluster', 'Job', 'State', 'Node', 'Time left', ''].map((t) =>
                h('th', { class: t === 'Job' ? 'num' : null }, t),
              ),
            ),
          ),
          h('tbody', null, shown.map(row)),
        ),
      ),
    );
    tick();
  }

  function row(s) {
    const ended = s.state === 'ended';
    const openBtn =
      s.state === 'ready' && !s.stopping
        ? actionButton('Open', () => openSession(s), {
            cls: 'btn btn-sm btn-primary',
            errorBox: listError,
            title: "Open in a new tab (a one-time link on the sessions' own origin)",
          })
        : null;
    const stopBtn =
      ended || s.stopping
        ? null
        : actionButton('Stop', () => stopSession(s), { cls: 'btn btn-sm btn-ghost-danger', errorBox: listError });
    if (openBtn) openBtn.setAttribute('aria-label', `Open ${s.kind} session ${s.job_id} on ${s.cluster}`);
    if (stopBtn) stopBtn.setAttribute('aria-label', `Stop ${s.kind} session ${s.job_id} on ${s.cluster}`);
    return h(
      'tr',
      { dataset: { session: keyOf(s), cluster: s.cluster, jobId: s.job_id, state: s.state } },
      h(
        'td',
        { class: 'wrap' },
        h('strong', null, s.kind),
        summary(s) ? h('div', { class: 'muted session-summary' }, summary(s)) : null,
      ),
      h('td', null, h('span', { class: 'cluster-chip' }, s.cluster)),
      h('td', { class: 'num' }, h('a', { href: jobHref(s.cluster, s.job_id), class: 'job-link' }, s.job_id)),
      h('td', { class: 'wrap session-state' }, stateCell(s)),
      h('td', { class: 'mono' }, s.node || h('span', { class: 'muted' }, '—')),
      h('td', { class: 'time-left' }, timeLeft(s)),
      h('td', null, h('div', { class: 'btn-group nowrap' }, openBtn, stopBtn)),
    );
  }

  function stateCell(s) {
    const tone = s.state === 'ended' && FAILED.has(s.end_reason) ? 'status-failed' : BADGES[s.state];
    const badge = h('span', { class: ['badge', tone] }, s.state);
    const lines = [badge];
    if (s.stopping) lines.push(h('div', { class: 'muted' }, 'stopping…'));
    if (s.state === 'queued') {
      const why = pendingWhy.get(keyOf(s));
      if (why) {
        // what Slurm says, and the API's sentence when the job will not start as it is (it says what to change)
        lines.push(
          h(
            'div',
            { class: 'pending-line', title: why.explanation || '' },
            why.reason ? h('span', { class: 'mono pending-reason' }, why.reason) : null,
            why.start_estimate?.at
              ? h('span', { class: 'muted' }, ` · expected start ${fmtTime(why.start_estimate.at)}`)
              : null,
          ),
        );
        if (why.needs_action && why.explanation) lines.push(h('div', { class: 'pending-action' }, why.explanation));
      }
    }
    if (s.state === 'ended') {
      lines.push(h('div', { class: 'end-reason' }, REASONS[s.end_reason] || s.end_reason || 'ended'));
      if (s.end_reason === 'app_exited' && NOT_FOUND.test(s.end_detail || '')) {
        // the first start of many a new user: JupyterLab is not on the node's PATH,
        // the detail says so in Python's words
        lines.push(
          h(
            'div',
            { class: 'end-hint' },
            'its program was not found on the node: give the environment that has it (Venv), or check the command',
          ),
        );
      }
      if (s.end_detail)
        lines.push(h('details', { class: 'end-detail' }, h('summary', null, 'detail'), h('pre', null, s.end_detail)));
    }
    if (s.state === 'ready' && s.idle_warned_at && s.idle_minutes) {
      const since = Date.parse(s.last_activity || s.ready_at || s.idle_warned_at);
      lines.push(
        h(
          'div',
          { class: 'idle-warning', role: 'status', dataset: { idleEnds: String(since + s.idle_minutes * 60_000) } },
          idleText(since + s.idle_minutes * 60_000),
        ),
      );
    }
    return lines;
  }

  function timeLeft(s) {
    if (s.state === 'ended') return h('span', { class: 'muted' }, '—');
    if (!s.time_limit_seconds) return h('span', { class: 'muted' }, 'no limit');
    if (s.state === 'queued' || s.time_left_seconds === null)
      return h(
        'span',
        { title: "counts from the job's start" },
        fmtDuration(s.time_left_seconds ?? s.time_limit_seconds),
      );
    return h(
      'span',
      { dataset: { until: String(Date.now() + s.time_left_seconds * 1000) } },
      fmtDuration(s.time_left_seconds),
    );
  }

  async function openSession(s) {
    // The tab is opened now, within the click (no popup blocker), and let go of this one before it goes anywhere:
    // the session's page must not reach back to the dashboard through window.opener.
    const tab = window.open('', '_blank');
    if (tab) tab.opener = null;
    try {
      const { url } = await api(`/api/sessions/${encodeURIComponent(s.job_id)}/link`, {
        method: 'POST',
        query: { transport: s.cluster },
      });
      if (tab) tab.location.replace(url);
      else window.open(url, '_blank', 'noopener');
    } catch (err) {
      if (tab) tab.close();
      throw err;
    }
  }

  async function stopSession(s) {
    const ok = await confirmDialog({
      title: `Stop session ${s.job_id}?`,
      body: `Its job is cancelled on ${s.cluster}: the ${s.kind} app ends, and whatever it has not saved is lost.`,
      confirmLabel: 'Stop session',
      danger: true,
    });
    if (!ok) return;
    await api(`/api/sessions/${encodeURIComponent(s.job_id)}`, { method: 'DELETE', query: { transport: s.cluster } });
    toast(`Stopping session ${s.job_id} on ${s.cluster}`, 'ok');
    await load();
  }

  function tick() {
    const now = Date.now();
    for (const el of listBox.querySelectorAll('[data-until]'))
      el.textContent = fmtDuration(Math.max(0, (Number(el.dataset.until) - now) / 1000));
    for (const el of listBox.querySelectorAll('[data-idle-ends]'))
      el.textContent = idleText(Number(el.dataset.idleEnds), now);
  }
  const ticker = setInterval(tick, 1000);
  const stop = live(['session.status_changed', 'session.idle_warning'], () => load(), { wait: 300 });
  await load();
  return () => {
    clearInterval(ticker);
    stop();
  };
}

function keyOf(s) {
  return `${s.cluster}/${s.job_id}`;
}

function idleText(endsAt, now = Date.now()) {
  return `Idle: it ends in ${fmtDuration(Math.max(0, (endsAt - now) / 1000))} unless used`;
}

/** What a session runs, in a few words: its form's values that were given. */
function summary(s) {
  const given = Object.entries(s.fields || {}).filter(
    ([, v]) => v !== null && v !== undefined && v !== '' && typeof v !== 'boolean',
  );
  return given.map(([, v]) => String(v)).join(' · ');
}

async function startForm(kinds, wanted, onStarted) {
  const cluster = await clusterField({
    name: 'session-cluster',
    hint: 'where the job runs',
    onChange: () => {
      drawSubmitLabel();
      loadPartitions();
    },
  });
  // the kind asked for in the URL (?kind=), else JupyterLab when offered: what most people come for
  const first = kinds.some((k) => k.name === wanted) ? wanted : 'jupyter';
  const kind = h(
    'select',
    { name: 'kind' },
    kinds.map((k) => h('option', { value: k.name, selected: k.name === first, title: k.description }, k.name)),
  );
  const kindHint = h('span');
  const readyHint = h('span', { class: 'muted' });
  const fieldsBox = h('div', { class: 'form-grid kind-fields' });
  let controls = [];
  function drawKind() {
    const chosen = kinds.find((k) => k.name === kind.value);
    controls = chosen ? schemaControls(chosen.fields) : [];
    replace(
      fieldsBox,
      controls.map((c) => c.element),
    );
    fieldsBox.hidden = !controls.length;
    const idle = chosen?.idle_minutes ? `; ends after ${chosen.idle_minutes} idle minutes` : '';
    kindHint.textContent = chosen ? chosen.description : '';
    readyHint.textContent = chosen
      ? 'It starts as a job; Open appears once the app answers ' +
        `(within ${fmtDuration(chosen.start_timeout, { coarse: true })} of the job's start${idle}).`
      : '';
  }
  kind.addEventListener('change', () => {
    drawKind();
    showFormError(form, error, null);
  });
  const gpus = h('input', { name: 'gpus', placeholder: 'e.g. 1 or a100:1', spellcheck: 'false' });
  const time = h('input', { name: 'time_limit', value: '1:00:00', placeholder: 'e.g. 2:00:00' });
  const partition = h('select', { name: 'partition' });
  let partitionSeq = 0;
  async function loadPartitions() {
    const seq = ++partitionSeq;
    const list = await api('/api/resources', { query: { transport: cluster.value() } }).catch(() => []);
    if (seq !== partitionSeq) return;
    const chosen = partition.value;
    replace(
      partition,
      h('option', { value: '' }, 'cluster default'),
      list.map((p) =>
        h(
          'option',
          { value: p.partition, selected: p.partition === chosen },
          `${p.partition} — ${p.gpus_available}/${p.total_gpus} GPUs free`,
        ),
      ),
    );
  }
  await loadPartitions();
  const error = alertBox(null);
  const startBtn = h('button', { type: 'submit', class: 'btn btn-primary', id: 'start-session' });
  const drawSubmitLabel = () => {
    startBtn.textContent = `Start on ${cluster.value()}`;
  };
  drawSubmitLabel();

  const form = h(
    'form',
    { class: 'session-form', novalidate: true },
    h(
      'div',
      { class: 'form-grid' },
      field('Kind', kind, { hint: kindHint }),
      cluster.element,
      field('GPUs', gpus, { hint: 'N or TYPE:N; empty: none' }),
      field('Time limit', time, { hint: 'H:MM:SS, or minutes' }),
      field('Partition', partition),
    ),
    fieldsBox,
    error,
    h('div', { class: 'form-actions' }, startBtn, readyHint),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    showFormError(form, error, null);
    const fields = {};
    for (const c of controls) {
      const value = c.read();
      if (value !== undefined) fields[c.key] = value;
    }
    const body = {
      kind: kind.value,
      fields,
      transport: cluster.value(),
      gpus: gpus.value.trim() || null,
      time_limit: time.value.trim() || null,
      partition: partition.value || null,
    };
    startBtn.disabled = true;
    startBtn.textContent = 'Starting…';
    try {
      const started = await api('/api/sessions', { method: 'POST', body });
      toast(`${started.kind} session ${started.job_id} queued on ${started.cluster}`, 'ok');
      await onStarted(started);
    } catch (err) {
      showFormError(form, error, err);
      if (!error.hidden) error.scrollIntoView({ block: 'nearest' });
    } finally {
      startBtn.disabled = false;
      drawSubmitLabel();
    }
  });
  drawKind();
  if (!kinds.length) showError(error, 'No plugin offers a kind of session on this server.');
  return { form, formCard: card('Start a session', form) };
}
