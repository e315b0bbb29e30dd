// Workflows: the list (with a sample to start from), and one workflow's page: a YAML editor validated as you
// type (errors at their lines), the DAG drawn from it, a visual builder that writes the same YAML, run / dry run
// with a from/to/single selection, a sweep launcher (matrix, max_parallel, fail_fast, max_failures) and the workflow's runs.
import { h, replace, fmtTime, fmtDuration, stateBadge, agoSpan } from '../dom.js';
import { api, errorText } from '../api.js';
import { card, alertBox, showError, showFormError, confirmDialog, field, actionButton, toast } from '../ui.js';
import { emptyState, guardLeaving, navigate, setTitle } from '../router.js';
import { live } from '../live.js';
import { dagView } from '../components/dag.js';
import { descendants, parseDependency } from '../components/dag-layout.js';
import { toYaml } from '../components/yaml.js';
import { liveIndicator } from '../events.js';
import { runOrigin } from './run.js';
import { clusterField, clusterFilter } from '../components/cluster-field.js';
import { chooseListed, listedCluster } from '../cluster.js';

export const SAMPLE = `name: diamond
args:
  message: hello
jobs:
  - name: prepare
    command: "echo {{ message }} from prepare; sleep 2"
  - name: left
    command: [bash, -c, "echo left branch; sleep 3"]
    depends_on: [prepare]
  - name: right
    command: "echo right branch; sleep 3"
    depends_on: [prepare]
  - name: join
    command: "echo both branches done"
    depends_on: [left, right]
`;

const BLANK = `name: my-workflow
jobs:
  - name: first
    command: "echo hello"
`;

const FILE_NAME = /^[A-Za-z0-9_-]{1,100}$/;

export async function render(root, params, query) {
  if (location.pathname.replace(/\/$/, '') === '/workflows') return renderList(root, query);
  const name = location.pathname.replace(/\/$/, '') === '/workflows/new' ? null : params.name;
  return renderEditor(root, name, query);
}

// -- the list ----------------------------------------------------------------------------------------------

function runsTable(runs, { showWorkflow = true } = {}) {
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data' },
    h('thead', null, h('tr', null, h('th', null, 'Run'), showWorkflow ? h('th', null, 'Workflow') : null, h('th', null, 'Cluster'), h('th', null, 'Status'),
      h('th', null, 'Jobs'), h('th', null, 'Started'), h('th', null, 'Took'), h('th', null, 'From'))),
    h('tbody', null, runs.map((run) => {
      const statuses = Object.values(run.job_statuses || {});
      const done = statuses.filter((s) => s === 'COMPLETED' || s === 'SKIPPED').length;
      const end = run.completed_at ? new Date(run.completed_at) : new Date();
      const took = run.started_at ? (end - new Date(run.started_at)) / 1000 : null;
      return h('tr', { dataset: { run: run.id } },
        h('td', null, h('a', { href: `/runs/${run.id}`, class: 'mono' }, run.id.slice(0, 8))),
        showWorkflow ? h('td', null, run.workflow_name) : null,
        h('td', null, h('span', { class: 'cluster-chip' }, run.transport)),
        h('td', null, stateBadge(run.status)),
        h('td', { class: 'num' }, `${done}/${statuses.length}`),
        h('td', { title: fmtTime(run.started_at) }, agoSpan(run.started_at)),
        h('td', null, fmtDuration(took)),
        h('td', null, runOrigin(run)));
    }))));
}

async function renderList(root, query) {
  const filterBox = h('span');
  let shownOn = await listedCluster(); // the tab's cluster ('' all): the pill and this filter are one choice
  const listBox = h('div');
  const runsBox = h('div');
  const listError = alertBox(null);
  replace(root,
    card('Workflows', [listError, listBox], {
      cls: 'flush',
      actions: [h('a', { class: 'btn btn-sm', href: '/workflows/new?blank=1' }, 'Blank workflow'),
        h('a', { class: 'btn btn-sm btn-primary', href: '/workflows/new' }, 'New workflow')],
    }),
    card('Recent runs', runsBox, { cls: 'flush', actions: [filterBox, liveIndicator()] }));

  try {
    const workflows = await api('/api/workflows');
    if (!workflows.length) {
      replace(listBox, emptyState('No workflows yet',
        'A workflow is a DAG of jobs in YAML. Start from the sample (four jobs in a diamond: one fans out to two, which join), edit it, and run it.',
        h('a', { class: 'btn btn-primary', href: '/workflows/new' }, 'Start from the sample'),
        h('a', { class: 'btn', href: '/workflows/new?blank=1' }, 'Start from a blank file')));
    } else {
      replace(listBox, h('div', { class: 'table-wrap' }, h('table', { class: 'data' },
        h('thead', null, h('tr', null, h('th', null, 'File'), h('th', null, 'Name'), h('th', null, 'Jobs'), h('th', null, 'Valid'))),
        h('tbody', null, workflows.map((wf) => h('tr', null,
          h('td', null, h('a', { href: `/workflows/${encodeURIComponent(wf.name)}` }, wf.name)),
          h('td', null, wf.workflow_name || '—'),
          h('td', { class: 'wrap' }, `${wf.job_count}`, wf.job_names.length ? h('span', { class: 'muted' }, ` · ${wf.job_names.slice(0, 6).join(', ')}${wf.job_names.length > 6 ? '…' : ''}`) : null),
          h('td', { class: 'wrap' }, wf.valid ? h('span', { class: 'badge state-COMPLETED' }, 'valid')
            : h('span', { class: 'badge state-FAILED', title: (wf.errors || []).join('\n') }, `${(wf.errors || []).length} problem${(wf.errors || []).length === 1 ? '' : 's'}`))))))));
    }
  } catch (err) {
    showError(listError, err);
  }

  async function drawRuns() {
    try {
      const all = await api('/api/workflows/runs', { query: { limit: 30 } });
      replace(filterBox, clusterFilter(all.map((r) => r.transport), shownOn, (name) => { shownOn = name; chooseListed(name); drawRuns(); }));
      const runs = shownOn ? all.filter((r) => r.transport === shownOn) : all;
      replace(runsBox, runs.length ? runsTable(runs)
        : emptyState('No runs yet', 'Open a workflow and press Run; its jobs show up here and change state live.'));
    } catch (err) {
      replace(runsBox, alertBox(err));
    }
  }
  const stop = live(['workflow_run.status_changed'], drawRuns, { wait: 400 });
  await drawRuns();
  return stop;
}

// -- the editor ------------------------------------------------------------------------------------------

/** The line numbers ("line 12: ..." / "line 3, column 5: ...") a validation message points at. */
export function errorLine(message) {
  const m = /^line (\d+)/.exec(message);
  return m ? Number(m[1]) : null;
}

function codeEditor(initial, onInput) {
  const gutter = h('div', { class: 'code-gutter', 'aria-hidden': 'true' });
  const marks = h('div', { class: 'code-marks', 'aria-hidden': 'true' });
  const area = h('textarea', { class: 'code-input', spellcheck: 'false', wrap: 'off', 'aria-label': 'Workflow YAML', autocapitalize: 'off', autocomplete: 'off' });
  area.value = initial;
  const wrap = h('div', { class: 'code-editor' }, gutter, h('div', { class: 'code-area' }, marks, area));
  let errorLines = new Map();
  function drawGutter() {
    const count = area.value.split('\n').length;
    const rows = [];
    for (let i = 1; i <= count; i += 1) {
      const msg = errorLines.get(i);
      rows.push(h('div', { class: msg ? 'has-error' : null, title: msg || null }, String(i)));
    }
    replace(gutter, rows);
    replace(marks, [...errorLines.entries()].filter(([line]) => line <= count).map(([line, msg]) => h('div', { class: 'code-mark', style: { top: `${(line - 1) * 20 + 10}px` }, title: msg })));
    gutter.scrollTop = area.scrollTop;
    marks.style.transform = `translateY(${-area.scrollTop}px)`;
  }
  area.addEventListener('input', () => { drawGutter(); onInput(area.value); });
  area.addEventListener('scroll', () => { gutter.scrollTop = area.scrollTop; marks.style.transform = `translateY(${-area.scrollTop}px)`; });
  area.addEventListener('keydown', (e) => {
    if (e.key === 'Tab' && !e.shiftKey && !e.ctrlKey && !e.altKey) { // two spaces; Escape then Tab leaves the editor
      if (area.dataset.escaped === '1') { area.dataset.escaped = ''; return; }
      e.preventDefault();
      area.setRangeText('  ', area.selectionStart, area.selectionEnd, 'end');
      drawGutter();
      onInput(area.value);
    } else if (e.key === 'Escape') {
      area.dataset.escaped = '1';
    }
  });
  drawGutter();
  return {
    el: wrap,
    area,
    get value() { return area.value; },
    set value(text) { area.value = text; drawGutter(); },
    setErrors(lines) { errorLines = lines; drawGutter(); },
    goToLine(line) {
      const lines = area.value.split('\n');
      const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
      area.focus();
      area.setSelectionRange(start, start + (lines[line - 1] || '').length);
      area.scrollTop = Math.max(0, (line - 4) * 20);
    },
  };
}

function jobsOf(doc) {
  if (!doc || !Array.isArray(doc.jobs)) return [];
  return doc.jobs.filter((j) => j && typeof j === 'object' && typeof j.name === 'string' && j.name)
    .map((j) => ({ name: j.name, depends_on: Array.isArray(j.depends_on) ? j.depends_on.map(String) : [] }));
}

/** A matrix value typed as the user meant it: numbers and booleans stay typed, the rest are strings. */
export function typed(text) {
  const t = text.trim();
  if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(t)) return Number(t);
  if (t === 'true' || t === 'false') return t === 'true';
  return t;
}

async function renderEditor(root, fileName, query) {
  let text = SAMPLE;
  let saved = null;
  if (fileName) {
    const wf = await api(`/api/workflows/${encodeURIComponent(fileName)}`);
    text = wf.raw_yaml;
    saved = wf.raw_yaml;
    setTitle(`Workflow ${fileName}`);
  } else if (query.blank) {
    text = BLANK;
  }

  const state = { doc: null, valid: false, errors: [], order: null, selected: null, seq: 0 };
  const opened = text;
  guardLeaving(() => (text !== (saved ?? opened)
    ? `Your edits to ${fileName ? `${fileName}.yaml` : 'this new workflow'} are not saved; leaving drops them.` : null));
  const dirtyBadge = h('span', { class: 'badge', hidden: true }, 'unsaved');
  const validity = h('span', { class: 'validity', role: 'status', 'aria-live': 'polite' });
  const errorList = h('ul', { class: 'error-list', 'aria-label': 'Problems' });
  const pageError = alertBox(null);
  const editor = codeEditor(text, onText);
  const jobForm = h('div', { class: 'job-form' });
  const dag = dagView({
    jobs: [],
    empty: 'The graph appears when the YAML has jobs',
    onSelect: (name) => { state.selected = name; drawJobForm(); },
    onConnect: (parent, child) => connect(parent, child),
    onEdgeClick: (edge) => disconnect(edge),
  });
  const runBox = h('div');
  const sweepBox = h('div');
  const runsBox = h('div');

  const saveBtn = actionButton('Save', save, { cls: 'btn btn-primary', errorBox: pageError, busyLabel: 'Saving…' });
  const deleteBtn = fileName ? actionButton('Delete', remove, { cls: 'btn btn-ghost-danger', errorBox: pageError }) : null;

  replace(root,
    h('div', { class: 'flow-head' },
      h('div', { class: 'flow-title' }, h('span', { class: 'flow-file' }, fileName ? `${fileName}.yaml` : 'New workflow'), dirtyBadge, validity),
      h('div', { class: 'btn-group' }, deleteBtn, saveBtn)),
    pageError,
    h('div', { class: 'flow-grid' },
      card('YAML', [editor.el, errorList], { cls: 'flow-editor-card' }),
      card('Graph', [
        h('div', { class: 'builder-bar' },
          h('button', { type: 'button', class: 'btn btn-sm', onClick: addJob }, '+ Add job'),
          h('span', { class: 'hint' }, 'Drag from a job\'s right dot to another job to make it wait for it; click an arrow to remove it. '
            + 'Builder changes rewrite the YAML (comments are not kept).')),
        dag, jobForm], { cls: 'flow-graph-card' })),
    h('div', { class: 'grid grid-2' },
      card('Run', runBox),
      card('Sweep', sweepBox)),
    card('Runs of this workflow', runsBox, { cls: 'flush', actions: liveIndicator() }));

  // -- validation as you type --------------------------------------------------------------------------
  let timer = null;
  function onText(value) {
    text = value;
    markDirty();
    clearTimeout(timer);
    validity.textContent = 'checking…';
    validity.className = 'validity';
    timer = setTimeout(check, 350);
  }

  function markDirty() {
    dirtyBadge.hidden = saved !== null && text === saved;
    if (saved === null) dirtyBadge.hidden = false;
  }

  async function check() {
    const seq = ++state.seq;
    const body = { yaml: text };
    try {
      const [validated, preview] = await Promise.all([
        api('/api/workflows/validate', { method: 'POST', body }),
        api('/api/workflows/preview', { method: 'POST', body }),
      ]);
      if (seq !== state.seq) return;
      state.valid = validated.valid;
      state.errors = validated.valid ? [] : validated.errors || [];
      state.order = preview.order;
      if (preview.document) state.doc = preview.document;
      else if (!validated.valid) state.doc = null;
      drawValidation();
      drawGraph();
      drawRunForm();
      drawSweepForm();
    } catch (err) {
      if (seq !== state.seq) return;
      state.valid = false;
      state.errors = [errorText(err)];
      drawValidation();
    }
  }

  function drawValidation() {
    const lines = new Map();
    for (const msg of state.errors) {
      const line = errorLine(msg);
      if (line) lines.set(line, lines.has(line) ? `${lines.get(line)}\n${msg}` : msg);
    }
    editor.setErrors(lines);
    validity.className = `validity ${state.valid ? 'is-valid' : 'is-invalid'}`;
    validity.textContent = state.valid ? '✓ valid' : `${state.errors.length} problem${state.errors.length === 1 ? '' : 's'}`;
    replace(errorList, state.errors.map((msg) => {
      const line = errorLine(msg);
      return h('li', null, line ? h('button', { type: 'button', class: 'linklike', onClick: () => editor.goToLine(line) }, msg) : msg);
    }));
  }

  function drawGraph() {
    const jobs = jobsOf(state.doc);
    const key = JSON.stringify(jobs);
    if (key !== dag.dataset.key) {
      dag.dataset.key = key;
      dag.setJobs(jobs);
    }
    const raw = Array.isArray(state.doc && state.doc.jobs) ? state.doc.jobs : [];
    dag.update({}, Object.fromEntries(raw.filter((j) => j && j.name).map((j) => {
      const command = j.script_path ? `script ${j.script_path}` : Array.isArray(j.command) ? j.command.join(' ') : String(j.command ?? '');
      return [j.name, command.length > 22 ? `${command.slice(0, 21)}…` : command];
    })));
    if (state.selected && !jobs.some((j) => j.name === state.selected)) state.selected = null;
    dag.select(state.selected);
    drawJobForm();
  }

  // -- the visual builder: edit the document, write the YAML, validate it like typed text -----------------
  function docJobs() {
    if (!state.doc || typeof state.doc !== 'object') state.doc = { name: 'my-workflow', jobs: [] };
    if (!Array.isArray(state.doc.jobs)) state.doc.jobs = [];
    return state.doc.jobs;
  }

  function writeBack() {
    const yaml = toYaml(state.doc);
    editor.value = yaml;
    onText(yaml);
    clearTimeout(timer);
    check();
  }

  function addJob() {
    const jobs = docJobs();
    let n = jobs.length + 1;
    while (jobs.some((j) => j.name === `job${n}`)) n += 1;
    const job = { name: `job${n}`, command: 'echo hello' }; // independent: dependencies are drawn or ticked
    jobs.push(job);
    state.selected = job.name;
    writeBack();
  }

  function reaches(from, to) {
    const parents = new Map(docJobs().map((j) => [j.name, (j.depends_on || []).map((d) => parseDependency(d).job)]));
    const stack = [from];
    const seen = new Set();
    while (stack.length) {
      const cur = stack.pop();
      if (cur === to) return true;
      if (seen.has(cur)) continue;
      seen.add(cur);
      stack.push(...(parents.get(cur) || []));
    }
    return false;
  }

  function connect(parent, child) {
    const job = docJobs().find((j) => j.name === child);
    if (!job) return;
    const deps = (job.depends_on || []).map(String);
    if (deps.some((d) => parseDependency(d).job === parent)) return;
    if (reaches(parent, child)) {
      toast(`${parent} already waits for ${child}: that dependency would make a cycle`, 'error');
      return;
    }
    job.depends_on = [...deps, parent];
    writeBack();
  }

  function disconnect(edge) {
    const job = docJobs().find((j) => j.name === edge.to);
    if (!job) return;
    job.depends_on = (job.depends_on || []).filter((d) => parseDependency(d).job !== edge.from);
    if (!job.depends_on.length) delete job.depends_on;
    writeBack();
  }

  function drawJobForm() {
    const job = state.selected && state.doc && Array.isArray(state.doc.jobs) ? state.doc.jobs.find((j) => j && j.name === state.selected) : null;
    if (!job) {
      replace(jobForm, h('p', { class: 'hint' }, 'Select a job in the graph to edit its fields, or add one.'));
      return;
    }
    // "Runs after" offers no job that waits for this one (that would be a cycle), unless it is ticked already
    // (so a cycle written in the YAML can be unticked here).
    const below = descendants(jobsOf(state.doc), job.name);
    const ticked = new Set((job.depends_on || []).map((d) => parseDependency(d).job));
    const names = docJobs().filter((j) => j !== job).map((j) => j.name);
    const others = names.filter((n) => !below.has(n) || ticked.has(n));
    const res = job.resources && typeof job.resources === 'object' ? job.resources : {};
    const env = job.environment && typeof job.environment === 'object' ? job.environment : {};
    const input = (value, attrs = {}) => h('input', { type: 'text', value: value ?? '', ...attrs });
    const nameIn = input(job.name, { required: true, maxlength: 64 });
    const commandIn = h('textarea', { rows: 2, class: 'mono', value: Array.isArray(job.command) ? job.command.join(' ') : (job.command ?? '') });
    const commandWasList = Array.isArray(job.command);
    const depBoxes = others.map((other) => {
      const existing = (job.depends_on || []).map(String).find((d) => parseDependency(d).job === other);
      const box = h('input', { type: 'checkbox', checked: Boolean(existing) });
      const kind = h('select', { 'aria-label': `how ${job.name} depends on ${other}` },
        ['afterok', 'afterany', 'afternotok', 'after'].map((t) => h('option', { value: t, selected: existing ? parseDependency(existing).type === t : t === 'afterok' }, t)));
      return { other, box, kind, el: h('label', { class: 'dep-choice' }, box, h('span', null, other), kind) };
    });
    const num = (value) => input(value, { inputmode: 'numeric', pattern: '[0-9]*' });
    const fields = {
      partition: input(res.partition), gpus_per_node: num(res.gpus_per_node), nodes: num(res.nodes),
      time_limit: input(res.time_limit, { placeholder: '1:00:00' }), memory_per_node: input(res.memory_per_node, { placeholder: '16G' }),
      retry: num(job.retry), retry_delay: num(job.retry_delay), work_dir: input(job.work_dir), conda: input(env.conda), container: input(env.container),
    };
    const formError = alertBox(null);

    function apply() {
      const next = { ...job };
      const newName = nameIn.value.trim();
      if (!newName) { showError(formError, 'A job needs a name'); return; }
      if (newName !== job.name && names.includes(newName)) { showError(formError, `There is already a job named ${newName}`); return; }
      const command = commandIn.value.trim();
      const oldCommand = Array.isArray(job.command) ? job.command.join(' ') : (job.command ?? '');
      if (job.script_path && !command) delete next.command; // a script job: command and script_path exclude each other
      else if (command !== oldCommand || !commandWasList) next.command = command; // an untouched argv list stays a list
      const deps = depBoxes.filter((d) => d.box.checked).map((d) => (d.kind.value === 'afterok' ? d.other : `${d.kind.value}:${d.other}`));
      if (deps.length) next.depends_on = deps; else delete next.depends_on;
      const resources = { ...res };
      for (const k of ['partition', 'time_limit', 'memory_per_node']) { if (fields[k].value.trim()) resources[k] = fields[k].value.trim(); else delete resources[k]; }
      for (const k of ['gpus_per_node', 'nodes']) { if (fields[k].value.trim()) resources[k] = Number(fields[k].value); else delete resources[k]; }
      if (Object.keys(resources).length) next.resources = resources; else delete next.resources;
      for (const k of ['retry', 'retry_delay']) { if (fields[k].value.trim()) next[k] = Number(fields[k].value); else delete next[k]; }
      if (fields.work_dir.value.trim()) next.work_dir = fields.work_dir.value.trim(); else delete next.work_dir;
      const environment = { ...env };
      for (const k of ['conda', 'container']) { if (fields[k].value.trim()) environment[k] = fields[k].value.trim(); else delete environment[k]; }
      if (Object.keys(environment).length) next.environment = environment; else delete next.environment;
      next.name = newName;
      const jobs = docJobs();
      jobs[jobs.indexOf(job)] = next;
      if (newName !== job.name) {
        for (const other of jobs) {
          if (!Array.isArray(other.depends_on)) continue;
          other.depends_on = other.depends_on.map((d) => {
            const dep = parseDependency(d);
            if (dep.job !== job.name) return d;
            return String(d).includes(':') ? `${dep.type}:${newName}` : newName;
          });
        }
      }
      state.selected = newName;
      writeBack();
    }

    function removeJob() {
      const jobs = docJobs();
      jobs.splice(jobs.indexOf(job), 1);
      for (const other of jobs) {
        if (!Array.isArray(other.depends_on)) continue;
        other.depends_on = other.depends_on.filter((d) => parseDependency(d).job !== job.name);
        if (!other.depends_on.length) delete other.depends_on;
      }
      state.selected = null;
      writeBack();
    }

    const form = h('form', { class: 'job-editor', onSubmit: (e) => { e.preventDefault(); apply(); } },
      h('div', { class: 'job-editor-head' }, h('h3', null, `Job ${job.name}`),
        h('button', { type: 'button', class: 'btn btn-sm btn-ghost-danger', onClick: removeJob }, 'Remove job')),
      formError,
      h('div', { class: 'form-grid' }, field('Name', nameIn), field('Partition', fields.partition), field('GPUs per node', fields.gpus_per_node),
        field('Nodes', fields.nodes), field('Time limit', fields.time_limit), field('Memory per node', fields.memory_per_node),
        field('Retries', fields.retry), field('Retry delay (s)', fields.retry_delay), field('Work dir', fields.work_dir),
        field('Conda env', fields.conda), field('Container', fields.container)),
      field('Command', commandIn, { hint: job.script_path ? `This job runs the script ${job.script_path}` : 'A shell line; {{ arg }} templates are filled from the args' }),
      others.length ? h('fieldset', { class: 'deps' }, h('legend', null, 'Runs after'), depBoxes.map((d) => d.el)) : null,
      h('div', { class: 'form-actions' }, h('button', { type: 'submit', class: 'btn btn-primary btn-sm' }, 'Apply to YAML')));
    replace(jobForm, form);
  }

  // -- run and dry run ----------------------------------------------------------------------------------
  const runState = { mode: 'all', from: '', to: '', single: '', args: {} };
  const runCluster = await clusterField({ name: 'run-cluster', onChange: () => drawRunForm() });
  const sweepCluster = await clusterField({ name: 'sweep-cluster', onChange: () => drawSweepForm() });
  const dryBox = h('div', { class: 'dry-run' });
  const runError = alertBox(null);

  function argInputs(target) {
    const args = state.doc && state.doc.args && typeof state.doc.args === 'object' ? state.doc.args : {};
    const names = Object.keys(args);
    if (!names.length) return null;
    return h('div', { class: 'form-grid' }, names.map((name) => {
      const inputEl = h('input', { type: 'text', value: target[name] ?? (typeof args[name] === 'object' ? JSON.stringify(args[name]) : String(args[name])) });
      inputEl.addEventListener('input', () => { target[name] = inputEl.value; });
      return field(name, inputEl, { hint: `default ${JSON.stringify(args[name])}` });
    }));
  }

  function changedArgs(target) {
    const defaults = (state.doc && state.doc.args) || {};
    const out = {};
    for (const [name, value] of Object.entries(target)) {
      if (value === undefined) continue;
      const shown = typeof defaults[name] === 'object' ? JSON.stringify(defaults[name]) : String(defaults[name]);
      if (value !== shown) out[name] = typed(value);
    }
    return Object.keys(out).length ? out : undefined;
  }

  function selection() {
    if (runState.mode === 'single' && runState.single) return { single_job: runState.single };
    if (runState.mode === 'range') return { from_job: runState.from || undefined, to_job: runState.to || undefined };
    return {};
  }

  function drawRunForm() {
    const order = state.order || jobsOf(state.doc).map((j) => j.name);
    const pick = (value, onChange, label) => {
      const sel = h('select', { 'aria-label': label }, h('option', { value: '' }, '—'), order.map((n) => h('option', { value: n, selected: n === value }, n)));
      sel.addEventListener('change', () => onChange(sel.value));
      return sel;
    };
    const modes = h('div', { class: 'segmented', role: 'radiogroup', 'aria-label': 'What to run' },
      [['all', 'Every job'], ['range', 'From / to'], ['single', 'One job']].map(([mode, label]) => h('button', {
        type: 'button', role: 'radio', 'aria-checked': String(runState.mode === mode), class: runState.mode === mode ? 'active' : null,
        onClick: () => { runState.mode = mode; drawRunForm(); },
      }, label)));
    const selectors = runState.mode === 'range'
      ? h('div', { class: 'form-grid' }, field('From job', pick(runState.from, (v) => { runState.from = v; }, 'from job')), field('To job', pick(runState.to, (v) => { runState.to = v; }, 'to job')))
      : runState.mode === 'single' ? h('div', { class: 'form-grid' }, field('Job', pick(runState.single, (v) => { runState.single = v; }, 'single job'))) : null;
    const runBtn = actionButton(`Run on ${runCluster.value()}`, runNow, { cls: 'btn btn-primary', errorBox: runError, busyLabel: 'Starting…' });
    const dryBtn = actionButton('Dry run', dryRun, { cls: 'btn', errorBox: runError });
    runBtn.disabled = !state.valid;
    replace(runBox,
      h('div', { class: 'run-form' }, modes, h('div', { class: 'form-grid' }, runCluster.element), selectors, argInputs(runState.args),
        h('div', { class: 'form-actions' }, dryBtn, runBtn, !fileName || text !== saved ? h('span', { class: 'hint' }, 'Run saves the workflow first') : null)),
      runError, dryBox);
  }

  async function dryRun() {
    const answer = await api('/api/workflows/preview', { method: 'POST', body: { yaml: text, args: changedArgs(runState.args), ...selection() } });
    if (!answer.valid) throw new Error(`The workflow is not valid: ${answer.errors.join('; ')}`);
    if (answer.selection_errors.length) throw new Error(answer.selection_errors.join('; '));
    const jobs = answer.jobs_to_execute;
    replace(dryBox, h('div', { class: 'dry-run-result' },
      h('div', { class: 'dry-run-head' }, h('strong', null, `Dry run: ${jobs.length} job${jobs.length === 1 ? '' : 's'} would be submitted`), h('span', { class: 'hint' }, ' in this order; nothing was submitted')),
      h('table', { class: 'data' }, h('thead', null, h('tr', null, h('th', null, '#'), h('th', null, 'Job'), h('th', null, 'After'), h('th', null, 'Command'))),
        h('tbody', null, jobs.map((job, i) => h('tr', null, h('td', null, String(i + 1)), h('td', null, job.name),
          h('td', null, job.depends_on.join(', ') || '—'), h('td', { class: 'cmd', title: String(job.command) }, Array.isArray(job.command) ? job.command.join(' ') : job.command)))))));
    dag.update(Object.fromEntries(jobsOf(state.doc).map((j) => [j.name, jobs.some((x) => x.name === j.name) ? 'WAITING' : 'SKIPPED'])));
  }

  async function ensureSaved() {
    if (fileName && text === saved) return fileName;
    await save();
    return fileName;
  }

  async function runNow() {
    const name = await ensureSaved();
    const body = { args: changedArgs(runState.args), ...selection(), transport: runCluster.value() };
    const run = await api(`/api/workflows/${encodeURIComponent(name)}/run`, { method: 'POST', body });
    navigate(`/runs/${run.id}`);
  }

  // -- sweeps -------------------------------------------------------------------------------------------
  const sweepState = { axes: [], maxParallel: 2, failFast: false, maxFailures: '', args: {} };
  const sweepError = alertBox(null);

  function cellCount() {
    const sizes = sweepState.axes.filter((a) => a.name.trim()).map((a) => a.values.split(',').filter((v) => v.trim()).length);
    return sizes.length ? sizes.reduce((p, n) => p * n, 1) : 0;
  }

  function drawSweepForm() {
    const argNames = Object.keys((state.doc && state.doc.args) || {});
    if (!sweepState.axes.length) sweepState.axes.push({ name: argNames[0] || '', values: '' });
    const count = h('span', { class: 'cell-count' });
    const updateCount = () => { const n = cellCount(); count.textContent = `${n} cell${n === 1 ? '' : 's'}`; };
    const rows = sweepState.axes.map((axis, i) => {
      const nameIn = h('input', { type: 'text', value: axis.name, list: 'sweep-args', placeholder: 'argument', 'aria-label': `axis ${i + 1} argument` });
      const valuesIn = h('input', { type: 'text', value: axis.values, placeholder: '0.1, 0.01, 0.001', 'aria-label': `axis ${i + 1} values` });
      nameIn.addEventListener('input', () => { axis.name = nameIn.value; updateCount(); });
      valuesIn.addEventListener('input', () => { axis.values = valuesIn.value; updateCount(); });
      return h('div', { class: 'matrix-row' }, nameIn, valuesIn,
        h('button', { type: 'button', class: 'btn btn-sm', 'aria-label': `remove axis ${i + 1}`, onClick: () => { sweepState.axes.splice(i, 1); drawSweepForm(); } }, '✕'));
    });
    const parallel = h('input', { type: 'number', name: 'max_parallel', dataset: { field: 'sweep.max_parallel' }, min: 1, max: 1000, value: sweepState.maxParallel });
    parallel.addEventListener('input', () => { sweepState.maxParallel = Number(parallel.value) || 1; });
    const failFast = h('input', { type: 'checkbox', checked: sweepState.failFast });
    failFast.addEventListener('change', () => { sweepState.failFast = failFast.checked; });
    const maxFailures = h('input', { type: 'number', name: 'max_failures', dataset: { field: 'sweep.max_failures' }, min: 0, max: 1000, value: sweepState.maxFailures, placeholder: 'never stop' });
    maxFailures.addEventListener('input', () => { sweepState.maxFailures = maxFailures.value; });
    const startBtn = actionButton(`Start sweep on ${sweepCluster.value()}`, startSweep, { cls: 'btn btn-primary', errorBox: sweepError, busyLabel: 'Starting…' });
    startBtn.disabled = !state.valid;
    replace(sweepBox,
      h('p', { class: 'hint' }, 'Run the workflow once per combination of argument values (the matrix); each cell is a run.'),
      h('datalist', { id: 'sweep-args' }, argNames.map((n) => h('option', { value: n }))),
      h('div', { class: 'matrix' }, h('div', { class: 'matrix-row matrix-head' }, h('span', null, 'Argument'), h('span', null, 'Values (comma separated)'), h('span')), rows),
      h('button', { type: 'button', class: 'btn btn-sm', onClick: () => { sweepState.axes.push({ name: '', values: '' }); drawSweepForm(); } }, '+ Add axis'),
      h('div', { class: 'form-grid sweep-options' }, sweepCluster.element, field('Max parallel cells', parallel),
        field('Max failures', maxFailures, { hint: 'once more cells failed, the rest is cancelled' }),
        h('label', { class: 'check' }, failFast, 'Fail fast (stop launching cells after the first failure)')),
      h('div', { class: 'form-actions' }, startBtn, count),
      sweepError);
    updateCount();
  }

  async function startSweep() {
    const matrix = {};
    for (const axis of sweepState.axes) {
      if (!axis.name.trim()) continue;
      matrix[axis.name.trim()] = axis.values.split(',').filter((v) => v.trim()).map(typed);
    }
    if (!Object.keys(matrix).length) throw new Error('Give at least one argument and its values');
    const name = await ensureSaved();
    const spec = { matrix, max_parallel: sweepState.maxParallel, fail_fast: sweepState.failFast };
    if (String(sweepState.maxFailures).trim() !== '') spec.max_failures = Number(sweepState.maxFailures);
    showFormError(sweepBox, sweepError, null);
    let sweep;
    try {
      sweep = await api(`/api/workflows/${encodeURIComponent(name)}/run`, {
        method: 'POST',
        body: { args: changedArgs(runState.args), sweep: spec, transport: sweepCluster.value() },
      });
    } catch (err) {
      if (!err.fields || !err.fields.length) throw err;
      showFormError(sweepBox, sweepError, err); // each refused option said next to its field
      return;
    }
    navigate(`/sweeps/${sweep.id}`);
  }

  // -- save / delete ------------------------------------------------------------------------------------
  async function save() {
    let target = fileName;
    if (!target) {
      const wanted = state.doc && typeof state.doc.name === 'string' ? state.doc.name : '';
      if (!FILE_NAME.test(wanted)) {
        throw new Error(`The file is named after the workflow's name; "${wanted}" cannot be a file name (letters, digits, - and _ only)`);
      }
      const existing = await api('/api/workflows');
      if (existing.some((wf) => wf.name === wanted)) throw new Error(`A workflow file named ${wanted} exists already: open it from the list, or rename this one`);
      target = wanted;
    }
    await api('/api/workflows/upload', { method: 'POST', body: { yaml: text, filename: `${target}.yaml` } });
    saved = text;
    markDirty();
    toast(`Saved ${target}.yaml`, 'ok');
    if (!fileName) {
      fileName = target;
      navigate(`/workflows/${encodeURIComponent(target)}`, { replace: true });
    }
  }

  async function remove() {
    const ok = await confirmDialog({ title: `Delete ${fileName}.yaml?`, body: 'The file is removed from the workflows directory. Its past runs stay listed.', confirmLabel: 'Delete', danger: true });
    if (!ok) return;
    await api(`/api/workflows/${encodeURIComponent(fileName)}`, { method: 'DELETE' });
    toast(`Deleted ${fileName}.yaml`, 'ok');
    navigate('/workflows');
  }

  // -- runs of this workflow ----------------------------------------------------------------------------
  async function drawRuns() {
    const workflowName = state.doc && state.doc.name;
    if (!fileName || !workflowName) {
      replace(runsBox, emptyState('Not run yet', 'Save the workflow and press Run; its runs are listed here.'));
      return;
    }
    try {
      const runs = await api('/api/workflows/runs', { query: { workflow: workflowName, limit: 20 } });
      replace(runsBox, runs.length ? runsTable(runs, { showWorkflow: false }) : emptyState('Not run yet', 'Press Run above; the run page shows every job turning state live.'));
    } catch (err) {
      replace(runsBox, alertBox(err));
    }
  }

  const stop = live(['workflow_run.status_changed'], (events) => {
    if (events.some((e) => e.type === 'resync' || (state.doc && e.payload.workflow_name === state.doc.name))) drawRuns();
  }, { wait: 400 });
  markDirty();
  await check();
  drawRunForm();
  drawSweepForm();
  await drawRuns();
  return () => { stop(); clearTimeout(timer); };
}
