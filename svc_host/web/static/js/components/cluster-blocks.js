// The Overview's "All clusters" view: one block per usable cluster, side by side, each with its GPUs (the whole
// cluster, each node counted once, and per GPU type) and its queue (running / pending). Each block asks its own
// cluster (GET /api/resources/total and GET /api/jobs with ?transport=<name>), so a cluster that does not answer
// shows its error on its own block while the others draw. Two profiles can reach one Slurm cluster (two login
// nodes, `local` on a login node): GET /api/resources/cluster names the cluster each one reaches, the totals
// count such a cluster once (GPUs per type summed over the clusters), and its later blocks say whose cluster they
// show. The queue counted is the user's own (GET /api/jobs?user=me: each profile's login, `local`'s the server's),
// or everyone's with `queueOfAll`.
import { h, replace } from '../dom.js';
import { api, errorText } from '../api.js';
import { card, statCard, gauge } from '../ui.js';
import { gpuTypesText, sumGpuTypes } from './gpu-types.js';
import { byClusterOrder } from '../cluster.js';

/** Counts of a queue answer: `{running, pending}`. */
export function queueCounts(queue) {
  return {
    running: queue.filter((j) => j.status === 'RUNNING').length,
    pending: queue.filter((j) => j.status === 'PENDING').length,
  };
}

/** `{element, loadGpus(), loadQueue(), loadIdentity(), sameAs(first), state, name}` for one cluster; `onChange()`
 * after each load (for the totals). */
function clusterBlock(name, onChange, queueOfAll) {
  const state = { whole: null, queue: null, gpuError: null, queueError: null, identity: null };
  const gpus = h('div', { class: 'cluster-block-gpus' }, h('div', { class: 'loading' }, 'Asking the scheduler…'));
  const queue = h('div', { class: 'cluster-block-queue muted' }, 'Reading the queue…');
  const same = h('div', { class: 'cluster-block-same muted' });
  const link = `/?cluster=${encodeURIComponent(name)}`;
  const element = h(
    'section',
    { class: 'cluster-block', dataset: { cluster: name }, 'aria-label': `Cluster ${name}` },
    h(
      'div',
      { class: 'cluster-block-head' },
      h('a', { class: 'cluster-block-name', href: link, title: `Show only ${name} in this tab` }, name),
    ),
    same,
    gpus,
    queue,
  );

  /** Say that this block shows the Slurm cluster `first` shows too (null: it is a cluster of its own). */
  function sameAs(first) {
    replace(same, first ? `the same Slurm cluster as ${first} (${state.identity.name}): counted once above` : null);
  }

  function drawGpus() {
    if (state.gpuError) {
      replace(
        gpus,
        h(
          'div',
          { class: 'alert alert-error cluster-block-error', role: 'alert' },
          `Does not answer: ${state.gpuError}`,
        ),
      );
      return;
    }
    const w = state.whole;
    const types = gpuTypesText(w.gpu_types);
    replace(
      gpus,
      gauge(w.gpus_in_use, w.total_gpus, {
        label: 'GPUs',
        detail: w.total_gpus ? `${w.gpus_available} / ${w.total_gpus} free` : 'no GPUs',
      }),
      h(
        'div',
        { class: 'gauge-sub' },
        `nodes ${w.nodes_idle} idle of ${w.nodes_total}` +
          `${w.nodes_down ? `, ${w.nodes_down} down` : ''} · each node counted once`,
      ),
      types ? h('div', { class: 'gauge-sub gpu-types' }, types) : null,
    );
  }

  function drawQueue() {
    if (state.queueError) {
      // the same failure as the GPUs' is said once, above
      replace(
        queue,
        state.queueError === state.gpuError
          ? null
          : h('span', { class: 'exit-bad' }, `queue unknown: ${state.queueError}`),
      );
      return;
    }
    const { running, pending } = queueCounts(state.queue);
    const whose = queueOfAll ? '' : '&queue=mine';
    const list = (status) => `/jobs?status=${status}&cluster=${encodeURIComponent(name)}${whose}`;
    replace(
      queue,
      h(
        'a',
        { class: 'queue-count', href: list('RUNNING') },
        h('strong', { class: 'queue-running' }, String(running)),
        ' running',
      ),
      ' · ',
      h(
        'a',
        { class: 'queue-count', href: list('PENDING') },
        h('strong', { class: 'queue-pending' }, String(pending)),
        ' pending',
      ),
    );
  }

  async function loadIdentity() {
    // which cluster this is, asked once: it does not change while the page is open; unknown, it counts on its own
    state.identity = await api('/api/resources/cluster', { query: { transport: name } }).catch(() => null);
    onChange();
  }

  /** Read `path` of this cluster into `state[key]`, or its failure into `state[errorKey]`. */
  async function read(path, key, errorKey, extra = {}) {
    try {
      state[key] = await api(path, { query: { transport: name, ...extra } });
      state[errorKey] = null;
    } catch (err) {
      state[key] = null;
      state[errorKey] = errorText(err);
    }
  }

  async function loadGpus() {
    await read('/api/resources/total', 'whole', 'gpuError');
    drawGpus();
    if (state.queueError) drawQueue();
    onChange();
  }

  async function loadQueue() {
    await read('/api/jobs', 'queue', 'queueError', { user: queueOfAll ? 'all' : 'me' });
    drawQueue();
    onChange();
  }

  return { element, loadGpus, loadQueue, loadIdentity, sameAs, state, name };
}

/** The blocks grouped by the Slurm cluster they reach, in their order; a block whose cluster is unknown is a
 * group of its own. */
function sameClusters(blocks) {
  const groups = new Map();
  blocks.forEach((b, i) => {
    const key = b.state.identity?.key || `block ${i}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(b);
  });
  return [...groups.values()];
}

/** The "All clusters" overview of `names`: totals on top, a block per cluster, counting the user's jobs (every
 * user's with `queueOfAll`). Returns `{element, load(), onEvents(events)}`. */
export function allClusters(names, { queueOfAll = false } = {}) {
  const stats = h('div', { class: 'stats' });
  let blocks = [];
  function drawTotals() {
    // each Slurm cluster once, however many profiles reach it: its first block that answered speaks for it
    const groups = sameClusters(blocks);
    for (const group of groups) for (const [i, b] of group.entries()) b.sameAs(i ? group[0].name : null);
    const answered = groups.map((g) => g.find((b) => b.state.whole)).filter(Boolean);
    const queued = groups.map((g) => g.filter((b) => b.state.queue)).filter((g) => g.length);
    const sum = (list, f) => list.reduce((acc, b) => acc + f(b), 0);
    // a job seen through two profiles of one cluster is one job: its ids are merged per cluster
    const counts = queued.map((g) =>
      queueCounts([...new Map(g.flatMap((b) => b.state.queue).map((j) => [j.job_id, j])).values()]),
    );
    const shared = blocks.length - groups.length;
    // GPUs per type over every cluster (each counted once): a100 of two clusters is one figure
    const typed = gpuTypesText(sumGpuTypes(answered.map((b) => b.state.whole.gpu_types || [])));
    replace(
      stats,
      statCard('Running jobs', queued.length ? counts.reduce((a, c) => a + c.running, 0) : '—', {
        tone: 'info',
        hint: `${whose} on ${queued.length} of ${groups.length} clusters`,
      }),
      statCard('Pending jobs', queued.length ? counts.reduce((a, c) => a + c.pending, 0) : '—', {
        tone: 'warn',
        hint: whose,
      }),
      statCard(
        'GPUs free',
        answered.length
          ? `${sum(answered, (b) => b.state.whole.gpus_available)} / ${sum(answered, (b) => b.state.whole.total_gpus)}`
          : '—',
        {
          tone: 'ok',
          hint: [
            `${answered.length} of ${groups.length} clusters answer`,
            typed ? h('div', { class: 'gpu-types' }, typed) : null,
          ],
        },
      ),
      statCard('Clusters', String(groups.length), {
        hint: [
          groups.length - answered.length ? `${groups.length - answered.length} not answering` : 'all answer',
          shared ? `${blocks.length} profiles` : null,
        ]
          .filter(Boolean)
          .join(' · '),
      }),
    );
  }
  const ordered = [...names].sort(byClusterOrder); // as the pill
  const whose = queueOfAll ? "every user's" : 'yours';
  blocks = ordered.map((name) => clusterBlock(name, drawTotals, queueOfAll));
  drawTotals();
  const element = h(
    'div',
    { class: 'col all-clusters' },
    stats,
    card(
      'GPUs and queues on every cluster',
      h(
        'div',
        { class: 'cluster-blocks' },
        blocks.map((b) => b.element),
      ),
    ),
  );
  const byName = new Map(blocks.map((b) => [b.element.dataset.cluster, b]));
  return {
    element,
    load: () => Promise.all(blocks.flatMap((b) => [b.loadIdentity(), b.loadGpus(), b.loadQueue()])),
    /** Live events: a job's change re-reads its cluster's queue, a sample its cluster's GPUs. */
    onEvents(events) {
      const resync = events.some((e) => e.type === 'resync');
      for (const [name, block] of byName) {
        const about = events.filter((e) => e.payload?.transport === name);
        if (resync || about.some((e) => e.type === 'job.status_changed')) block.loadQueue();
        if (resync || about.some((e) => e.type === 'resources.sampled')) block.loadGpus();
      }
    },
  };
}
