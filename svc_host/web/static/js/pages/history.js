// History: outcome statistics over a date range, jobs per day by state, GPU-hours per day, average runtime, and
// how efficiently ended jobs used what they asked for (CPU, memory, time), with suggestions for the flagged ones.
// Of every cluster, or of one, as the tab's cluster says (the pill's "All clusters" or a cluster; the filter in the
// toolbar is the same choice): statistics and charts alike.
import { h, replace, fmtDuration, fmtNumber, fmtDay } from '../dom.js';
import { api } from '../api.js';
import { card, statCard, alertBox, showError } from '../ui.js';
import { emptyState, setQuery } from '../router.js';
import { loadCharts } from '../charts.js';
import { efficiencyTable, FLAG_BELOW } from '../components/efficiency.js';
import { clusterFilter } from '../components/cluster-field.js';
import { chooseListed, clusters, listedCluster } from '../cluster.js';

const STATES = [
  ['COMPLETED', 'Completed', 'var(--ok)'],
  ['FAILED', 'Failed', 'var(--bad)'],
  ['TIMEOUT', 'Timeout', 'var(--purple)'],
  ['CANCELLED', 'Cancelled', 'var(--neutral)'],
  ['RUNNING', 'Running', 'var(--info)'],
  ['PENDING', 'Pending', 'var(--warn)'],
];
const HISTORY_LIMIT = 1000;

/** The measured jobs of [from, to], flagged ones first, newest first within each group. */
export function efficiencyRows(records, from, to) {
  const inRange = records.filter(
    (r) => r.efficiency && isoDay(new Date(r.submitted_at)) >= from && isoDay(new Date(r.submitted_at)) <= to,
  );
  return [...inRange.filter((r) => r.efficiency.flagged), ...inRange.filter((r) => !r.efficiency.flagged)];
}

function isoDay(date) {
  const d = new Date(date.getTime() - date.getTimezoneOffset() * 60000);
  return d.toISOString().slice(0, 10);
}

/** Per local day in [from, to]: counts by state, GPU-hours and runtimes of the records submitted that day. */
export function perDay(records, from, to) {
  const days = [];
  for (let d = new Date(`${from}T00:00:00`); isoDay(d) <= to; d.setDate(d.getDate() + 1)) days.push(isoDay(d));
  const index = new Map(days.map((d, i) => [d, i]));
  const counts = Object.fromEntries(STATES.map(([s]) => [s, days.map(() => 0)]));
  const gpuHours = days.map(() => 0);
  for (const r of records) {
    const i = index.get(isoDay(new Date(r.submitted_at)));
    if (i === undefined) continue;
    const state = counts[r.status]
      ? r.status
      : ['NODE_FAIL', 'OUT_OF_MEMORY', 'BOOT_FAIL'].includes(r.status)
        ? 'FAILED'
        : null;
    if (state) counts[state][i] += 1;
    if (r.elapsed_seconds && r.gpus) gpuHours[i] += (r.gpus * r.elapsed_seconds) / 3600;
  }
  return { days, counts, gpuHours };
}

export async function render(root, _params, query) {
  const today = isoDay(new Date());
  const twoWeeks = isoDay(new Date(Date.now() - 13 * 86400e3));
  const from = h('input', { type: 'date', value: query.from || twoWeeks, max: today, 'aria-label': 'From' });
  const to = h('input', { type: 'date', value: query.to || today, max: today, 'aria-label': 'To' });
  const error = alertBox(null);
  const stats = h('div', { class: 'stats' });
  const effStats = h('div', { class: 'stats', id: 'efficiency-stats' });
  const effBox = h('div');
  const chartBox = h('div');
  const gpuBox = h('div');
  const note = h('p', { class: 'muted small' });
  const presets = [
    ['7 days', 6],
    ['14 days', 13],
    ['30 days', 29],
    ['90 days', 89],
  ].map(([label, back]) =>
    h(
      'button',
      {
        type: 'button',
        class: 'btn btn-sm',
        onClick: () => {
          from.value = isoDay(new Date(Date.now() - back * 86400e3));
          to.value = today;
          load();
        },
      },
      label,
    ),
  );

  let transport = await listedCluster(); // '' every cluster; a deleted profile's jobs stay readable by its name
  const known = await clusters().catch(() => ({ clusters: [] }));
  const clusterSelect = clusterFilter(
    known.clusters.map((t) => t.name),
    transport,
    (name) => {
      transport = name;
      chooseListed(name);
      load();
    },
  );

  replace(
    root,
    card(
      null,
      h(
        'form',
        {
          class: 'toolbar',
          onSubmit: (e) => {
            e.preventDefault();
            load();
          },
        },
        h('label', { class: 'check' }, 'From ', from),
        h('label', { class: 'check' }, 'to ', to),
        clusterSelect,
        h('button', { type: 'submit', class: 'btn btn-primary' }, 'Show'),
        h('span', { class: 'grow' }),
        presets,
      ),
    ),
    error,
    stats,
    h('div', { class: 'grid grid-2' }, card('Jobs per day by state', chartBox), card('GPU-hours per day', gpuBox)),
    note,
    effStats,
    card('Efficiency of ended jobs', effBox),
  );

  const charts = await loadCharts();

  async function load() {
    showError(error, null);
    if (from.value > to.value) {
      showError(error, "'From' must not be after 'To'.");
      return;
    }
    setQuery({ from: from.value === twoWeeks ? '' : from.value, to: to.value === today ? '' : to.value });
    const only = transport ? { transport } : {};
    const [s, records] = await Promise.all([
      api('/api/history/stats', { query: { from: from.value, to: to.value, ...only } }),
      api('/api/history', { query: { limit: HISTORY_LIMIT, ...only } }),
    ]).catch((err) => {
      showError(error, err);
      return [null, null];
    });
    if (!s) return;
    const { days, counts, gpuHours } = perDay(records, from.value, to.value);
    const totalGpuHours = gpuHours.reduce((a, b) => a + b, 0);
    const finished = s.completed + s.failed + s.cancelled;
    const submitted = statCard('Jobs submitted', fmtNumber(s.total, 0), {
      tone: 'info',
      hint: transport ? `on ${transport}` : 'on every cluster',
    });
    submitted.querySelector('.stat-value').id = 'history-total';
    replace(
      stats,
      submitted,
      statCard('Completed', fmtNumber(s.completed, 0), {
        tone: 'ok',
        hint: finished ? `${Math.round((100 * s.completed) / finished)}% of finished` : null,
      }),
      statCard('Failed', fmtNumber(s.failed, 0), {
        tone: 'bad',
        hint: 'incl. timeouts and node failures',
        href: '/jobs?status=FAILED',
      }),
      statCard('Cancelled', fmtNumber(s.cancelled, 0)),
      statCard('Average runtime', s.avg_runtime_seconds ? fmtDuration(s.avg_runtime_seconds) : '—', {
        hint: 'of finished jobs',
      }),
      statCard('GPU-hours', fmtNumber(totalGpuHours, 1), { tone: 'warn' }),
    );
    const e = s.efficiency;
    const pct = (v) => (v === null || v === undefined ? '—' : `${fmtNumber(v, 1)}%`);
    const tone = (v) => (v === null || v === undefined ? '' : v < FLAG_BELOW ? 'warn' : 'ok');
    replace(
      effStats,
      statCard('CPU efficiency', pct(e.cpu_percent), { tone: tone(e.cpu_percent), hint: 'CPU time ÷ CPUs × elapsed' }),
      statCard('Memory efficiency', pct(e.memory_percent), {
        tone: tone(e.memory_percent),
        hint: 'peak RSS ÷ memory asked',
      }),
      statCard('Time used', pct(e.time_percent), { tone: tone(e.time_percent), hint: 'elapsed ÷ time limit' }),
      statCard('Flagged jobs', fmtNumber(e.flagged, 0), {
        tone: e.flagged ? 'warn' : '',
        hint: `of ${fmtNumber(e.measured, 0)} measured (${fmtNumber(e.jobs, 0)} ended)`,
      }),
    );
    const rows = efficiencyRows(records, from.value, to.value);
    replace(
      effBox,
      rows.length
        ? [
            efficiencyTable(rows, { showCluster: true }),
            h(
              'p',
              { class: 'muted small' },
              `A completed job is flagged when it used under ${FLAG_BELOW}% of the CPUs, memory or time ` +
                'it asked for. ' +
                'From Slurm accounting; GPU utilisation shows only where the cluster accounts it.',
            ),
          ]
        : emptyState(
            'No measured jobs in this range',
            'Efficiency appears once a job ends and Slurm accounting has its usage.',
          ),
    );
    if (!s.total) {
      replace(
        chartBox,
        emptyState(
          'No jobs in this range',
          'Pick a longer range, or submit a job.',
          h('a', { class: 'btn', href: '/submit' }, 'Submit a job'),
        ),
      );
      replace(gpuBox, emptyState('No GPU-hours in this range', 'GPU-hours add up as jobs with GPUs finish.'));
      return;
    }
    const labels = days.map((d) => fmtDay(`${d}T12:00:00`));
    const series = STATES.filter(([st]) => counts[st].some(Boolean)).map(([st, label, color]) => ({
      name: label,
      values: counts[st],
      color,
    }));
    if (charts) {
      replace(chartBox, charts.barChart({ categories: labels, series, stacked: true, yLabel: 'jobs', height: 240 }));
      replace(
        gpuBox,
        charts.barChart({
          categories: labels,
          series: [{ name: 'GPU-hours', values: gpuHours.map((v) => Math.round(v * 100) / 100), color: 'var(--warn)' }],
          yLabel: 'GPU-hours',
          height: 240,
        }),
      );
    } else {
      replace(
        chartBox,
        h(
          'table',
          { class: 'data' },
          h(
            'tbody',
            null,
            days.map((_d, i) =>
              h(
                'tr',
                null,
                h('td', null, labels[i]),
                h('td', null, series.map((x) => `${x.name} ${x.values[i]}`).join(' · ')),
              ),
            ),
          ),
        ),
      );
    }
    note.textContent =
      records.length >= HISTORY_LIMIT
        ? `The per-day charts use the newest ${HISTORY_LIMIT} jobs; the totals above count every job in the range.`
        : 'Counts by the day each job was submitted, in your time zone; GPU-hours are GPUs × elapsed time.';
  }

  await load();
  return null;
}
