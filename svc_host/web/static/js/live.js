// Live updates for pages: the shared event stream (events.js) when it loads, debounced so a burst of events
// becomes one redraw. Pages never poll the scheduler themselves.

/**
 * Call `handler(events)` at most every `wait` ms with the events of `types` that arrived meanwhile.
 * Returns the unsubscribe function (give it back from the page's render as its cleanup); its `ready` promise
 * resolves once events are being received, so a page that read its data before can read it once more then
 * and miss nothing that changed in between.
 */
export function live(types, handler, { wait = 300 } = {}) {
  let pending = [];
  let timer = null;
  let unsubscribe = null;
  let stopped = false;
  const ready = import('./events.js')
    .then(({ subscribe }) => {
      if (stopped) return;
      unsubscribe = subscribe(types, (event) => {
        pending.push(event);
        if (timer === null) {
          timer = setTimeout(() => {
            timer = null;
            const batch = pending;
            pending = [];
            if (!stopped) handler(batch);
          }, wait);
        }
      });
    })
    .catch((err) => console.warn('live updates unavailable', err));
  const stop = () => {
    stopped = true;
    if (timer !== null) clearTimeout(timer);
    if (unsubscribe) unsubscribe();
  };
  stop.ready = ready;
  return stop;
}

/**
 * `load` run one call at a time: a call made while one runs asks for one more run after it (however many calls
 * come meanwhile), and resolves when that run is done. So the page draws its reads in the order they were made:
 * an answer that left the server before a change is never drawn over one that left after it (a cancel's 202
 * says `draining`, and may arrive after the event-driven read that saw `cancelled`).
 */
export function oneAtATime(load) {
  let running = null;
  let next = null;
  const start = () => {
    running = Promise.resolve()
      .then(load)
      .finally(() => {
        running = null;
      });
    return running;
  };
  return () => {
    if (!running) return start();
    if (!next)
      next = running
        .catch(() => null)
        .then(() => {
          next = null;
          return start();
        });
    return next;
  };
}

/** Resource snapshots out of a `resources.sampled` payload (an array, or {snapshots|partitions: [...]}). */
export function snapshotsOf(payload) {
  if (Array.isArray(payload)) return payload;
  if (payload && Array.isArray(payload.snapshots)) return payload.snapshots;
  if (payload && Array.isArray(payload.partitions)) return payload.partitions;
  return null;
}

/** The key of a job everywhere on the page: its cluster and its id (two clusters number their jobs alike). */
export function jobKey(transport, jobId) {
  return `${transport || ''}/${jobId}`;
}

/**
 * Fold `job.status_changed` events into job rows (by cluster and job id), in place: known rows take the new state
 * and exit code, unknown jobs are added. Pages update from events instead of asking the scheduler again, so twenty
 * open dashboards cost no more scheduler queries than one.
 */
export function applyJobEvents(rows, events) {
  const byKey = new Map(rows.map((row) => [jobKey(row.transport, row.job_id), row]));
  for (const event of events) {
    if (event.type !== 'job.status_changed') continue;
    const p = event.payload || {};
    const key = jobKey(p.transport, p.job_id);
    const row = byKey.get(key);
    if (row) {
      row.status = p.to;
      if (p.exit_code !== undefined && p.exit_code !== null) row.exit_code = p.exit_code;
    } else {
      const added = {
        job_id: p.job_id,
        name: p.name || '',
        status: p.to,
        exit_code: p.exit_code ?? null,
        partition: '',
        gpus: 0,
        nodes: 1,
        elapsed_time: '',
        command: [],
        transport: p.transport,
      };
      rows.push(added);
      byKey.set(key, added);
    }
  }
  return rows;
}
