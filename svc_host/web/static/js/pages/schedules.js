// Schedules: every schedule with its timing, next fire (in the browser's zone) and last outcome, a form to add one,
// and per schedule enable/disable, run now and delete. A fire starts a workflow run (or a sweep), so the list is
// re-read when a run or sweep changes; the "in 5 min" texts tick in the browser.
import { h, replace, fmtAgo, fmtTime, agoSpan } from '../dom.js';
import { api } from '../api.js';
import {
  card,
  field,
  alertBox,
  showError,
  showFormError,
  patternRule,
  confirmDialog,
  actionButton,
  toast,
} from '../ui.js';
import { emptyState, setTitle } from '../router.js';
import { live } from '../live.js';
import { liveIndicator } from '../events.js';
import { typed } from '../workflow-editor/document.js';
import { clusterField } from '../components/cluster-field.js';

const UNITS = [
  ['s', 1],
  ['m', 60],
  ['h', 3600],
  ['d', 86400],
];
const OUTCOMES = { fired: 'completed', failed: 'failed', skipped_missed: 'cancelled', skipped_overlap: 'cancelled' };

/** A schedule's timing as people say it: `0 3 * * * (Europe/Berlin)` or `every 15m`. */
export function timingText(schedule) {
  if (schedule.cron) return `${schedule.cron}${schedule.timezone === 'UTC' ? ' (UTC)' : ` (${schedule.timezone})`}`;
  const [unit, size] = [...UNITS].reverse().find(([, s]) => schedule.every % s === 0);
  return `every ${schedule.every / size}${unit}`;
}

/** `KEY=value` lines as workflow args (numbers and booleans typed as the run form types them); throws on a bad line. */
export function parseArgs(text) {
  const args = {};
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!line) continue;
    const eq = line.indexOf('=');
    if (eq < 1) throw new Error(`args line ${i + 1}: expected KEY=value, got "${line}"`);
    args[line.slice(0, eq).trim()] = typed(line.slice(eq + 1));
  }
  return args;
}

export async function render(root) {
  setTitle('Schedules');
  const listBox = h('div');
  const listError = alertBox(null);
  const newBtn = h(
    'button',
    {
      type: 'button',
      class: 'btn btn-sm btn-primary',
      onClick: () => {
        formCard.hidden = !formCard.hidden;
        if (!formCard.hidden) form.querySelector('input').focus();
      },
    },
    'New schedule',
  );
  const { form, formCard } = await createForm(() => draw());
  replace(root, formCard, listError, card('Schedules', listBox, { cls: 'flush', actions: [liveIndicator(), newBtn] }));
  let schedules = [];

  async function draw() {
    try {
      schedules = await api('/api/schedules');
    } catch (err) {
      showError(listError, err);
      return;
    }
    showError(listError, null);
    if (!schedules.length) {
      replace(
        listBox,
        emptyState(
          'No schedules yet',
          'A schedule runs a workflow (or a sweep of it) on a cron expression or every so often, fired by svc serve.',
          h(
            'button',
            {
              type: 'button',
              class: 'btn btn-primary',
              onClick: () => {
                formCard.hidden = false;
              },
            },
            'Add a schedule',
          ),
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
          { class: 'data schedules' },
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              h('th', null, 'Schedule'),
              h('th', null, 'Cluster'),
              h('th', null, 'When'),
              h('th', null, 'Next fire'),
              h('th', null, 'Last fire'),
              h('th', null, 'Enabled'),
            ),
          ),
          h('tbody', null, schedules.map(row)),
        ),
      ),
    );
    tick();
  }

  function row(s) {
    const toggle = h('input', { type: 'checkbox', checked: s.enabled, 'aria-label': `enable ${s.name}` });
    toggle.addEventListener('change', async () => {
      toggle.disabled = true;
      try {
        await api(`/api/schedules/${encodeURIComponent(s.name)}`, {
          method: 'PUT',
          body: { ...specOf(s), enabled: toggle.checked },
        });
        toast(`${s.name} ${toggle.checked ? 'enabled: the next fire counts from now' : 'disabled'}`, 'ok');
      } catch (err) {
        showError(listError, err);
      }
      await draw();
    });
    const last = s.last_run_id
      ? h('a', { href: `/runs/${s.last_run_id}`, class: 'mono' }, s.last_run_id.slice(0, 8))
      : s.last_sweep_id
        ? h('a', { href: `/sweeps/${s.last_sweep_id}` }, `sweep ${s.last_sweep_id}`)
        : null;
    return h(
      'tr',
      { dataset: { schedule: s.name, enabled: String(s.enabled) } },
      h(
        'td',
        { class: 'wrap' },
        h('strong', null, s.name),
        h(
          'div',
          { class: 'muted' },
          h('a', { href: `/workflows/${encodeURIComponent(s.workflow)}` }, s.workflow),
          s.sweep ? ' · sweep' : '',
          s.description ? ` · ${s.description}` : '',
        ),
      ),
      h(
        'td',
        {
          title: s.transport
            ? 'fires on this cluster, whatever the server default is then'
            : 'fires on the server default of the time',
        },
        h('span', { class: 'cluster-chip' }, s.transport || 'server default'),
      ),
      h(
        'td',
        { class: 'wrap' },
        h('div', { class: 'mono timing' }, timingText(s)),
        h(
          'div',
          { class: 'muted policies' },
          h('span', null, `missed: ${s.missed.replace('_', ' ')}`),
          ' · ',
          h('span', null, `overlap: ${s.overlap}`),
        ),
      ),
      h(
        'td',
        { class: 'next-fire', title: s.next_fire_at ? fmtTime(s.next_fire_at) : 'disabled: never fires' },
        s.next_fire_at
          ? [h('div', null, fmtTime(s.next_fire_at)), h('div', { class: 'muted', dataset: { at: s.next_fire_at } })]
          : h('span', { class: 'muted' }, '—'),
      ),
      h(
        'td',
        { title: s.last_error || (s.last_fire_at ? fmtTime(s.last_fire_at) : '') },
        s.last_outcome
          ? [
              h(
                'span',
                { class: `badge status-${OUTCOMES[s.last_outcome] || 'pending'}` },
                s.last_outcome.replace('_', ' '),
              ),
              ' ',
              last,
              h('div', { class: 'muted' }, agoSpan(s.last_fire_at), ` · ${s.fire_count} fired`),
              s.last_error ? h('div', { class: 'last-error' }, s.last_error) : null,
            ]
          : h('span', { class: 'muted' }, 'never fired'),
      ),
      h(
        'td',
        null,
        h(
          'div',
          { class: 'btn-group nowrap' },
          h('label', { class: 'check' }, toggle, s.enabled ? 'on' : 'off'),
          actionButton('Run now', () => runNow(s), { cls: 'btn btn-sm', errorBox: listError, busyLabel: 'Starting…' }),
          actionButton('Delete', () => remove(s), { cls: 'btn btn-sm btn-ghost-danger', errorBox: listError }),
        ),
      ),
    );
  }

  async function runNow(s) {
    const started = await api(`/api/schedules/${encodeURIComponent(s.name)}/run`, { method: 'POST' });
    toast(
      started.run_id
        ? `${s.name} fired: run ${started.run_id.slice(0, 8)}`
        : `${s.name} fired: sweep ${started.sweep_id}`,
      'ok',
    );
    await draw();
  }

  async function remove(s) {
    const ok = await confirmDialog({
      title: `Delete schedule ${s.name}?`,
      body: 'It will not fire again. Runs it started are kept.',
      confirmLabel: 'Delete schedule',
      danger: true,
    });
    if (!ok) return;
    await api(`/api/schedules/${encodeURIComponent(s.name)}`, { method: 'DELETE' });
    toast(`Schedule ${s.name} deleted`, 'ok');
    await draw();
  }

  function tick() {
    for (const el of listBox.querySelectorAll('[data-at]')) el.textContent = fmtAgo(el.dataset.at);
  }
  const ticker = setInterval(tick, 1000);
  const stop = live(['workflow_run.status_changed', 'sweep_run.status_changed'], () => draw(), { wait: 500 });
  await draw();
  return () => {
    clearInterval(ticker);
    stop();
  };
}

/** The spec fields of a schedule as shown (PUT takes the spec, not the state). */
function specOf(s) {
  const keys = [
    'name',
    'workflow',
    'cron',
    'every',
    'timezone',
    'args',
    'transport',
    'mount',
    'sweep',
    'enabled',
    'missed',
    'overlap',
    'description',
  ];
  return Object.fromEntries(keys.filter((k) => s[k] !== null && s[k] !== undefined).map((k) => [k, s[k]]));
}

async function createForm(onCreated) {
  const workflows = await api('/api/workflows').catch(() => []);
  const cluster = await clusterField({
    name: 'schedule-cluster',
    hint: 'it fires there, whatever the server default is then',
    onChange: () => drawSubmitLabel(),
  });
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  const name = patternRule(
    h('input', { name: 'name', required: true, maxlength: '64', placeholder: 'nightly' }),
    '[a-z0-9][a-z0-9_\\-]{0,63}',
    "1-64 lowercase letters, digits, '-' or '_', starting with a letter or digit",
  );
  const workflow = h(
    'select',
    { name: 'workflow', required: true },
    workflows.map((w) =>
      h(
        'option',
        { value: w.name },
        w.workflow_name && w.workflow_name !== w.name ? `${w.name} (${w.workflow_name})` : w.name,
      ),
    ),
  );
  const kind = h(
    'select',
    { name: 'timing' },
    h('option', { value: 'cron' }, 'cron expression'),
    h('option', { value: 'every' }, 'fixed interval'),
  );
  const cron = h('input', { name: 'cron', value: '0 3 * * *', spellcheck: 'false', class: 'mono' });
  const everyN = h('input', { name: 'every', type: 'number', min: '1', value: '15', 'aria-label': 'interval' });
  const everyUnit = h(
    'select',
    { name: 'every_unit', 'aria-label': 'interval unit' },
    UNITS.map(([u]) =>
      h('option', { value: u, selected: u === 'm' }, { s: 'seconds', m: 'minutes', h: 'hours', d: 'days' }[u]),
    ),
  );
  const timezone = h('input', { name: 'timezone', value: zone, list: 'time-zones', spellcheck: 'false' });
  const zones = h(
    'datalist',
    { id: 'time-zones' },
    (Intl.supportedValuesOf ? Intl.supportedValuesOf('timeZone') : ['UTC']).map((z) => h('option', { value: z })),
  );
  const args = h('textarea', { name: 'args', rows: '3', spellcheck: 'false', placeholder: 'lr=3e-4\nepochs=10' });
  const enabled = h('input', { type: 'checkbox', name: 'enabled', checked: true });
  const missed = h(
    'select',
    { name: 'missed' },
    h('option', { value: 'skip' }, 'skip them'),
    h('option', { value: 'run_once' }, 'run once when back'),
  );
  const overlap = h(
    'select',
    { name: 'overlap' },
    h('option', { value: 'skip' }, 'skip the fire'),
    h('option', { value: 'allow' }, 'start anyway'),
  );
  const description = h('input', { name: 'description', maxlength: '500', placeholder: 'optional' });
  const error = alertBox(null);
  const createBtn = h('button', { type: 'submit', class: 'btn btn-primary' });
  const drawSubmitLabel = () => {
    createBtn.textContent = `Create schedule on ${cluster.value()}`;
  };
  drawSubmitLabel();
  const cronField = field('Cron', cron, { hint: 'minute hour day-of-month month day-of-week, in the time zone' });
  const everyField = field('Every', h('div', { class: 'inline-inputs' }, everyN, everyUnit), {
    hint: 'at least 10 seconds',
  });
  const drawKind = () => {
    cronField.hidden = kind.value !== 'cron';
    everyField.hidden = kind.value !== 'every';
  };
  kind.addEventListener('change', drawKind);
  drawKind();

  const form = h(
    'form',
    { class: 'schedule-form', novalidate: true },
    h(
      'div',
      { class: 'form-grid' },
      field('Name', name),
      field('Workflow', workflow, {
        hint: workflows.length ? null : 'no workflows yet: add one on the Workflows page',
      }),
      cluster.element,
      field('Timing', kind),
      cronField,
      everyField,
      field('Time zone', timezone, { hint: 'IANA name; cron times are read in it' }),
    ),
    h(
      'div',
      { class: 'form-grid' },
      field('Missed fires (no server running)', missed),
      field('A fire while the last run still goes', overlap),
      field('Description', description),
    ),
    field('Arguments', args, { hint: "KEY=value per line; the workflow's own defaults fill the rest" }),
    h('label', { class: 'check' }, enabled, ' Enabled (fires on its timing from now)'),
    error,
    h(
      'div',
      { class: 'form-actions' },
      createBtn,
      h(
        'button',
        {
          type: 'button',
          class: 'btn',
          onClick: () => {
            formCard.hidden = true;
          },
        },
        'Close',
      ),
    ),
    zones,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    showFormError(form, error, null);
    const unit = UNITS.find(([u]) => u === everyUnit.value)[1];
    try {
      const body = {
        name: name.value.trim(),
        workflow: workflow.value,
        timezone: timezone.value.trim() || 'UTC',
        args: parseArgs(args.value),
        transport: cluster.value(),
        enabled: enabled.checked,
        missed: missed.value,
        overlap: overlap.value,
        description: description.value.trim(),
        ...(kind.value === 'cron' ? { cron: cron.value.trim() } : { every: Number(everyN.value) * unit }),
      };
      const created = await api('/api/schedules', { method: 'POST', body });
      const next = created.upcoming?.length ? `next fire ${fmtTime(created.upcoming[0])}` : 'disabled';
      toast(`Schedule ${created.name} created: ${next}`, 'ok');
      name.value = '';
      formCard.hidden = true;
      await onCreated();
    } catch (err) {
      showFormError(form, error, err);
    }
  });
  const formCard = card('New schedule', form);
  formCard.hidden = true;
  return { form, formCard };
}
