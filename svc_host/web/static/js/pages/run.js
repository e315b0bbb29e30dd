// A workflow run: its DAG whose nodes take the jobs' states live, the jobs table linking to each job's page
// (with every attempt of a retried job under it, and why each retry was made), the run's times and error, and
// cancel. Job transitions arrive as events; the run is re-read only when an
// event concerns it (never polled). A failed job is one click from its stderr: the failure banner links it, its
// node in the graph opens it, and the last lines of its stderr are shown on the run page.
import { h, replace, fmtTime, fmtDuration, stateBadge } from '../dom.js';
import { api } from '../api.js';
import { card, alertBox, confirmDialog, actionButton, toast } from '../ui.js';
import { navigate, setTitle } from '../router.js';
import { subscribe, liveIndicator } from '../events.js';
import { oneAtATime } from '../live.js';
import { dagView } from '../components/dag.js';
import { efficiencyCard } from '../components/efficiency.js';
import { FAILED } from '../job-states.js';
import { runOrigin } from '../components/run-origin.js';
import { bindPageCluster, jobHref } from '../cluster.js';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const STDERR_LINES = 20;

/** The job page of a job of the run's cluster, opened on its stderr. */
function stderrHref(cluster, id) {
  return jobHref(cluster, id, { log: 'stderr' });
}

/** A run's attempts by job name, oldest first. */
function byJob(attempts) {
  const grouped = {};
  for (const a of attempts) {
    if (!grouped[a.job]) grouped[a.job] = [];
    grouped[a.job].push(a);
  }
  return grouped;
}

export async function render(root, params) {
  const runId = params.id;
  const path = location.pathname; // this page's, while its thing is asked for
  // Subscribed before the first load: an event while the page loads marks it for one more reload.
  let onEvent = () => {
    missed = true;
  };
  let missed = false;
  const unsubscribe = subscribe(['job.status_changed', 'workflow_run.status_changed'], (event) => onEvent(event));
  let run;
  try {
    run = await api(`/api/workflows/runs/${encodeURIComponent(runId)}`);
  } catch (err) {
    unsubscribe();
    throw err;
  }
  setTitle(`Run ${runId.slice(0, 8)} · ${run.workflow_name}`);
  bindPageCluster(run.transport, path); // the URL and the pill name the run's cluster, whatever the tab's choice

  // The edges come from the workflow file (the run stores its jobs, not the file's shape); a file changed or
  // gone since leaves the nodes in run order without edges.
  let jobs = Object.keys(run.job_statuses).map((name) => ({ name, depends_on: [] }));
  let shapeNote = null;
  try {
    const wf = await api(`/api/workflows/${encodeURIComponent(run.workflow_name)}`);
    const byName = new Map((wf.jobs || []).map((j) => [j.name, j.depends_on || []]));
    if (jobs.every((j) => byName.has(j.name))) {
      jobs = jobs.map((j) => ({
        name: j.name,
        depends_on: byName.get(j.name).filter((d) => jobs.some((k) => d.split(':').pop() === k.name)),
      }));
    } else {
      shapeNote = 'The workflow file has changed since this run: jobs are shown in run order, without their edges.';
    }
  } catch {
    shapeNote =
      'The workflow file is not in the workflows directory: jobs are shown in run order, without their edges.';
  }

  const head = h('section', { class: 'card summary-card' });
  const errorBox = alertBox(null);
  const queuedBox = alertBox(null, 'info');
  queuedBox.classList.add('queued');
  const jobsBox = h('div');
  const stderrBox = h('div', { id: 'failed-stderr' });
  const tails = new Map(); // job id -> its stderr's last lines (read once: a failed job's log is complete)
  // a job's state in the run's own word (SKIPPED where Slurm says CANCELLED: the run had it cancelled unrun), as the
  // graph and the jobs table say it
  const runState = (job) => {
    const name = Object.keys(run.job_ids).find((n) => String(run.job_ids[n]) === String(job.job_id));
    return (name && run.job_statuses[name]) || job.status;
  };
  const efficiency = efficiencyCard(`/api/history/efficiency/runs/${encodeURIComponent(runId)}`, {
    id: 'run-efficiency',
    over: 'the run',
    state: runState,
  });
  const actionError = alertBox(null);
  let selected = null;
  const dag = dagView({
    jobs,
    states: run.job_statuses,
    subtitles: subtitles(run),
    onSelect: (name) => {
      if (FAILED.has(run.job_statuses[name]) && run.job_ids[name]) {
        navigate(stderrHref(run.transport, run.job_ids[name]));
        return;
      }
      selected = name;
      drawJobs();
    },
  });
  const cancelBtn = actionButton('Cancel run', cancel, {
    cls: 'btn btn-danger',
    errorBox: actionError,
    busyLabel: 'Cancelling…',
  });

  replace(
    root,
    head,
    errorBox,
    queuedBox,
    actionError,
    card('Graph', [shapeNote ? h('p', { class: 'hint' }, shapeNote) : null, dag], { actions: liveIndicator() }),
    stderrBox,
    card('Jobs', jobsBox, { cls: 'flush' }),
    efficiency.el,
  );

  function subtitles(r) {
    return Object.fromEntries(
      Object.keys(r.job_statuses).map((name) => {
        const id = r.job_ids[name];
        return [name, id ? `#${id} · ${r.job_statuses[name]}` : r.job_statuses[name]];
      }),
    );
  }

  // The running time ticks in the browser (no request): only the text of one element changes.
  const clock = h('span', { class: 'run-clock' });
  const tick = () => {
    if (run.started_at && !run.completed_at)
      clock.textContent = fmtDuration((Date.now() - new Date(run.started_at)) / 1000);
  };
  const ticker = setInterval(tick, 1000);

  function drawHead() {
    tick();
    const end = run.completed_at ? new Date(run.completed_at) : new Date();
    const took = run.started_at ? (end - new Date(run.started_at)) / 1000 : null;
    cancelBtn.hidden = TERMINAL.has(run.status);
    replace(
      head,
      h(
        'div',
        { class: 'job-head' },
        h('span', { class: 'job-name' }, run.workflow_name),
        h('span', { class: 'cluster-chip', id: 'run-cluster', title: 'The cluster this run runs on' }, run.transport),
        stateBadge(run.status),
        h('span', { class: 'grow' }),
        h('a', { class: 'btn', href: `/workflows/${encodeURIComponent(run.workflow_name)}` }, 'Workflow'),
        cancelBtn,
      ),
      h(
        'dl',
        { class: 'kv run-facts' },
        h('dt', null, 'Run'),
        h('dd', { class: 'mono' }, run.id),
        h('dt', null, 'Started'),
        h('dd', null, fmtTime(run.started_at)),
        h('dt', null, run.completed_at ? 'Ended' : 'Running for'),
        h('dd', null, run.completed_at ? `${fmtTime(run.completed_at)} (took ${fmtDuration(took)})` : clock),
        h('dt', null, 'Cluster'),
        h('dd', null, `${run.transport}${run.mount ? ` · mount ${run.mount}` : ''}`),
        h('dt', null, 'From'),
        h('dd', null, runOrigin(run)),
        Object.keys(run.args || {}).length
          ? [
              h('dt', null, 'Args'),
              h(
                'dd',
                { class: 'mono' },
                Object.entries(run.args)
                  .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
                  .join('  '),
              ),
            ]
          : null,
      ),
    );
    const failed = failedJobs();
    errorBox.hidden = !run.error && !failed.length;
    replace(
      errorBox,
      run.error || `${failed.length} job${failed.length === 1 ? '' : 's'} failed`,
      failed.length
        ? h(
            'div',
            { class: 'failed-links' },
            failed.map(({ name, id }) =>
              h('a', { class: 'alert-link', href: stderrHref(run.transport, id) }, `Open ${name} (#${id}) on stderr →`),
            ),
          )
        : null,
    );
    queuedBox.hidden = !run.queued; // jobs held back by the submission throttle
    queuedBox.textContent = run.queued ? `Jobs wait to be submitted — ${run.queued}` : '';
  }

  /** The run's jobs that ended failed and have a scheduler id (each has a job page and logs). */
  function failedJobs() {
    return Object.keys(run.job_statuses)
      .filter((name) => FAILED.has(run.job_statuses[name]) && run.job_ids[name])
      .map((name) => ({ name, id: String(run.job_ids[name]) }));
  }

  /** The last lines of each failed job's stderr (stdout when both go to one file), read once per job. */
  async function drawStderr() {
    const failed = failedJobs();
    for (const { id } of failed) {
      if (tails.has(id)) continue;
      tails.set(id, null);
      try {
        const logs = await api(`/api/jobs/${encodeURIComponent(id)}/logs`, {
          query: { tail_lines: STDERR_LINES, transport: run.transport },
        });
        const shared = !logs.stderr_path && logs.stdout_path;
        tails.set(id, {
          text: shared ? logs.stdout : logs.stderr,
          stream: shared ? 'stdout (stderr goes to the same file)' : 'stderr',
        });
      } catch (err) {
        tails.set(id, { error: err.detail || err.message });
      }
    }
    replace(
      stderrBox,
      failed.length
        ? card(
            `Last ${STDERR_LINES} lines of stderr`,
            failed.map(({ name, id }) => {
              const tail = tails.get(id);
              return h(
                'div',
                { class: 'failed-tail', dataset: { job: name } },
                h(
                  'div',
                  { class: 'failed-tail-head' },
                  h('strong', null, name),
                  stateBadge(run.job_statuses[name]),
                  tail && tail.stream !== 'stderr' && !tail.error ? h('span', { class: 'muted' }, tail.stream) : null,
                  h('span', { class: 'grow' }),
                  h('a', { href: stderrHref(run.transport, id) }, `Full log of #${id} →`),
                ),
                !tail
                  ? h('p', { class: 'muted' }, 'Reading…')
                  : tail.error
                    ? h('p', { class: 'muted' }, `The log could not be read: ${tail.error}`)
                    : tail.text
                      ? h('pre', { class: 'log failed-tail-log' }, tail.text)
                      : h('p', { class: 'muted' }, 'The job wrote nothing to stderr.'),
              );
            }),
          )
        : null,
    );
  }

  function drawJobs() {
    const attempts = byJob(run.attempts || []);
    replace(
      jobsBox,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'data' },
          h('thead', null, h('tr', null, h('th', null, 'Job'), h('th', null, 'Scheduler id'), h('th', null, 'State'))),
          h(
            'tbody',
            null,
            Object.keys(run.job_statuses).map((name) => {
              const id = run.job_ids[name];
              const tried = attempts[name] || [];
              return [
                h(
                  'tr',
                  {
                    class: name === selected ? 'is-selected' : null,
                    dataset: { job: name },
                    onClick: () => {
                      selected = name;
                      dag.select(name);
                      drawJobs();
                    },
                  },
                  h(
                    'td',
                    null,
                    name,
                    tried.length > 1 ? h('span', { class: 'chip attempt-count' }, `${tried.length} attempts`) : null,
                  ),
                  h(
                    'td',
                    null,
                    id
                      ? h(
                          'a',
                          {
                            href: FAILED.has(run.job_statuses[name])
                              ? stderrHref(run.transport, id)
                              : jobHref(run.transport, id),
                          },
                          id,
                        )
                      : h('span', { class: 'muted' }, 'not submitted'),
                  ),
                  h('td', null, stateBadge(run.job_statuses[name])),
                ),
                tried.some((a) => a.reason)
                  ? h(
                      'tr',
                      { class: 'attempts-row', dataset: { attemptsOf: name } },
                      h('td', { colspan: 3 }, attemptsTable(tried)),
                    )
                  : null,
              ];
            }),
          ),
        ),
      ),
    );
  }

  /** Every attempt of one job: where and with what it ran, how it ended, and why the next one was made. */
  function attemptsTable(tried) {
    return h(
      'table',
      { class: 'attempts' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          ['#', 'Scheduler id', 'End', 'Exit', 'Node', 'Memory', 'Time limit', 'Elapsed', 'Next'].map((t) =>
            h('th', null, t),
          ),
        ),
      ),
      h(
        'tbody',
        null,
        tried.map((a) =>
          h(
            'tr',
            { dataset: { attempt: a.attempt } },
            h('td', null, a.attempt),
            h('td', null, h('a', { href: jobHref(run.transport, a.job_id) }, a.job_id)),
            h('td', null, stateBadge(a.state)),
            h('td', null, a.exit_code ?? '–'),
            h('td', { class: 'mono' }, a.node || '–'),
            h('td', { class: 'mono' }, a.resources.memory_per_node || 'default'),
            h('td', { class: 'mono' }, a.resources.time_limit || 'default'),
            h('td', null, a.elapsed_seconds == null ? '–' : fmtDuration(a.elapsed_seconds)),
            h('td', { class: 'attempt-reason' }, a.reason || ''),
          ),
        ),
      ),
    );
  }

  /** Once the run ended: how its jobs used what they asked for (Slurm accounting, as the History page shows). */
  function drawEfficiency() {
    if (TERMINAL.has(run.status)) efficiency.draw();
  }

  async function cancel() {
    const ok = await confirmDialog({
      title: 'Cancel this run?',
      body:
        'Every job of the run that is pending or running is cancelled with scancel; ' +
        'jobs that ended stay as they are.',
      confirmLabel: 'Cancel run',
      danger: true,
    });
    if (!ok) return;
    const answer = await api(`/api/workflows/runs/${encodeURIComponent(runId)}/cancel`, { method: 'POST' });
    toast(
      answer.warnings ? `Cancelled, with warnings: ${answer.warnings.join('; ')}` : 'Run cancelled',
      answer.warnings ? 'error' : 'ok',
    );
    await reload();
  }

  const reload = oneAtATime(async () => {
    try {
      run = await api(`/api/workflows/runs/${encodeURIComponent(runId)}`);
      dag.update(run.job_statuses, subtitles(run));
      drawHead();
      drawJobs();
      drawEfficiency();
      await drawStderr();
    } catch (err) {
      if (err.status !== 401) {
        errorBox.hidden = false;
        errorBox.textContent = err.detail || err.message;
      }
    }
  });

  drawHead();
  drawJobs();
  drawEfficiency();
  await drawStderr();
  let timer = null;
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(reload, 250);
  };
  onEvent = (event) => {
    if (event.type === 'resync') {
      soon();
      return;
    }
    const p = event.payload;
    if (event.type === 'job.status_changed') {
      if (p.transport !== run.transport) return; // the same id on another cluster is another job
      const name = Object.keys(run.job_ids).find((n) => String(run.job_ids[n]) === String(p.job_id));
      if (!name) return;
      run.job_statuses[name] = p.to; // at once, then the stored truth (retries, skips) a moment later
      dag.update({ [name]: p.to }, { [name]: `#${p.job_id} · ${p.to}` });
      drawJobs();
      soon();
    } else if (p.id === runId) {
      soon();
    }
  };
  if (missed) soon();
  return () => {
    unsubscribe();
    clearTimeout(timer);
    efficiency.stop();
    clearInterval(ticker);
  };
}
