// Overview of the tab's cluster: GPU gauges for the whole cluster and per partition (with GPUs per type), my
// running/pending jobs there, its failed jobs of the last 7 days (GET /api/history/stats?transport=); recent
// workflow runs and sweeps of every cluster (each named), the server.
// With "All clusters" chosen in the top bar: one block per cluster (GPUs, queue) instead of the one cluster's.
// "My jobs" and the counts are the user's own (GET /api/jobs?user=me: each cluster's login, as the profile or
// `local` runs jobs); a cluster's queue is shared with other users, whose jobs show with "Whole queue" (`?queue=all`).
import { h, replace, stateBadge, agoSpan, durationSpan, clockSeconds } from '../dom.js';
import { api, errorText } from '../api.js';
import { card, statCard, gauge, alertBox } from '../ui.js';
import { emptyState, navigate } from '../router.js';
import { live, snapshotsOf, applyJobEvents } from '../live.js';
import { SHARED_NODES_TITLE, gpuTypesText, jobGpusText, sharedNodesText } from '../components/gpu-types.js';
import { allClusters } from '../components/cluster-blocks.js';
import { runShownStatus } from '../components/run-state.js';
import { allClustersChosen, clusters, jobHref, shownCluster } from '../cluster.js';

const EVENTS = ['job.status_changed', 'resources.sampled', 'workflow_run.status_changed', 'sweep_run.status_changed'];

/** "Mine" / "Whole queue": whose jobs the page lists and counts (the choice is `?queue=all` in the URL). */
function queueToggle(queueOfAll) {
  const choose = (all) => {
    const params = new URLSearchParams(location.search);
    if (all) params.set('queue', 'all');
    else params.delete('queue');
    const qs = params.toString();
    navigate(location.pathname + (qs ? `?${qs}` : ''), { replace: true });
  };
  const choices = [
    [false, 'Mine', 'Only your jobs: those of your login on each cluster'],
    [true, 'Whole queue', "Every user's jobs in the queue"],
  ];
  return h(
    'div',
    { class: 'toolbar' },
    h(
      'div',
      { class: 'segmented', role: 'group', 'aria-label': 'Whose jobs' },
      choices.map(([all, label, title]) =>
        h(
          'button',
          {
            type: 'button',
            class: all === queueOfAll ? 'active' : null,
            'aria-pressed': String(all === queueOfAll),
            title,
            dataset: { queue: all ? 'all' : 'mine' },
            onClick: () => {
              if (all !== queueOfAll) choose(all);
            },
          },
          label,
        ),
      ),
    ),
  );
}

async function renderAllClusters(root, queueOfAll) {
  const known = await clusters();
  const view = allClusters(
    known.clusters.map((t) => t.name),
    { queueOfAll },
  );
  const recent = recentBoxes('All clusters');
  replace(root, queueToggle(queueOfAll), view.element, recent.element);
  await Promise.all([view.load(), recent.load()]);
  return live(EVENTS, (events) => {
    view.onEvents(events);
    recent.onEvents(events);
  });
}

/** Recent workflow runs and sweeps of every cluster, and the server: `{element, load(), onEvents(events)}`. */
function recentBoxes(shown) {
  const runsBox = h('div');
  const sweepsBox = h('div');
  const serverBox = h('div');
  const element = h(
    'div',
    { class: 'grid grid-3' },
    card('Recent workflow runs', runsBox, {
      actions: h('a', { class: 'btn btn-sm', href: '/workflows' }, 'Workflows'),
      cls: 'flush',
    }),
    card('Recent sweeps', sweepsBox, {
      actions: h('a', { class: 'btn btn-sm', href: '/sweeps' }, 'Sweeps'),
      cls: 'flush',
    }),
    card('Server', serverBox),
  );

  async function loadRuns() {
    try {
      const runs = (await api('/api/workflows/runs')) || [];
      if (!runs.length) {
        replace(
          runsBox,
          emptyState(
            'No workflow runs yet',
            'Write a workflow (a DAG of jobs in YAML) and run it.',
            h('a', { class: 'btn', href: '/workflows/new' }, 'New workflow'),
          ),
        );
        return;
      }
      replace(
        runsBox,
        h(
          'ul',
          { class: 'mini-list' },
          runs
            .slice(0, 6)
            .map((r) =>
              h(
                'li',
                null,
                h('a', { href: `/runs/${r.id}` }, r.workflow_name),
                h('span', { class: 'cluster-chip' }, r.transport),
                stateBadge(runShownStatus(r)),
                agoSpan(r.started_at, { class: 'muted' }),
              ),
            ),
        ),
      );
    } catch (err) {
      replace(runsBox, alertBox(err));
    }
  }

  async function loadSweeps() {
    try {
      const sweeps = (await api('/api/sweep_runs')) || [];
      if (!sweeps.length) {
        replace(
          sweepsBox,
          emptyState(
            'No sweeps yet',
            'Run one workflow over a matrix of parameters.',
            h('a', { class: 'btn', href: '/sweeps' }, 'Start a sweep'),
          ),
        );
        return;
      }
      replace(
        sweepsBox,
        h(
          'ul',
          { class: 'mini-list' },
          sweeps
            .slice(0, 6)
            .map((s) =>
              h(
                'li',
                null,
                h('a', { href: `/sweeps/${s.id}` }, s.name || `sweep ${s.id}`),
                h('span', { class: 'cluster-chip' }, s.transport),
                stateBadge(s.status),
                h('span', { class: 'muted' }, `${s.cells_completed}/${s.cell_count} done`),
              ),
            ),
        ),
      );
    } catch (err) {
      replace(sweepsBox, alertBox(err));
    }
  }

  async function loadServer() {
    try {
      const [plugins, profiles] = await Promise.all([api('/api/plugins'), api('/api/config/ssh/profiles')]);
      const loaded = plugins.plugins.filter((p) => p.status === 'ok').length;
      const names = Object.keys(profiles.profiles);
      replace(
        serverBox,
        h(
          'dl',
          { class: 'kv' },
          h('dt', null, 'This tab'),
          h('dd', null, h('strong', null, shown)),
          h('dt', null, 'Server default'),
          h('dd', null, plugins.server_transport),
          h('dt', null, 'Clusters'),
          h('dd', null, ['local', ...names].join(', ')),
          h('dt', null, 'Plugins'),
          h('dd', null, `${loaded} of ${plugins.plugins.length} loaded`),
        ),
        names.length
          ? null
          : h(
              'div',
              { class: 'empty-inline' },
              h(
                'p',
                { class: 'muted' },
                'No SSH profile yet: jobs go to the Slurm on this machine. Add a profile to reach a cluster over SSH.',
              ),
              h('a', { class: 'btn btn-sm btn-primary', href: '/settings?tab=profiles&new=1' }, 'Create a profile'),
            ),
      );
    } catch (err) {
      replace(serverBox, alertBox(err));
    }
  }

  return {
    element,
    load: () => Promise.all([loadRuns(), loadSweeps(), loadServer()]),
    onEvents(events) {
      const types = new Set(events.map((e) => e.type));
      if (types.has('resync') || types.has('workflow_run.status_changed')) loadRuns();
      if (types.has('resync') || types.has('sweep_run.status_changed')) loadSweeps();
    },
  };
}

export async function render(root, _params, query) {
  const queueOfAll = query.queue === 'all';
  if (allClustersChosen()) return renderAllClusters(root, queueOfAll);
  const cluster = await shownCluster();
  const here = { transport: cluster };
  const stats = h('div', { class: 'stats' });
  const gauges = h('div', { class: 'gauges' });
  const jobsBox = h('div');
  const resourceError = alertBox(null);
  const recent = recentBoxes(cluster);

  replace(
    root,
    queueToggle(queueOfAll),
    stats,
    h(
      'div',
      { class: 'grid grid-main-side' },
      card(queueOfAll ? `Whole queue on ${cluster}` : `My jobs on ${cluster}`, jobsBox, {
        actions: [
          h('a', { class: 'btn btn-sm', href: '/jobs' }, 'All jobs'),
          h('a', { class: 'btn btn-sm btn-primary', href: '/submit' }, 'Submit'),
        ],
        cls: 'flush',
      }),
      card(`GPUs per partition on ${cluster}`, [resourceError, gauges], {
        actions: h('a', { class: 'btn btn-sm', href: '/resources' }, 'Over time'),
      }),
    ),
    recent.element,
  );

  let snapshots = null;
  let queue = null;
  let login = null; // the user "mine" is on this cluster (X-Svc-User), once the queue answered
  let historyStats = null;
  let whole = null; // the cluster in one snapshot: a node in two partitions counts once

  function drawStats() {
    const running = queue ? queue.filter((j) => j.status === 'RUNNING').length : '—';
    const pending = queue ? queue.filter((j) => j.status === 'PENDING').length : '—';
    const total = whole ? whole.total_gpus : null;
    const free = whole ? whole.gpus_available : null;
    const whose = queueOfAll ? "every user's" : login ? `${login}'s` : null;
    const mineQuery = queueOfAll ? '' : '&queue=mine'; // the Jobs list of what was counted
    replace(
      stats,
      statCard('Running jobs', running, { tone: 'info', hint: whose, href: `/jobs?status=RUNNING${mineQuery}` }),
      statCard('Pending jobs', pending, { tone: 'warn', hint: whose, href: `/jobs?status=PENDING${mineQuery}` }),
      statCard('GPUs free', free === null ? '—' : `${free} / ${total}`, {
        tone: 'ok',
        hint: snapshots ? `on ${cluster}, ${snapshots.length} partition${snapshots.length === 1 ? '' : 's'}` : null,
        href: '/resources',
      }),
      statCard('Failed (7 days)', historyStats ? historyStats.failed : '—', {
        tone: 'bad',
        hint: historyStats ? `${historyStats.completed} completed of ${historyStats.total} on ${cluster}` : null,
        href: '/jobs?status=FAILED',
      }),
    );
  }

  function drawGauges() {
    if (!snapshots) return;
    if (!snapshots.length) {
      replace(
        gauges,
        emptyState(
          'No partitions',
          'The scheduler reports no partitions. Check the cluster profile in Settings.',
          h('a', { class: 'btn', href: '/settings' }, 'Settings'),
        ),
      );
      return;
    }
    const gpusInUse = (p) => (p.total_gpus ? `${p.gpus_in_use} / ${p.total_gpus} GPUs in use` : 'no GPUs');
    const types = (p) => {
      const text = gpuTypesText(p.gpu_types);
      return text ? h('div', { class: 'gauge-sub gpu-types' }, text) : null;
    };
    replace(
      gauges,
      whole
        ? h(
            'div',
            { class: 'gauge-whole', dataset: { partition: whole.partition } },
            gauge(whole.gpus_in_use, whole.total_gpus, { label: 'Whole cluster', detail: gpusInUse(whole) }),
            h('div', { class: 'gauge-sub' }, `${whole.gpus_available} free · each node counted once`),
            types(whole),
          )
        : null,
      snapshots.map((p) =>
        h(
          'div',
          { dataset: { partition: p.partition } },
          gauge(p.gpus_in_use, p.total_gpus, { label: p.partition, detail: gpusInUse(p) }),
          h(
            'div',
            { class: 'gauge-sub' },
            `${p.gpus_available} free · ${p.jobs_running} job${p.jobs_running === 1 ? '' : 's'} running · ` +
              `nodes ${p.nodes_idle} idle of ${p.nodes_total}${p.nodes_down ? `, ${p.nodes_down} down` : ''}`,
          ),
          types(p),
          sharedNodesText(p)
            ? h('div', { class: 'gauge-sub shared-nodes', title: SHARED_NODES_TITLE }, sharedNodesText(p))
            : null,
        ),
      ),
    );
  }

  function drawJobs() {
    // at most eight, running before pending (the queue lists pending first, which hid the running ones);
    // a card that leaves jobs out says how many it shows and where the rest are
    const active = queue.filter((j) => j.status === 'RUNNING' || j.status === 'PENDING');
    const mine = [
      ...active.filter((j) => j.status === 'RUNNING'),
      ...active.filter((j) => j.status === 'PENDING'),
    ].slice(0, 8);
    if (!mine.length) {
      replace(
        jobsBox,
        emptyState(
          'Nothing running or pending',
          'Submit a job from a form or a script; it shows up here live.',
          h('a', { class: 'btn btn-primary', href: '/submit' }, 'Submit a job'),
        ),
      );
      return;
    }
    replace(
      jobsBox,
      h(
        'table',
        { class: 'data' },
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            h('th', null, 'Job'),
            h('th', null, 'Name'),
            h('th', null, 'State'),
            h('th', null, 'Partition'),
            h('th', { class: 'num' }, 'GPUs'),
            h('th', { class: 'num' }, 'Elapsed'),
          ),
        ),
        h(
          'tbody',
          null,
          mine.map((j) =>
            h(
              'tr',
              null,
              h('td', null, h('a', { href: jobHref(cluster, j.job_id) }, String(j.job_id))),
              h('td', null, j.name),
              h('td', null, stateBadge(j.status)),
              h('td', null, j.partition),
              h('td', { class: 'num' }, jobGpusText(j.gpus, j.gpu_types)),
              h(
                'td',
                { class: 'num' },
                durationSpan(clockSeconds(j.elapsed_time), j.status === 'RUNNING', { class: 'elapsed' }),
              ),
            ),
          ),
        ),
      ),
      active.length > mine.length
        ? h(
            'p',
            { class: 'more-jobs muted' },
            `${mine.length} of ${active.length} running or pending · the rest in `,
            h('a', { href: queueOfAll ? '/jobs?status=active' : '/jobs?queue=mine&status=active' }, 'Jobs'),
          )
        : null,
    );
  }

  async function loadQueue() {
    try {
      const answer = await api('/api/jobs', { query: { ...here, user: queueOfAll ? 'all' : 'me' }, raw: true });
      login = answer.headers.get('X-Svc-User');
      queue = (await answer.json()).map((j) => ({ ...j, transport: cluster }));
      drawJobs();
    } catch (err) {
      replace(jobsBox, alertBox(err));
    }
    drawStats();
  }

  async function loadResources() {
    try {
      [snapshots, whole] = await Promise.all([
        api('/api/resources', { query: here }),
        api('/api/resources/total', { query: here }),
      ]);
      resourceError.hidden = true;
      drawGauges();
    } catch (err) {
      replace(gauges);
      resourceError.hidden = false;
      resourceError.textContent = errorText(err);
    }
    drawStats();
  }

  drawStats();
  replace(jobsBox, h('div', { class: 'loading' }, 'Loading…'));
  replace(gauges, h('div', { class: 'loading' }, 'Asking the scheduler…'));
  const weekAgo = new Date(Date.now() - 7 * 86400e3).toISOString().slice(0, 10);
  api('/api/history/stats', { query: { ...here, from: weekAgo } })
    .then((s) => {
      historyStats = s;
      drawStats();
    })
    .catch(() => null);
  await Promise.all([loadQueue(), loadResources(), recent.load()]);

  return live(EVENTS, (events) => {
    const types = new Set(events.map((e) => e.type));
    recent.onEvents(events);
    if (types.has('resync')) {
      loadQueue();
      loadResources();
      return;
    }
    const mine = events.filter((e) => e.type === 'job.status_changed' && e.payload?.transport === cluster);
    if (mine.length && queue) {
      applyJobEvents(queue, mine);
      drawJobs();
      drawStats();
    }
    const sampled = events.filter((e) => e.type === 'resources.sampled' && e.payload?.transport === cluster).pop();
    if (sampled) {
      const snaps = snapshotsOf(sampled.payload);
      if (snaps) {
        snapshots = snaps;
        drawGauges();
        api('/api/resources/total', { query: here })
          .then((w) => {
            whole = w;
            drawGauges();
            drawStats();
          })
          .catch(() => null);
      }
    }
  });
}
