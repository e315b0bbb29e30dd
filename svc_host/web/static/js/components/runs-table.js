// A table of workflow runs (the Workflows list's recent runs, one workflow's runs on its page).
import { h, fmtTime, fmtDuration, stateBadge, agoSpan } from '../dom.js';
import { runOrigin } from './run-origin.js';
import { runShownStatus } from './run-state.js';

/** Runs as table rows: id (a link), workflow, cluster, status, jobs done, started, took, who started it. */
export function runsTable(runs, { showWorkflow = true } = {}) {
  return h(
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
          h('th', null, 'Run'),
          showWorkflow ? h('th', null, 'Workflow') : null,
          h('th', null, 'Cluster'),
          h('th', null, 'Status'),
          h('th', null, 'Jobs'),
          h('th', null, 'Started'),
          h('th', null, 'Took'),
          h('th', null, 'From'),
        ),
      ),
      h(
        'tbody',
        null,
        runs.map((run) => {
          const statuses = Object.values(run.job_statuses || {});
          const done = statuses.filter((s) => s === 'COMPLETED' || s === 'SKIPPED').length;
          const end = run.completed_at ? new Date(run.completed_at) : new Date();
          const took = run.started_at ? (end - new Date(run.started_at)) / 1000 : null;
          return h(
            'tr',
            { dataset: { run: run.id } },
            h('td', null, h('a', { href: `/runs/${run.id}`, class: 'mono' }, run.id.slice(0, 8))),
            showWorkflow ? h('td', null, run.workflow_name) : null,
            h('td', null, h('span', { class: 'cluster-chip' }, run.transport)),
            h('td', { class: 'run-status' }, stateBadge(runShownStatus(run))), // queued: its jobs wait in Slurm's queue
            h('td', { class: 'num' }, `${done}/${statuses.length}`),
            h('td', { title: fmtTime(run.started_at) }, agoSpan(run.started_at)),
            h('td', null, fmtDuration(took)),
            h('td', null, runOrigin(run)),
          );
        }),
      ),
    ),
  );
}
