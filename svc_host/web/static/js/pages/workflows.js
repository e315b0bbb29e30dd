// Workflows: the list (with a sample to start from), and one workflow's page: a YAML editor validated as you
// type (errors at their lines), the DAG drawn from it, a visual builder that writes the same YAML, run / dry run
// with a from/to/single selection, a sweep launcher and the workflow's runs. The editor's parts are modules of
// their own under workflow-editor/ (the document's rules, the YAML field, the job form, the Run and Sweep panels).
import { h, replace } from '../dom.js';
import { api, errorText } from '../api.js';
import { card, alertBox, showError, confirmDialog, actionButton, toast } from '../ui.js';
import { emptyState, guardLeaving, navigate, setTitle } from '../router.js';
import { live } from '../live.js';
import { dagView } from '../components/dag.js';
import { toYaml } from '../components/yaml.js';
import { liveIndicator } from '../events.js';
import { clusterField, clusterFilter } from '../components/cluster-field.js';
import { chooseListed, listedCluster } from '../cluster.js';
import { runsTable } from '../components/runs-table.js';
import { codeEditor } from '../workflow-editor/code-editor.js';
import { jobForm } from '../workflow-editor/job-form.js';
import { runPanel } from '../workflow-editor/run-form.js';
import { sweepPanel } from '../workflow-editor/sweep-form.js';
import {
  BLANK,
  FILE_NAME,
  SAMPLE,
  addJob,
  commandSummary,
  connect,
  disconnect,
  errorLine,
  errorsByLine,
  jobsOf,
} from '../workflow-editor/document.js';

export async function render(root, params, query) {
  if (location.pathname.replace(/\/$/, '') === '/workflows') return renderList(root);
  const name = location.pathname.replace(/\/$/, '') === '/workflows/new' ? null : params.name;
  return renderEditor(root, name, query);
}

// -- the list ----------------------------------------------------------------------------------------------

async function renderList(root) {
  const filterBox = h('span');
  let shownOn = await listedCluster(); // the tab's cluster ('' all): the pill and this filter are one choice
  const listBox = h('div');
  const runsBox = h('div');
  const listError = alertBox(null);
  replace(
    root,
    card('Workflows', [listError, listBox], {
      cls: 'flush',
      actions: [
        h('a', { class: 'btn btn-sm', href: '/workflows/new?blank=1' }, 'Blank workflow'),
        h('a', { class: 'btn btn-sm btn-primary', href: '/workflows/new' }, 'New workflow'),
      ],
    }),
    card('Recent runs', runsBox, { cls: 'flush', actions: [filterBox, liveIndicator()] }),
  );

  try {
    const workflows = await api('/api/workflows');
    if (!workflows.length) {
      replace(
        listBox,
        emptyState(
          'No workflows yet',
          'A workflow is a DAG of jobs in YAML. Start from the sample (four jobs in a diamond: one fans out to two, ' +
            'which join), edit it, and run it.',
          h('a', { class: 'btn btn-primary', href: '/workflows/new' }, 'Start from the sample'),
          h('a', { class: 'btn', href: '/workflows/new?blank=1' }, 'Start from a blank file'),
        ),
      );
    } else {
      replace(
        listBox,
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'data' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                h('th', null, 'File'),
                h('th', null, 'Name'),
                h('th', null, 'Jobs'),
                h('th', null, 'Valid'),
              ),
            ),
            h(
              'tbody',
              null,
              workflows.map((wf) =>
                h(
                  'tr',
                  null,
                  h('td', null, h('a', { href: `/workflows/${encodeURIComponent(wf.name)}` }, wf.name)),
                  h('td', null, wf.workflow_name || '—'),
                  h(
                    'td',
                    { class: 'wrap' },
                    `${wf.job_count}`,
                    wf.job_names.length
                      ? h(
                          'span',
                          { class: 'muted' },
                          ` · ${wf.job_names.slice(0, 6).join(', ')}${wf.job_names.length > 6 ? '…' : ''}`,
                        )
                      : null,
                  ),
                  h(
                    'td',
                    { class: 'wrap' },
                    wf.valid
                      ? h('span', { class: 'badge state-COMPLETED' }, 'valid')
                      : h(
                          'span',
                          { class: 'badge state-FAILED', title: (wf.errors || []).join('\n') },
                          `${(wf.errors || []).length} problem${(wf.errors || []).length === 1 ? '' : 's'}`,
                        ),
                  ),
                ),
              ),
            ),
          ),
        ),
      );
    }
  } catch (err) {
    showError(listError, err);
  }

  async function drawRuns() {
    try {
      const all = await api('/api/workflows/runs', { query: { limit: 30 } });
      replace(
        filterBox,
        clusterFilter(
          all.map((r) => r.transport),
          shownOn,
          (name) => {
            shownOn = name;
            chooseListed(name);
            drawRuns();
          },
        ),
      );
      const runs = shownOn ? all.filter((r) => r.transport === shownOn) : all;
      replace(
        runsBox,
        runs.length
          ? runsTable(runs)
          : all.length
            ? emptyState(
                `No runs on ${shownOn}`,
                'Runs on the other clusters show with "All clusters", here or in the top bar.',
              )
            : emptyState('No runs yet', 'Open a workflow and press Run; its jobs show up here and change state live.'),
      );
    } catch (err) {
      replace(runsBox, alertBox(err));
    }
  }
  const stop = live(['workflow_run.status_changed'], drawRuns, { wait: 400 });
  await drawRuns();
  return stop;
}

// -- the editor ------------------------------------------------------------------------------------------

/** One workflow's page: the YAML field and the graph kept in step, the panels, saving and the runs. */
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
  guardLeaving(() =>
    text !== (saved ?? opened)
      ? `Your edits to ${fileName ? `${fileName}.yaml` : 'this new workflow'} are not saved; leaving drops them.`
      : null,
  );
  const dirtyBadge = h('span', { class: 'badge', hidden: true }, 'unsaved');
  const validity = h('span', { class: 'validity', role: 'status', 'aria-live': 'polite' });
  const errorList = h('ul', { class: 'error-list', 'aria-label': 'Problems' });
  const pageError = alertBox(null);
  const editor = codeEditor(text, onText);
  const jobFormBox = h('div', { class: 'job-form' });
  const dag = dagView({
    jobs: [],
    empty: 'The graph appears when the YAML has jobs',
    onSelect: (name) => {
      state.selected = name;
      drawJobForm();
    },
    onConnect: (parent, child) => {
      const done = connect(builderDoc(), parent, child);
      if (done === 'cycle') toast(`${parent} already waits for ${child}: that dependency would make a cycle`, 'error');
      if (done === 'added') writeBack();
    },
    onEdgeClick: (edge) => {
      if (disconnect(builderDoc(), edge.from, edge.to)) writeBack();
    },
  });
  const runBox = h('div');
  const sweepBox = h('div');
  const runsBox = h('div');

  // What the Run and Sweep panels see of this page.
  const page = {
    state,
    text: () => text,
    unsaved: () => !fileName || text !== saved,
    ensureSaved: async () => {
      if (fileName && text === saved) return fileName;
      await save();
      return fileName;
    },
  };
  const runs = runPanel({
    box: runBox,
    cluster: await clusterField({ name: 'run-cluster', onChange: () => runs.draw() }),
    editor: page,
    onDryRun: (chosen) =>
      dag.update(
        Object.fromEntries(jobsOf(state.doc).map((j) => [j.name, chosen.has(j.name) ? 'WAITING' : 'SKIPPED'])),
      ),
  });
  const sweeps = sweepPanel({
    box: sweepBox,
    cluster: await clusterField({ name: 'sweep-cluster', onChange: () => sweeps.draw() }),
    editor: page,
    args: runs.args,
  });

  const saveBtn = actionButton('Save', save, { cls: 'btn btn-primary', errorBox: pageError, busyLabel: 'Saving…' });
  const deleteBtn = fileName
    ? actionButton('Delete', remove, { cls: 'btn btn-ghost-danger', errorBox: pageError })
    : null;

  replace(
    root,
    h(
      'div',
      { class: 'flow-head' },
      h(
        'div',
        { class: 'flow-title' },
        h('span', { class: 'flow-file' }, fileName ? `${fileName}.yaml` : 'New workflow'),
        dirtyBadge,
        validity,
      ),
      h('div', { class: 'btn-group' }, deleteBtn, saveBtn),
    ),
    pageError,
    h(
      'div',
      { class: 'flow-grid' },
      card('YAML', [editor.el, errorList], { cls: 'flow-editor-card' }),
      card(
        'Graph',
        [
          h(
            'div',
            { class: 'builder-bar' },
            h(
              'button',
              {
                type: 'button',
                class: 'btn btn-sm',
                onClick: () => {
                  state.selected = addJob(builderDoc());
                  writeBack();
                },
              },
              '+ Add job',
            ),
            h(
              'span',
              { class: 'hint' },
              "Drag from a job's right dot to another job to make it wait for it; " +
                'click an arrow to remove it. Builder changes rewrite the YAML (comments are not kept).',
            ),
          ),
          dag,
          jobFormBox,
        ],
        { cls: 'flow-graph-card' },
      ),
    ),
    h('div', { class: 'grid grid-2' }, card('Run', runBox), card('Sweep', sweepBox)),
    card('Runs of this workflow', runsBox, { cls: 'flush', actions: liveIndicator() }),
  );

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
      runs.draw();
      sweeps.draw();
    } catch (err) {
      if (seq !== state.seq) return;
      state.valid = false;
      state.errors = [errorText(err)];
      drawValidation();
    }
  }

  function drawValidation() {
    editor.setErrors(errorsByLine(state.errors));
    validity.className = `validity ${state.valid ? 'is-valid' : 'is-invalid'}`;
    const count = state.errors.length;
    validity.textContent = state.valid ? '✓ valid' : `${count} problem${count === 1 ? '' : 's'}`;
    replace(
      errorList,
      state.errors.map((msg) => {
        const line = errorLine(msg);
        return h(
          'li',
          null,
          line ? h('button', { type: 'button', class: 'linklike', onClick: () => editor.goToLine(line) }, msg) : msg,
        );
      }),
    );
  }

  function drawGraph() {
    const jobs = jobsOf(state.doc);
    const key = JSON.stringify(jobs);
    if (key !== dag.dataset.key) {
      dag.dataset.key = key;
      dag.setJobs(jobs);
    }
    const raw = Array.isArray(state.doc?.jobs) ? state.doc.jobs : [];
    dag.update({}, Object.fromEntries(raw.filter((j) => j?.name).map((j) => [j.name, commandSummary(j)])));
    if (state.selected && !jobs.some((j) => j.name === state.selected)) state.selected = null;
    dag.select(state.selected);
    drawJobForm();
  }

  // -- the visual builder: edit the document, write the YAML, validate it like typed text -----------------
  /** The document the builder edits (a new one when the YAML has none yet). */
  function builderDoc() {
    if (!state.doc || typeof state.doc !== 'object') state.doc = { name: 'my-workflow', jobs: [] };
    return state.doc;
  }

  function writeBack() {
    const yaml = toYaml(state.doc);
    editor.value = yaml;
    onText(yaml);
    clearTimeout(timer);
    check();
  }

  function drawJobForm() {
    replace(
      jobFormBox,
      jobForm(state.doc, state.selected, (selected) => {
        state.selected = selected;
        writeBack();
      }),
    );
  }

  // -- save / delete ------------------------------------------------------------------------------------
  async function save() {
    let target = fileName;
    if (!target) {
      const wanted = state.doc && typeof state.doc.name === 'string' ? state.doc.name : '';
      if (!FILE_NAME.test(wanted)) {
        throw new Error(
          `The file is named after the workflow's name; "${wanted}" cannot be a file name ` +
            '(letters, digits, - and _ only)',
        );
      }
      const existing = await api('/api/workflows');
      if (existing.some((wf) => wf.name === wanted)) {
        throw new Error(`A workflow file named ${wanted} exists already: open it from the list, or rename this one`);
      }
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
    const ok = await confirmDialog({
      title: `Delete ${fileName}.yaml?`,
      body: 'The file is removed from the workflows directory. Its past runs stay listed.',
      confirmLabel: 'Delete',
      danger: true,
    });
    if (!ok) return;
    await api(`/api/workflows/${encodeURIComponent(fileName)}`, { method: 'DELETE' });
    toast(`Deleted ${fileName}.yaml`, 'ok');
    navigate('/workflows');
  }

  // -- runs of this workflow ----------------------------------------------------------------------------
  async function drawRuns() {
    const workflowName = state.doc?.name;
    if (!fileName || !workflowName) {
      replace(runsBox, emptyState('Not run yet', 'Save the workflow and press Run; its runs are listed here.'));
      return;
    }
    try {
      const found = await api('/api/workflows/runs', { query: { workflow: workflowName, limit: 20 } });
      replace(
        runsBox,
        found.length
          ? runsTable(found, { showWorkflow: false })
          : emptyState('Not run yet', 'Press Run above; the run page shows every job turning state live.'),
      );
    } catch (err) {
      replace(runsBox, alertBox(err));
    }
  }

  const stop = live(
    ['workflow_run.status_changed'],
    (events) => {
      if (events.some((e) => e.type === 'resync' || (state.doc && e.payload.workflow_name === state.doc.name)))
        drawRuns();
    },
    { wait: 400 },
  );
  markDirty();
  await check();
  runs.draw();
  sweeps.draw();
  await drawRuns();
  return () => {
    stop();
    clearTimeout(timer);
  };
}
