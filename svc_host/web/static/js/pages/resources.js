// Resources: GPU use per partition over time (the server's sampler history), the current snapshot of the whole
// cluster and of each partition with GPUs per type, live, and
// the site's job limits with what each counts now. With "All clusters" chosen: every cluster's GPUs side by side,
// each leading to its own page.
import { h, replace, fmtPercent } from '../dom.js';
import { api } from '../api.js';
import { card, gauge, alertBox, showError } from '../ui.js';
import { emptyState, setQuery } from '../router.js';
import { loadCharts } from '../charts.js';
import { live, snapshotsOf } from '../live.js';
import { SHARED_NODES_TITLE, gpuTypesText, sharedNodesText } from '../components/gpu-types.js';
import { allClustersChosen, clusters, shownCluster } from '../cluster.js';
import { allClusters } from '../components/cluster-blocks.js';

const RANGES = [
  ['1 h', 1],
  ['6 h', 6],
  ['24 h', 24],
  ['7 days', 168],
  ['30 days', 720],
];

/** "All clusters": each cluster's GPUs now (as the Overview shows them), and a way to one cluster's partitions,
 * history and limits. */
async function renderAllClusters(root) {
  const names = (await clusters()).clusters.map((t) => t.name);
  const view = allClusters(names, {});
  replace(
    root,
    view.element,
    card(
      'One cluster',
      h(
        'p',
        { class: 'cluster-links' },
        'Partitions, GPU use over time and job limits are per cluster: ',
        names.map((name) =>
          h('a', { class: 'btn btn-sm', href: `/resources?cluster=${encodeURIComponent(name)}` }, name),
        ),
      ),
    ),
  );
  await view.load();
  return live(['resources.sampled', 'job.status_changed'], (events) => view.onEvents(events), { wait: 1000 });
}

export async function render(root, _params, query) {
  if (allClustersChosen()) return renderAllClusters(root);
  let hours = RANGES.some(([, v]) => String(v) === query.hours) ? Number(query.hours) : 24;
  const error = alertBox(null);
  const snapshotBox = h('div', { class: 'partition-grid' });
  const limitsBox = h('div', { class: 'site-limits' });
  const gpuChart = h('div');
  const jobsChart = h('div');
  const rangeButtons = RANGES.map(([label, value]) =>
    h(
      'button',
      {
        type: 'button',
        dataset: { hours: String(value) },
        onClick: () => {
          hours = value;
          setQuery({ hours: value === 24 ? '' : value });
          loadHistory();
        },
      },
      label,
    ),
  );
  const subtitle = h('span', { class: 'muted' });
  const charts = await loadCharts();
  const cluster = await shownCluster();
  const here = { transport: cluster };

  replace(
    root,
    error,
    card(`Now on ${cluster}`, snapshotBox),
    card('Job limits', limitsBox, { cls: 'flush' }),
    card('GPUs in use per partition', [gpuChart], {
      actions: [subtitle, h('div', { class: 'segmented', role: 'group', 'aria-label': 'Time range' }, rangeButtons)],
    }),
    card('Running jobs per partition', jobsChart),
  );

  // The whole cluster (each node counted once) first, then each partition.
  function partitionCard(p, name, cls = '') {
    const types = gpuTypesText(p.gpu_types);
    const shared = sharedNodesText(p);
    return h(
      'div',
      { class: ['partition-card', cls], dataset: { partition: p.partition } },
      h(
        'div',
        { class: 'partition-name' },
        name,
        p.has_available_gpus
          ? h(
              'span',
              { class: 'badge state-COMPLETED gpus-free' },
              `${p.gpus_available} GPU${p.gpus_available === 1 ? '' : 's'} free`,
            )
          : h('span', { class: 'badge state-PENDING gpus-free' }, p.total_gpus ? 'full' : 'no GPUs'),
      ),
      gauge(p.gpus_in_use, p.total_gpus, {
        label: 'GPUs in use',
        detail: `${p.gpus_in_use} of ${p.total_gpus} in use · ${fmtPercent(p.gpu_utilization)}`,
      }),
      types ? h('div', { class: 'gauge-sub gpu-types' }, types) : null,
      shared ? h('div', { class: 'gauge-sub shared-nodes', title: SHARED_NODES_TITLE }, shared) : null,
      gauge(p.nodes_total - p.nodes_idle - p.nodes_down, p.nodes_total, {
        label: 'Nodes busy',
        detail:
          `${p.nodes_total - p.nodes_idle - p.nodes_down} / ${p.nodes_total}` +
          `${p.nodes_down ? ` · ${p.nodes_down} down` : ''}`,
      }),
      h('div', { class: 'gauge-sub' }, `${p.jobs_running} job${p.jobs_running === 1 ? '' : 's'} running`),
    );
  }

  function drawSnapshot(snaps, whole) {
    if (!snaps.length) {
      replace(snapshotBox, emptyState('No partitions', 'The scheduler lists no partitions.'));
      return;
    }
    replace(
      snapshotBox,
      partitionCard(whole, 'Whole cluster', 'partition-whole'),
      snaps.map((p) => partitionCard(p, p.partition)),
    );
  }

  async function loadSnapshot() {
    try {
      const [snaps, whole] = await Promise.all([
        api('/api/resources', { query: here }),
        api('/api/resources/total', { query: here }),
      ]);
      drawSnapshot(snaps, whole);
    } catch (err) {
      showError(error, err);
    }
  }

  function drawLimits(l) {
    const rows = [
      ['refuses sbatch beyond', l.submit_limits],
      ['keeps jobs pending beyond', l.run_limits],
    ].flatMap(([kind, items]) =>
      items.map((item) =>
        h(
          'tr',
          null,
          h('td', null, item.name),
          h('td', null, item.scope),
          h('td', { class: 'num' }, String(item.value)),
          h('td', { class: 'num' }, String(item.in_queue)),
          h('td', { class: 'muted' }, kind),
        ),
      ),
    );
    replace(
      limitsBox,
      h(
        'p',
        { class: 'limits-facts' },
        `${l.user} on ${l.cluster || l.transport} · account ${l.account} · default QOS ${l.default_qos} · ` +
          `arrays up to ${l.max_array_size ?? '—'} tasks`,
        l.waiting_submissions
          ? h(
              'span',
              { class: 'badge state-PENDING' },
              `${l.waiting_submissions} run${l.waiting_submissions === 1 ? '' : 's'} waiting to submit`,
            )
          : null,
      ),
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
              ['Limit', 'Of', 'Value', 'In queue', 'Effect'].map((t) => h('th', null, t)),
            ),
          ),
          h('tbody', null, rows),
        ),
      ),
      l.qos.length
        ? h(
            'div',
            { class: 'table-wrap' },
            h(
              'table',
              { class: 'data qos-limits' },
              h(
                'thead',
                null,
                h(
                  'tr',
                  null,
                  ['QOS', 'Limits per user and in all'].map((t) => h('th', null, t)),
                ),
              ),
              h(
                'tbody',
                null,
                l.qos.map((q) =>
                  h(
                    'tr',
                    null,
                    h('td', null, q.name),
                    h(
                      'td',
                      null,
                      [
                        ['MaxSubmitJobsPerUser', q.max_submit_jobs_per_user],
                        ['MaxJobsPerUser', q.max_jobs_per_user],
                        ['GrpSubmitJobs', q.grp_submit_jobs],
                        ['GrpJobs', q.grp_jobs],
                      ]
                        .filter(([, v]) => v !== null)
                        .map(([k, v]) => `${k} ${v}`)
                        .join(' · '),
                    ),
                  ),
                ),
              ),
            ),
          )
        : null,
      h(
        'p',
        { class: 'hint' },
        'Workflows and sweeps wait under the limits that refuse sbatch ' +
          '(a job asking for another QOS counts against that one); each array task counts as one job.',
      ),
    );
  }

  async function loadLimits() {
    try {
      drawLimits(await api('/api/limits', { query: { profile: cluster } }));
    } catch (err) {
      replace(limitsBox, h('p', { class: 'muted limits-facts' }, `Limits unavailable: ${err.detail || err.message}`));
    }
  }

  async function loadHistory() {
    rangeButtons.forEach((b) => {
      const on = b.dataset.hours === String(hours);
      b.classList.toggle('active', on);
      b.setAttribute('aria-pressed', String(on));
    });
    let data;
    try {
      data = await api('/api/resources/history', { query: { ...here, hours } });
    } catch (err) {
      if (err.status === 404) {
        replace(
          gpuChart,
          emptyState(
            'No history on this server',
            'This server keeps no resource history; the snapshot above is current.',
          ),
        );
        replace(jobsChart);
        return;
      }
      throw err;
    }
    subtitle.textContent = data.interval_seconds ? `sampled every ${data.interval_seconds}s on ${data.transport}` : '';
    const toSeries = (key) =>
      data.series.map((s) => ({ name: s.partition, points: s.points.map((p) => [Date.parse(p.timestamp), p[key]]) }));
    if (!data.series.length || !data.series.some((s) => s.points.length)) {
      replace(
        gpuChart,
        emptyState(
          'No samples yet',
          'The server samples GPU use in the background; the first points appear within a minute.',
        ),
      );
      replace(jobsChart);
      return;
    }
    if (!charts) {
      replace(gpuChart, h('p', { class: 'muted' }, 'Charts could not be loaded.'));
      return;
    }
    const maxTotal = Math.max(1, ...data.series.flatMap((s) => s.points.map((p) => p.total_gpus)));
    replace(
      gpuChart,
      charts.lineChart({ series: toSeries('gpus_in_use'), yLabel: 'GPUs in use', height: 260, yMax: maxTotal }),
    );
    replace(jobsChart, charts.lineChart({ series: toSeries('jobs_running'), yLabel: 'jobs', height: 200 }));
  }

  await Promise.all([loadSnapshot(), loadHistory(), loadLimits()]);
  return live(
    ['resources.sampled'],
    (events) => {
      if (events.some((e) => e.type === 'resync')) {
        loadSnapshot();
        loadHistory();
        return;
      }
      const last = events.filter((e) => e.type === 'resources.sampled' && e.payload?.transport === cluster).pop();
      if (last && snapshotsOf(last.payload)) {
        loadSnapshot();
        loadHistory();
        loadLimits();
      }
    },
    { wait: 1000 },
  );
}
