// The workflow editor's Run panel: what to run (every job, a from/to range or one job), on which cluster, with
// which arguments; a dry run lists the jobs that would be submitted, Run saves the workflow and starts it.
import { h, replace } from '../dom.js';
import { api } from '../api.js';
import { alertBox, actionButton, field } from '../ui.js';
import { navigate } from '../router.js';
import { changedArgs, jobsOf, shownDefault } from './document.js';

const MODES = [
  ['all', 'Every job'],
  ['range', 'From / to'],
  ['single', 'One job'],
];

/**
 * runPanel({box, cluster, editor, onDryRun(names)}) -> {draw(), args()}. `editor` is the page's view of the
 * workflow: {state: {doc, valid, order}, text(), unsaved(), ensureSaved()}; `args()` the arguments changed from the
 * document's defaults (the sweep panel starts its cells with them too).
 */
export function runPanel({ box, cluster, editor, onDryRun }) {
  const runState = { mode: 'all', from: '', to: '', single: '', args: {} };
  const dryBox = h('div', { class: 'dry-run' });
  const runError = alertBox(null);
  const docArgs = () => {
    const doc = editor.state.doc;
    return doc?.args && typeof doc.args === 'object' ? doc.args : {};
  };
  const args = () => changedArgs(runState.args, docArgs());

  function argInputs() {
    const defaults = docArgs();
    const names = Object.keys(defaults);
    if (!names.length) return null;
    return h(
      'div',
      { class: 'form-grid' },
      names.map((name) => {
        const inputEl = h('input', { type: 'text', value: runState.args[name] ?? shownDefault(defaults[name]) });
        inputEl.addEventListener('input', () => {
          runState.args[name] = inputEl.value;
        });
        return field(name, inputEl, { hint: `default ${JSON.stringify(defaults[name])}` });
      }),
    );
  }

  function selection() {
    if (runState.mode === 'single' && runState.single) return { single_job: runState.single };
    if (runState.mode === 'range') return { from_job: runState.from || undefined, to_job: runState.to || undefined };
    return {};
  }

  function draw() {
    const order = editor.state.order || jobsOf(editor.state.doc).map((j) => j.name);
    const pick = (value, onChange, label) => {
      const sel = h(
        'select',
        { 'aria-label': label },
        h('option', { value: '' }, '—'),
        order.map((n) => h('option', { value: n, selected: n === value }, n)),
      );
      sel.addEventListener('change', () => onChange(sel.value));
      return sel;
    };
    const modes = h(
      'div',
      { class: 'segmented', role: 'radiogroup', 'aria-label': 'What to run' },
      MODES.map(([mode, label]) =>
        h(
          'button',
          {
            type: 'button',
            role: 'radio',
            'aria-checked': String(runState.mode === mode),
            class: runState.mode === mode ? 'active' : null,
            onClick: () => {
              runState.mode = mode;
              draw();
            },
          },
          label,
        ),
      ),
    );
    let selectors = null;
    if (runState.mode === 'range') {
      selectors = h(
        'div',
        { class: 'form-grid' },
        field(
          'From job',
          pick(
            runState.from,
            (v) => {
              runState.from = v;
            },
            'from job',
          ),
        ),
        field(
          'To job',
          pick(
            runState.to,
            (v) => {
              runState.to = v;
            },
            'to job',
          ),
        ),
      );
    } else if (runState.mode === 'single') {
      selectors = h(
        'div',
        { class: 'form-grid' },
        field(
          'Job',
          pick(
            runState.single,
            (v) => {
              runState.single = v;
            },
            'single job',
          ),
        ),
      );
    }
    const runBtn = actionButton(`Run on ${cluster.value()}`, runNow, {
      cls: 'btn btn-primary',
      errorBox: runError,
      busyLabel: 'Starting…',
    });
    const dryBtn = actionButton('Dry run', dryRun, { cls: 'btn', errorBox: runError });
    runBtn.disabled = !editor.state.valid;
    replace(
      box,
      h(
        'div',
        { class: 'run-form' },
        modes,
        h('div', { class: 'form-grid' }, cluster.element),
        selectors,
        argInputs(),
        h(
          'div',
          { class: 'form-actions' },
          dryBtn,
          runBtn,
          editor.unsaved() ? h('span', { class: 'hint' }, 'Run saves the workflow first') : null,
        ),
      ),
      runError,
      dryBox,
    );
  }

  async function dryRun() {
    const body = { yaml: editor.text(), args: args(), ...selection() };
    const answer = await api('/api/workflows/preview', { method: 'POST', body });
    if (!answer.valid) throw new Error(`The workflow is not valid: ${answer.errors.join('; ')}`);
    if (answer.selection_errors.length) throw new Error(answer.selection_errors.join('; '));
    const jobs = answer.jobs_to_execute;
    const command = (job) => (Array.isArray(job.command) ? job.command.join(' ') : job.command);
    replace(
      dryBox,
      h(
        'div',
        { class: 'dry-run-result' },
        h(
          'div',
          { class: 'dry-run-head' },
          h('strong', null, `Dry run: ${jobs.length} job${jobs.length === 1 ? '' : 's'} would be submitted`),
          h('span', { class: 'hint' }, ' in this order; nothing was submitted'),
        ),
        h(
          'table',
          { class: 'data' },
          h(
            'thead',
            null,
            h('tr', null, h('th', null, '#'), h('th', null, 'Job'), h('th', null, 'After'), h('th', null, 'Command')),
          ),
          h(
            'tbody',
            null,
            jobs.map((job, i) =>
              h(
                'tr',
                null,
                h('td', null, String(i + 1)),
                h('td', null, job.name),
                h('td', null, job.depends_on.join(', ') || '—'),
                h('td', { class: 'cmd', title: String(job.command) }, command(job)),
              ),
            ),
          ),
        ),
      ),
    );
    onDryRun(new Set(jobs.map((job) => job.name)));
  }

  async function runNow() {
    const name = await editor.ensureSaved();
    const body = { args: args(), ...selection(), transport: cluster.value() };
    const run = await api(`/api/workflows/${encodeURIComponent(name)}/run`, { method: 'POST', body });
    navigate(`/runs/${run.id}`);
  }

  return { draw, args };
}
