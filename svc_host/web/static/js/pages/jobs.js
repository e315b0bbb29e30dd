// Jobs: the live queue of the tab's cluster (with "All clusters", of every cluster, asked in parallel) and svc's
// history of every cluster in one filterable, sortable table, kept live by job events. A job is its cluster and its
// id: equal ids of two clusters are two rows. A cluster whose queue cannot be read says so in a line of its own.
// The queue is every user's, or with "Mine" (`?queue=mine`, where the Overview's counts of my jobs lead) only the
// user's own (GET /api/jobs?user=me).
import { h, replace, fmtTime, fmtDuration, stateBadge, clockSeconds } from '../dom.js';
import { api } from '../api.js';
import { card, alertBox } from '../ui.js';
import { emptyState, setQuery } from '../router.js';
import { live, applyJobEvents, jobKey } from '../live.js';
import { jobGpusText } from '../components/gpu-types.js';
import { allClustersChosen, chooseListed, clusters, jobHref, shownCluster } from '../cluster.js';
import { FAILED } from '../job-states.js';

const STATUS_FILTERS = ['all', 'active', 'RUNNING', 'PENDING', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'];

const COLUMNS = [
  { key: 'job_id', label: 'Job', num: true, value: (r) => Number(r.job_id) || 0 },
  { key: 'name', label: 'Name', value: (r) => (r.name || '').toLowerCase() },
  { key: 'transport', label: 'Cluster', value: (r) => r.transport || '' },
  { key: 'status', label: 'State', value: (r) => r.status || '' },
  { key: 'partition', label: 'Partition', value: (r) => r.partition || '' },
  { key: 'gpus', label: 'GPUs', num: true, value: (r) => r.gpus || 0 },
  { key: 'elapsed', label: 'Elapsed', num: true, value: (r) => r.elapsed ?? -1 },
  { key: 'submitted_at', label: 'Submitted', value: (r) => r.submitted_at || '' },
  { key: 'source', label: 'From', value: (r) => r.source || '' },
];

/** One row per job (cluster and id): history rows (svc's own jobs, every cluster) with the live queues laid over
 * them (`queues`: `[name, jobs]` pairs, one per cluster read). Two names that reach one Slurm cluster
 * (`sameCluster`: name -> that cluster's key, as GET /api/resources/cluster gives it; a name it lacks is a cluster
 * of its own) share its job ids: their rows of one id are one job, which lists every name it was seen through
 * (`names`, the row's own `transport` first). */
export function mergeJobs(queues, historyRows, sameCluster = new Map()) {
  const keyOf = (name, id) => jobKey(sameCluster.get(name) || `name:${name}`, id);
  const rows = new Map();
  const seenAs = (row, name) => {
    if (!row.names.includes(name)) row.names.push(name);
  };
  for (const r of historyRows) {
    const key = keyOf(r.transport, r.job_id);
    if (rows.has(key)) seenAs(rows.get(key), r.transport);
    else rows.set(key, { ...r, names: [r.transport], elapsed: r.elapsed_seconds, inQueue: false });
  }
  for (const [cluster, queue] of queues) {
    for (const q of queue) {
      const key = keyOf(cluster, q.job_id);
      const known = rows.get(key);
      const elapsed = clockSeconds(q.elapsed_time);
      if (known) {
        const partition = q.partition || known.partition;
        Object.assign(known, { status: q.status, partition, gpu_types: q.gpu_types, elapsed, inQueue: true });
        seenAs(known, cluster);
      } else {
        const row = { ...q, transport: cluster, names: [cluster], elapsed, inQueue: true };
        rows.set(key, { ...row, source: null, submitted_at: null });
      }
    }
  }
  return [...rows.values()];
}

/** Every name a row's job was seen through (a row a live event added has its own only). */
const namesOf = (r) => r.names || [r.transport];

const clusterKeys = new Map(); // name -> its Slurm cluster's key (null: it cannot tell), asked once per page load

/** Which Slurm cluster each of `names` reaches (GET /api/resources/cluster, kept by the server for a day). */
async function sameClusterOf(names) {
  await Promise.all(
    [...new Set(names)]
      .filter((name) => name && !clusterKeys.has(name))
      .map(async (name) => {
        const identity = await api('/api/resources/cluster', { query: { transport: name } }).catch(() => null);
        clusterKeys.set(name, identity?.key || null);
      }),
  );
  return new Map([...clusterKeys].filter(([, key]) => key));
}

export async function render(root, _params, query) {
  const state = {
    q: query.q || '',
    status: STATUS_FILTERS.includes(query.status) ? query.status : 'all',
    sort: query.sort || 'submitted_at',
    dir: query.dir === 'asc' ? 'asc' : 'desc',
    all: allClustersChosen(), // the tab's choice: "All clusters" in the pill, or here
    mine: query.queue === 'mine',
  };
  const cluster = await shownCluster();
  let rows = [];
  const notices = h('div', { class: 'jobs-queue-notices' }); // one line per cluster whose queue could not be read
  const search = h('input', {
    type: 'search',
    class: 'search',
    placeholder: 'Search jobs  (press /)',
    title: 'Matches id, name, partition and command',
    'aria-label': 'Filter jobs (press / to focus)',
    value: state.q,
  });
  const statusSelect = h('div', { class: 'segmented', role: 'group', 'aria-label': 'State filter' });
  const count = h('span', { class: 'muted' });
  const tbody = h('tbody');
  const thead = h('thead');
  const tableBox = h('div', { class: 'table-wrap' }, h('table', { class: 'data', id: 'jobs-table' }, thead, tbody));
  const emptyBox = h('div');

  const statusButtons = STATUS_FILTERS.map((s) =>
    h(
      'button',
      {
        type: 'button',
        dataset: { status: s },
        onClick: () => {
          state.status = s;
          sync();
        },
      },
      s === 'all' ? 'All' : s === 'active' ? 'Active' : s[0] + s.slice(1).toLowerCase(),
    ),
  );
  statusSelect.append(...statusButtons);
  const clusterButtons = [
    [false, cluster],
    [true, 'All clusters'],
  ].map(([all, label]) =>
    h(
      'button',
      {
        type: 'button',
        dataset: { all: String(all) },
        onClick: () => {
          if (state.all !== all) {
            state.all = all;
            chooseListed(all ? '' : cluster);
            sync();
            load();
          }
        },
      },
      label,
    ),
  );
  const clusterSelect = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Cluster filter' }, clusterButtons);
  const queueButtons = [
    [true, 'Mine'],
    [false, 'Whole queue'],
  ].map(([mine, label]) =>
    h(
      'button',
      {
        type: 'button',
        dataset: { queue: mine ? 'mine' : 'all' },
        onClick: () => {
          if (state.mine !== mine) {
            state.mine = mine;
            sync();
            load();
          }
        },
      },
      label,
    ),
  );
  const queueSelect = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Whose jobs' }, queueButtons);

  let searchTimer = null;
  search.addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      state.q = search.value.trim();
      sync();
    }, 120);
  });

  function drawHead() {
    replace(
      thead,
      h(
        'tr',
        null,
        COLUMNS.map((c) =>
          h(
            'th',
            {
              class: c.num ? 'num' : null,
              'aria-sort': state.sort === c.key ? (state.dir === 'asc' ? 'ascending' : 'descending') : null,
            },
            h(
              'button',
              {
                type: 'button',
                onClick: () => {
                  if (state.sort === c.key) state.dir = state.dir === 'asc' ? 'desc' : 'asc';
                  else {
                    state.sort = c.key;
                    state.dir = c.num || c.key === 'submitted_at' ? 'desc' : 'asc';
                  }
                  sync();
                },
              },
              c.label,
            ),
          ),
        ),
      ),
    );
  }

  function visibleRows() {
    const needle = state.q.toLowerCase();
    const filtered = rows.filter((r) => {
      if (!state.all && !namesOf(r).includes(cluster)) return false;
      if (state.status === 'active' && !(r.status === 'RUNNING' || r.status === 'PENDING')) return false;
      if (state.status === 'FAILED' && !FAILED.has(r.status)) return false;
      if (!['all', 'active', 'FAILED'].includes(state.status) && r.status !== state.status) return false;
      if (!needle) return true;
      return (
        String(r.job_id).includes(needle) ||
        (r.name || '').toLowerCase().includes(needle) ||
        (r.partition || '').toLowerCase().includes(needle) ||
        (r.command || []).join(' ').toLowerCase().includes(needle)
      );
    });
    const col = COLUMNS.find((c) => c.key === state.sort) || COLUMNS[0];
    const sign = state.dir === 'asc' ? 1 : -1;
    filtered.sort((a, b) => {
      const x = col.value(a);
      const y = col.value(b);
      if (x < y) return -sign;
      if (x > y) return sign;
      return (Number(b.job_id) || 0) - (Number(a.job_id) || 0);
    });
    return filtered;
  }

  function rowFor(r) {
    const failed = FAILED.has(r.status);
    return h(
      'tr',
      { dataset: { jobId: String(r.job_id), cluster: r.transport || '' } },
      h('td', { class: 'num' }, h('a', { href: jobHref(r.transport, r.job_id) }, String(r.job_id))),
      h('td', { class: 'job-name-cell', title: r.name || null }, r.name || h('span', { class: 'muted' }, '—')),
      h(
        'td',
        { class: 'job-clusters', title: namesOf(r).length > 1 ? 'One Slurm cluster, reached through each' : null },
        namesOf(r).map((name) => h('span', { class: 'cluster-chip', title: name || null }, name || '?')),
      ),
      // a failed job's Log sits by its state, where the eye is, not in a last column a narrow window scrolls away
      h(
        'td',
        { class: 'job-state-cell' },
        stateBadge(r.status),
        failed && r.exit_code !== null && r.exit_code !== undefined
          ? h('span', { class: 'exit-bad', title: 'exit code' }, ` exit ${r.exit_code}`)
          : null,
        failed
          ? h(
              'a',
              {
                class: 'btn btn-sm btn-ghost-danger job-log',
                href: jobHref(r.transport, r.job_id, { log: 'stderr' }),
                title: 'Its stderr',
              },
              'Log',
            )
          : null,
      ),
      // a job pending in several partitions lists them all: a line may break after each comma
      h(
        'td',
        { class: 'job-wraps' },
        (r.partition || '').split(',').map((name, i) => (i ? [',', h('wbr'), name] : name)),
      ),
      h('td', { class: 'num job-gpus' }, jobGpusText(r.gpus, r.gpu_types)),
      h('td', { class: 'num elapsed' }, fmtDuration(r.elapsed)),
      h(
        'td',
        { class: 'job-wraps' },
        r.submitted_at ? fmtTime(r.submitted_at) : h('span', { class: 'muted' }, 'not via svc'),
      ),
      h('td', { class: 'job-wraps' }, r.source || ''),
    );
  }

  function draw() {
    const visible = visibleRows();
    statusButtons.forEach((b) => {
      const on = b.dataset.status === state.status;
      b.classList.toggle('active', on);
      b.setAttribute('aria-pressed', String(on));
    });
    clusterButtons.forEach((b) => {
      const on = b.dataset.all === String(state.all);
      b.classList.toggle('active', on);
      b.setAttribute('aria-pressed', String(on));
    });
    queueButtons.forEach((b) => {
      const on = (b.dataset.queue === 'mine') === state.mine;
      b.classList.toggle('active', on);
      b.setAttribute('aria-pressed', String(on));
    });
    drawHead();
    const frag = document.createDocumentFragment();
    for (const r of visible) frag.append(rowFor(r));
    tbody.replaceChildren(frag);
    count.textContent = `${visible.length} of ${rows.length} jobs`;
    tableBox.hidden = !visible.length;
    if (visible.length) replace(emptyBox);
    else if (!rows.length)
      replace(
        emptyBox,
        emptyState(
          'No jobs yet',
          'Nothing in the queue and nothing submitted through svc.',
          h('a', { class: 'btn btn-primary', href: '/submit' }, 'Submit a job'),
        ),
      );
    else
      replace(
        emptyBox,
        emptyState(
          'No job matches',
          'Change the filter to see more jobs.',
          h(
            'button',
            {
              type: 'button',
              class: 'btn',
              onClick: () => {
                state.q = '';
                search.value = '';
                state.status = 'all';
                sync();
              },
            },
            'Clear filters',
          ),
        ),
      );
  }

  function sync() {
    setQuery({
      queue: state.mine ? 'mine' : '',
      q: state.q,
      status: state.status === 'all' ? '' : state.status,
      sort: state.sort === 'submitted_at' ? '' : state.sort,
      dir: state.dir === 'desc' ? '' : state.dir,
    });
    draw();
  }

  replace(
    root,
    notices,
    card(
      null,
      [
        h(
          'div',
          { class: 'toolbar card-toolbar' },
          search,
          clusterSelect,
          queueSelect,
          statusSelect,
          h('span', { class: 'grow' }),
          count,
        ),
        tableBox,
        emptyBox,
      ],
      { cls: 'flush' },
    ),
  );
  replace(
    tbody,
    h('tr', null, h('td', { colspan: String(COLUMNS.length), class: 'loading' }, 'Loading the queue and history…')),
  );

  /** `[name, jobs, error]` of each cluster shown: its queue (one request each, in parallel), or why not. */
  async function readQueues() {
    const names = state.all ? (await clusters()).clusters.map((t) => t.name) : [cluster];
    const user = state.mine ? 'me' : 'all';
    return Promise.all(
      names.map((name) =>
        api('/api/jobs', { query: { transport: name, user } }).then(
          (jobs) => [name, jobs, null],
          (err) => [name, [], err],
        ),
      ),
    );
  }

  function drawNotices(read) {
    replace(
      notices,
      read
        .filter(([, , err]) => err)
        .map(([name, , err]) => {
          const box = alertBox(`${name}: the queue could not be read (${err.detail || err.message})`);
          box.classList.add('jobs-queue-notice');
          box.title = box.textContent; // the line may be cut at the window's edge
          box.dataset.cluster = name;
          return box;
        }),
    );
  }

  let loads = 0;
  async function load() {
    const seq = ++loads;
    const [read, historyRows] = await Promise.all([readQueues(), api('/api/history', { query: { limit: 1000 } })]);
    performance.mark('svc-jobs-data');
    if (seq !== loads) return; // another choice (cluster, "Mine" or "Whole queue") was made meanwhile: its answer draws
    drawNotices(read);
    const queues = read.map(([name, jobs]) => [name, jobs]);
    const names = [...queues.map(([name]) => name), ...historyRows.map((r) => r.transport)];
    const known = new Set(clusterKeys.keys());
    rows = mergeJobs(queues, historyRows, new Map([...clusterKeys].filter(([, key]) => key)));
    draw();
    performance.mark('svc-jobs-drawn');
    if (names.every((name) => known.has(name))) return;
    // a cluster met for the first time: which Slurm cluster it is, then one row per job of each
    const sameCluster = await sameClusterOf(names);
    if (seq !== loads) return;
    rows = mergeJobs(queues, historyRows, sameCluster);
    draw();
  }
  await load();

  // Running jobs' elapsed time moves on screen between events (no scheduler query: it is counted here).
  const TICK_S = 5;
  const ticker = setInterval(() => {
    for (const r of rows) {
      if (r.status !== 'RUNNING' || r.elapsed === null || r.elapsed === undefined) continue;
      r.elapsed += TICK_S;
      const cell = tbody.querySelector(
        `tr[data-job-id="${CSS.escape(String(r.job_id))}"][data-cluster="${CSS.escape(r.transport || '')}"] td.elapsed`,
      );
      if (cell) cell.textContent = fmtDuration(r.elapsed);
    }
  }, TICK_S * 1000);

  const unsubscribe = live(['job.status_changed'], (events) => {
    if (events.some((e) => e.type === 'resync')) {
      load();
      return;
    }
    applyJobEvents(rows, events);
    for (const r of rows) {
      if (r.elapsed === undefined) r.elapsed = null;
      if (r.status === 'RUNNING' && r.elapsed === null) r.elapsed = 0; // it just started: count from here
    }
    draw();
  });
  return () => {
    clearInterval(ticker);
    unsubscribe();
  };
}
