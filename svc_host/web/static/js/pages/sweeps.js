// Sweeps: the list, and one sweep's page with its counters as a stacked bar that moves live, the cells table
// (each cell links to its run), pause/resume, the failure budget and cancel; once it ended, how its jobs used
// what they asked for. Cell and sweep status changes (a
// pause or resume too) arrive as events; the sweep is re-read only when one concerns it.
import { h, replace, fmtTime, stateBadge, agoSpan, durationSpan } from '../dom.js';
import { api } from '../api.js';
import { card, alertBox, confirmDialog, actionButton, toast } from '../ui.js';
import { emptyState, setTitle } from '../router.js';
import { live, oneAtATime } from '../live.js';
import { liveIndicator } from '../events.js';
import { stackedBar } from '../components/chart.js';
import { efficiencyCard } from '../components/efficiency.js';
import { clusterFilter } from '../components/cluster-field.js';
import { bindPageCluster, chooseListed, jobHref, listedCluster } from '../cluster.js';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** The counters of a sweep as stacked-bar parts (state classes colour them like job states); launched cells whose
 * job Slurm still keeps in its queue (an array's limit, a hold) are "queued", not running. */
export function counterParts(sweep) {
  const queued = sweep.cells_in_queue || 0;
  return [
    { label: 'completed', value: sweep.cells_completed, cls: 'state-COMPLETED' },
    { label: 'running', value: sweep.cells_running - queued, cls: 'state-RUNNING' },
    { label: 'queued', value: queued, cls: 'state-PENDING' },
    { label: 'pending', value: sweep.cells_pending, cls: 'state-PENDING' },
    { label: 'failed', value: sweep.cells_failed, cls: 'state-FAILED' },
    { label: 'cancelled', value: sweep.cells_cancelled, cls: 'state-CANCELLED' },
  ];
}

/** What the launched cells do now: "2 running · 4 queued (array limit)" (null when none is launched). */
export function inFlightText(sweep) {
  const queued = sweep.cells_in_queue || 0;
  const running = sweep.cells_running - queued;
  if (!running && !queued) return null;
  const parts = [`${running} running`];
  if (queued) parts.push(`${queued} queued${sweep.queue_reason ? ` (${sweep.queue_reason})` : ''}`);
  return parts.join(' · ');
}

/** The "paused · N held" badge of a paused sweep (null when it is not paused). */
export function pausedBadge(sweep) {
  if (!sweep.paused_at) return null;
  return h(
    'span',
    {
      class: 'badge status-paused',
      title: `paused ${fmtTime(sweep.paused_at)}: no cell is launched and queued jobs are held`,
    },
    `paused · ${sweep.cells_held} held`,
  );
}

/** The failure budget as "2 of 3 failures" (null without one). */
export function budgetText(sweep) {
  if (sweep.max_failures === null || sweep.max_failures === undefined) return null;
  const used = `${sweep.cells_failed} of ${sweep.max_failures} failure${sweep.max_failures === 1 ? '' : 's'}`;
  if (sweep.cells_failed > sweep.max_failures) return `${used}: spent, the cells left were cancelled`;
  return `${used} · the sweep stops at failure ${sweep.max_failures + 1}`;
}

function concerns(events, sweepId) {
  return events.some(
    (e) =>
      e.type === 'resync' ||
      (e.type === 'sweep_run.status_changed' && (sweepId === null || Number(e.payload.id) === sweepId)) ||
      (e.type === 'workflow_run.status_changed' &&
        e.payload.sweep_id !== null &&
        e.payload.sweep_id !== undefined &&
        (sweepId === null || Number(e.payload.sweep_id) === sweepId)),
  );
}

export async function render(root, params) {
  if (params.id) return renderSweep(root, Number(params.id));
  return renderList(root);
}

async function renderList(root) {
  const box = h('div');
  const filterBox = h('span');
  let shownOn = await listedCluster(); // the tab's cluster ('' all): the pill and this filter are one choice
  replace(
    root,
    card('Sweeps', box, {
      cls: 'flush',
      actions: [
        filterBox,
        liveIndicator(),
        h('a', { class: 'btn btn-sm', href: '/workflows' }, 'Start one from a workflow'),
      ],
    }),
  );
  const bars = new Map();

  async function draw() {
    let sweeps;
    try {
      sweeps = await api('/api/sweep_runs');
    } catch (err) {
      replace(box, alertBox(err));
      return;
    }
    replace(
      filterBox,
      clusterFilter(
        sweeps.map((sw) => sw.transport),
        shownOn,
        (name) => {
          shownOn = name;
          chooseListed(name);
          draw();
        },
      ),
    );
    const anywhere = sweeps.length;
    if (shownOn) sweeps = sweeps.filter((sw) => sw.transport === shownOn);
    if (!sweeps.length && anywhere) {
      replace(
        box,
        emptyState(
          `No sweeps on ${shownOn}`,
          'Sweeps on the other clusters show with "All clusters", here or in the top bar.',
        ),
      );
      return;
    }
    if (!sweeps.length) {
      replace(
        box,
        emptyState(
          'No sweeps yet',
          'A sweep runs one workflow over a matrix of argument values, a few cells at a time. Open a workflow and ' +
            'use its Sweep panel.',
          h('a', { class: 'btn btn-primary', href: '/workflows' }, 'Choose a workflow'),
        ),
      );
      return;
    }
    replace(
      box,
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
              h('th', null, 'Sweep'),
              h('th', null, 'Workflow'),
              h('th', null, 'Cluster'),
              h('th', null, 'Matrix'),
              h('th', null, 'Status'),
              h('th', { class: 'bar-col' }, 'Cells'),
              h('th', null, 'Parallel'),
              h('th', null, 'Started'),
            ),
          ),
          h(
            'tbody',
            null,
            sweeps.map((sweep) => {
              let bar = bars.get(sweep.id);
              if (bar) bar.update(counterParts(sweep));
              else {
                bar = stackedBar(counterParts(sweep), { showLegend: false, label: `sweep ${sweep.id}` });
                bars.set(sweep.id, bar);
              }
              const done = sweep.cells_completed + sweep.cells_failed + sweep.cells_cancelled;
              return h(
                'tr',
                { dataset: { sweep: sweep.id } },
                h('td', null, h('a', { href: `/sweeps/${sweep.id}` }, `#${sweep.id}`)),
                h('td', null, sweep.name),
                h('td', null, h('span', { class: 'cluster-chip' }, sweep.transport)),
                h(
                  'td',
                  { class: 'mono', title: JSON.stringify(sweep.matrix) },
                  Object.entries(sweep.matrix)
                    .map(([axis, values]) => `${axis} × ${values.length}`)
                    .join(', '),
                ),
                h('td', null, h('span', { class: 'badges' }, stateBadge(sweep.status), pausedBadge(sweep))),
                h(
                  'td',
                  { class: 'bar-col' },
                  h('div', { class: 'bar-cell' }, bar, h('span', { class: 'muted' }, `${done}/${sweep.cell_count}`)),
                ),
                h('td', { class: 'num' }, String(sweep.max_parallel)),
                h('td', { title: fmtTime(sweep.started_at) }, agoSpan(sweep.started_at)),
              );
            }),
          ),
        ),
      ),
    );
  }

  // Subscribed before the first load, so a change while it loads is not missed.
  const stop = live(
    ['sweep_run.status_changed', 'workflow_run.status_changed'],
    (events) => {
      if (concerns(events, null)) draw();
    },
    { wait: 300 },
  );
  await draw();
  return stop;
}

async function renderSweep(root, sweepId) {
  const path = location.pathname; // this page's, while its thing is asked for
  let ready = false;
  let missed = false;
  // Subscribed before the first load, so a cell that moves while the page loads is not missed. A job that starts
  // on the sweep's cluster may be a queued task that now runs: "2 running · 4 queued" is read again.
  let sweep;
  const taskMoved = (e) => e.type === 'job.status_changed' && (!sweep || e.payload?.transport === sweep.transport);
  const stop = live(
    ['sweep_run.status_changed', 'workflow_run.status_changed', 'job.status_changed'],
    (events) => {
      if (!concerns(events, sweepId) && !(sweep?.cells_in_queue && events.some(taskMoved))) return;
      if (ready) reload();
      else missed = true;
    },
    { wait: 250 },
  );
  try {
    sweep = await api(`/api/sweep_runs/${sweepId}`);
  } catch (err) {
    stop();
    throw err;
  }
  setTitle(`Sweep #${sweepId} · ${sweep.name}`);
  bindPageCluster(sweep.transport, path); // the URL and the pill name the sweep's cluster, whatever the tab's
  const head = h('section', { class: 'card summary-card' });
  const errorBox = alertBox(null);
  const queuedBox = alertBox(null, 'info');
  queuedBox.classList.add('queued');
  const actionError = alertBox(null);
  const bar = stackedBar(counterParts(sweep), { label: 'cells' });
  const summary = h('div', { class: 'sweep-summary' });
  const cellsBox = h('div');
  const cellArgs = new Map(); // run id -> the cell's args, for naming its jobs in the efficiency table
  const efficiency = efficiencyCard(`/api/history/efficiency/sweeps/${sweepId}`, {
    id: 'sweep-efficiency',
    over: 'the sweep',
    name: (job) => {
      const args = cellArgs.get(job.run_id);
      const axes = args
        ? Object.keys(sweep.matrix)
            .map((a) => `${a}=${JSON.stringify(args[a])}`)
            .join(' ')
        : '';
      return axes ? `${job.name} · ${axes}` : job.name;
    },
  });
  const cancelBtn = actionButton('Cancel sweep', cancel, {
    cls: 'btn btn-danger',
    errorBox: actionError,
    busyLabel: 'Cancelling…',
  });
  const pauseBtn = actionButton('Pause', () => steer('pause'), {
    cls: 'btn',
    errorBox: actionError,
    busyLabel: 'Pausing…',
    title: 'Launch no new cell and hold the queued jobs; running cells run on',
  });
  const resumeBtn = actionButton('Resume', () => steer('resume'), {
    cls: 'btn btn-primary',
    errorBox: actionError,
    busyLabel: 'Resuming…',
    title: 'Release the held jobs and launch cells again',
  });

  replace(
    root,
    head,
    errorBox,
    queuedBox,
    actionError,
    card('Cells', [summary, bar], { actions: liveIndicator() }),
    card('Cell runs', cellsBox, { cls: 'flush' }),
    efficiency.el,
  );

  /** Once the sweep ended: its cells' jobs, measured (Slurm accounting, as the History page shows). */
  function drawEfficiency() {
    if (TERMINAL.has(sweep.status)) efficiency.draw();
  }

  function drawHead() {
    const steerable = !TERMINAL.has(sweep.status) && !sweep.cancel_requested_at;
    cancelBtn.hidden = !steerable;
    pauseBtn.hidden = !steerable || Boolean(sweep.paused_at);
    resumeBtn.hidden = !steerable || !sweep.paused_at;
    const end = sweep.completed_at ? new Date(sweep.completed_at) : new Date();
    const budget = budgetText(sweep);
    replace(
      head,
      h(
        'div',
        { class: 'job-head' },
        h('span', { class: 'job-name' }, `${sweep.name}`),
        h(
          'span',
          { class: 'cluster-chip', id: 'sweep-cluster', title: 'The cluster this sweep runs on' },
          sweep.transport,
        ),
        stateBadge(sweep.status),
        pausedBadge(sweep),
        h('span', { class: 'grow' }),
        pauseBtn,
        resumeBtn,
        cancelBtn,
      ),
      h(
        'dl',
        { class: 'kv run-facts' },
        h('dt', null, 'Cluster'),
        h('dd', null, sweep.transport),
        inFlightText(sweep) ? [h('dt', null, 'Now'), h('dd', { id: 'sweep-in-flight' }, inFlightText(sweep))] : null,
        h('dt', null, 'Matrix'),
        h(
          'dd',
          null,
          h(
            'div',
            { class: 'chips' },
            Object.entries(sweep.matrix).map(([k, vs]) =>
              h('span', { class: 'chip' }, h('strong', null, k), ` ${vs.map((v) => JSON.stringify(v)).join(', ')}`),
            ),
          ),
        ),
        Object.keys(sweep.args || {}).length
          ? [
              h('dt', null, 'Shared args'),
              h(
                'dd',
                { class: 'mono' },
                Object.entries(sweep.args)
                  .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
                  .join('  '),
              ),
            ]
          : null,
        h('dt', null, 'Parallel'),
        h(
          'dd',
          null,
          `at most ${sweep.max_parallel} cell${sweep.max_parallel === 1 ? '' : 's'} at a time` +
            `${sweep.fail_fast ? ' · fail fast' : ''}`,
        ),
        budget
          ? [
              h('dt', null, 'Failure budget'),
              h('dd', { class: ['failure-budget', sweep.cells_failed > sweep.max_failures ? 'spent' : null] }, budget),
            ]
          : null,
        sweep.paused_at
          ? [
              h('dt', null, 'Paused'),
              h(
                'dd',
                { class: 'paused-facts' },
                `${fmtTime(sweep.paused_at)} · no cell is launched; ` +
                  `${sweep.cells_held} launched cell${sweep.cells_held === 1 ? '' : 's'} held in the queue, ` +
                  'running cells run on',
              ),
            ]
          : null,
        sweep.array_job_id
          ? [
              h('dt', null, 'Submitted'),
              h(
                'dd',
                { class: 'array-job' },
                `as one Slurm job array, ${sweep.array_job_id}: cell i is task ${sweep.array_job_id}_i`,
              ),
            ]
          : null,
        h('dt', null, 'Started'),
        h(
          'dd',
          null,
          `${fmtTime(sweep.started_at)} · ${sweep.completed_at ? 'took ' : 'running for '}`,
          durationSpan((end - new Date(sweep.started_at)) / 1000, !sweep.completed_at, { id: 'sweep-elapsed' }),
        ),
        sweep.cancel_requested_at
          ? [h('dt', null, 'Cancel asked'), h('dd', null, fmtTime(sweep.cancel_requested_at))]
          : null,
      ),
    );
    errorBox.hidden = !sweep.error;
    errorBox.textContent = sweep.error || '';
    queuedBox.hidden = !sweep.queued; // cells held back by the submission throttle
    queuedBox.textContent = sweep.queued ? `Cells wait to be submitted — ${sweep.queued}` : '';
    bar.update(counterParts(sweep));
    const done = sweep.cells_completed + sweep.cells_failed + sweep.cells_cancelled;
    replace(
      summary,
      h(
        'span',
        { class: 'sweep-count' },
        h('strong', null, `${done}`),
        ` of ${sweep.cell_count} cells done`,
        sweep.paused_at ? h('span', { class: 'held-count' }, ` · paused, ${sweep.cells_held} held`) : null,
      ),
    );
  }

  async function drawCells() {
    const cells = await api(`/api/sweep_runs/${sweepId}/cells`);
    for (const cell of cells) cellArgs.set(cell.id, cell.args);
    const axes = Object.keys(sweep.matrix);
    replace(
      cellsBox,
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
              h('th', null, 'Cell'),
              axes.map((a) => h('th', null, a)),
              h('th', null, 'Status'),
              h('th', null, 'Jobs'),
              h('th', null, 'Started'),
              h('th', null, 'Took'),
              h('th', null, 'Error'),
            ),
          ),
          h(
            'tbody',
            null,
            cells.map((cell) => {
              // the cell's own jobs say when it started and how long it took (a task of an array may wait long after
              // the sweep submitted it); a launched cell whose jobs all wait in the queue is queued, not running
              const queued = cell.status === 'running' && cell.job_state === 'PENDING';
              const started = cell.job_started_at;
              const ended = cell.job_ended_at || (TERMINAL.has(cell.status) ? cell.completed_at : null);
              const took = started
                ? durationSpan(((ended ? new Date(ended) : new Date()) - new Date(started)) / 1000, !ended)
                : '—';
              return h(
                'tr',
                { dataset: { cell: cell.id, status: queued ? 'queued' : cell.status } },
                h('td', null, h('a', { href: `/runs/${cell.id}`, class: 'mono' }, cell.id.slice(0, 8))),
                axes.map((a) => h('td', { class: 'mono' }, JSON.stringify(cell.args[a]))),
                h(
                  'td',
                  { class: 'cell-status', title: queued ? 'Slurm keeps its job in the queue' : null },
                  stateBadge(queued ? 'queued' : cell.status),
                ),
                h(
                  'td',
                  { class: 'cell-jobs mono' },
                  Object.entries(cell.job_ids || {}).map(([name, id]) =>
                    h('a', { href: jobHref(sweep.transport, id), title: name }, id),
                  ),
                ),
                h(
                  'td',
                  { class: 'cell-started', title: started ? fmtTime(started) : '' },
                  started ? agoSpan(started) : '—',
                ),
                h('td', { class: 'cell-took' }, took),
                h('td', { class: 'wrap muted' }, cell.error || ''),
              );
            }),
          ),
        ),
      ),
    );
  }

  async function cancel() {
    const ok = await confirmDialog({
      title: `Cancel sweep #${sweepId}?`,
      body:
        'Cells not started yet are dropped (counted cancelled) and running cells are cancelled with their jobs. ' +
        'Finished cells stay as they are.',
      confirmLabel: 'Cancel sweep',
      danger: true,
    });
    if (!ok) return;
    await api(`/api/sweep_runs/${sweepId}/cancel`, { method: 'POST' });
    toast('Sweep cancelling: running cells are being cancelled', 'ok');
    await reload(); // not the 202's sweep: events may have brought a newer one (see oneAtATime)
  }

  async function steer(action) {
    await api(`/api/sweep_runs/${sweepId}/${action}`, { method: 'POST' });
    toast(
      action === 'pause' ? 'Sweep paused: no new cell is launched and queued jobs are held' : 'Sweep resumed',
      'ok',
    );
    await reload();
  }

  const reload = oneAtATime(async () => {
    try {
      sweep = await api(`/api/sweep_runs/${sweepId}`);
      drawHead();
      await drawCells();
      drawEfficiency();
    } catch (err) {
      if (err.status !== 401) {
        errorBox.hidden = false;
        errorBox.textContent = err.detail || err.message;
      }
    }
  });

  drawHead();
  await drawCells();
  drawEfficiency();
  ready = true;
  if (missed) reload();
  return () => {
    stop();
    efficiency.stop();
  };
}
