// The visual builder's form for one job: its name, command, resources, retries, environment and the jobs it runs
// after. Applying it changes the workflow document (workflow-editor/document.js); the editor writes the YAML.
import { h } from '../dom.js';
import { alertBox, field, showError } from '../ui.js';
import { descendants, parseDependency } from '../components/dag-layout.js';
import { docJobs, jobsOf, removeJob, replaceJob } from './document.js';

const DEPENDENCY_TYPES = ['afterok', 'afterany', 'afternotok', 'after'];

/**
 * jobForm(doc, name, onChanged(selected)) -> the form for job `name` of `doc`, or a hint when there is none.
 * `onChanged` runs after the document changed, with the job to select next (its new name; null once removed).
 */
export function jobForm(doc, name, onChanged) {
  const job = name && doc && Array.isArray(doc.jobs) ? doc.jobs.find((j) => j && j.name === name) : null;
  if (!job) return h('p', { class: 'hint' }, 'Select a job in the graph to edit its fields, or add one.');
  // "Runs after" offers no job that waits for this one (that would be a cycle), unless it is ticked already
  // (so a cycle written in the YAML can be unticked here).
  const below = descendants(jobsOf(doc), job.name);
  const ticked = new Set((job.depends_on || []).map((d) => parseDependency(d).job));
  const names = docJobs(doc)
    .filter((j) => j !== job)
    .map((j) => j.name);
  const others = names.filter((n) => !below.has(n) || ticked.has(n));
  const res = job.resources && typeof job.resources === 'object' ? job.resources : {};
  const env = job.environment && typeof job.environment === 'object' ? job.environment : {};
  const input = (value, attrs = {}) => h('input', { type: 'text', value: value ?? '', ...attrs });
  const nameIn = input(job.name, { required: true, maxlength: 64 });
  const commandText = Array.isArray(job.command) ? job.command.join(' ') : (job.command ?? '');
  const commandIn = h('textarea', { rows: 2, class: 'mono', value: commandText });
  const commandWasList = Array.isArray(job.command);
  const depBoxes = others.map((other) => {
    const existing = (job.depends_on || []).map(String).find((d) => parseDependency(d).job === other);
    const box = h('input', { type: 'checkbox', checked: Boolean(existing) });
    const kind = h(
      'select',
      { 'aria-label': `how ${job.name} depends on ${other}` },
      DEPENDENCY_TYPES.map((t) =>
        h(
          'option',
          {
            value: t,
            selected: existing ? parseDependency(existing).type === t : t === 'afterok',
          },
          t,
        ),
      ),
    );
    return { other, box, kind, el: h('label', { class: 'dep-choice' }, box, h('span', null, other), kind) };
  });
  const num = (value) => input(value, { inputmode: 'numeric', pattern: '[0-9]*' });
  const fields = {
    partition: input(res.partition),
    gpus_per_node: num(res.gpus_per_node),
    nodes: num(res.nodes),
    time_limit: input(res.time_limit, { placeholder: '1:00:00' }),
    memory_per_node: input(res.memory_per_node, { placeholder: '16G' }),
    retry: num(job.retry),
    retry_delay: num(job.retry_delay),
    work_dir: input(job.work_dir),
    conda: input(env.conda),
    container: input(env.container),
  };
  const formError = alertBox(null);
  const text = (k) => fields[k].value.trim();

  function apply() {
    const next = { ...job };
    const newName = nameIn.value.trim();
    if (!newName) {
      showError(formError, 'A job needs a name');
      return;
    }
    if (newName !== job.name && names.includes(newName)) {
      showError(formError, `There is already a job named ${newName}`);
      return;
    }
    const command = commandIn.value.trim();
    if (job.script_path && !command)
      delete next.command; // a script job: command and script_path exclude each other
    else if (command !== commandText || !commandWasList) next.command = command; // an untouched argv list stays a list
    const deps = depBoxes
      .filter((d) => d.box.checked)
      .map((d) => (d.kind.value === 'afterok' ? d.other : `${d.kind.value}:${d.other}`));
    if (deps.length) next.depends_on = deps;
    else delete next.depends_on;
    const resources = { ...res };
    for (const k of ['partition', 'time_limit', 'memory_per_node']) {
      if (text(k)) resources[k] = text(k);
      else delete resources[k];
    }
    for (const k of ['gpus_per_node', 'nodes']) {
      if (text(k)) resources[k] = Number(text(k));
      else delete resources[k];
    }
    if (Object.keys(resources).length) next.resources = resources;
    else delete next.resources;
    for (const k of ['retry', 'retry_delay']) {
      if (text(k)) next[k] = Number(text(k));
      else delete next[k];
    }
    if (text('work_dir')) next.work_dir = text('work_dir');
    else delete next.work_dir;
    const environment = { ...env };
    for (const k of ['conda', 'container']) {
      if (text(k)) environment[k] = text(k);
      else delete environment[k];
    }
    if (Object.keys(environment).length) next.environment = environment;
    else delete next.environment;
    next.name = newName;
    replaceJob(doc, job, next);
    onChanged(newName);
  }

  function remove() {
    removeJob(doc, job);
    onChanged(null);
  }

  const commandHint = job.script_path
    ? `This job runs the script ${job.script_path}`
    : 'A shell line; {{ arg }} templates are filled from the args';
  return h(
    'form',
    {
      class: 'job-editor',
      onSubmit: (e) => {
        e.preventDefault();
        apply();
      },
    },
    h(
      'div',
      { class: 'job-editor-head' },
      h('h3', null, `Job ${job.name}`),
      h('button', { type: 'button', class: 'btn btn-sm btn-ghost-danger', onClick: remove }, 'Remove job'),
    ),
    formError,
    h(
      'div',
      { class: 'form-grid' },
      field('Name', nameIn),
      field('Partition', fields.partition),
      field('GPUs per node', fields.gpus_per_node),
      field('Nodes', fields.nodes),
      field('Time limit', fields.time_limit),
      field('Memory per node', fields.memory_per_node),
      field('Retries', fields.retry),
      field('Retry delay (s)', fields.retry_delay),
      field('Work dir', fields.work_dir),
      field('Conda env', fields.conda),
      field('Container', fields.container),
    ),
    field('Command', commandIn, { hint: commandHint }),
    others.length
      ? h(
          'fieldset',
          { class: 'deps' },
          h('legend', null, 'Runs after'),
          depBoxes.map((d) => d.el),
        )
      : null,
    h(
      'div',
      { class: 'form-actions' },
      h('button', { type: 'submit', class: 'btn btn-primary btn-sm' }, 'Apply to YAML'),
    ),
  );
}
