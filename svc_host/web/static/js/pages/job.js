// One job of one cluster (`/jobs/<id>?cluster=<name>`; none: the tab's cluster), or one task of a job array (`123_4`):
// state, exit code, timeline of stored transitions, resources, script, live stdout/stderr tail, cancel.
import { h, replace, fmtTime, fmtClock, fmtDuration, fmtBytes, stateBadge, clockSeconds } from '../dom.js';
import { api, errorText } from '../api.js';
import { card, alertBox, confirmDialog, toast, actionButton } from '../ui.js';
import { emptyState, setTitle, setQuery } from '../router.js';
import { live } from '../live.js';
import { pendingBox } from '../components/pending.js';
import { jobGpusText } from '../components/gpu-types.js';
import { bindPageCluster, clusterQuery } from '../cluster.js';
import { FAILED } from '../job-states.js';

const ACTIVE = new Set(['PENDING', 'RUNNING', 'CONFIGURING', 'COMPLETING', 'SUSPENDED', 'REQUEUED', 'RESIZING']);
/** The states of a job that ended in failure (the run page opens these on their stderr). */
const TAIL_MS = 2000;
const UNTRACKED_MS = 3000;
const CHUNK = 262144; // the API's largest log read (bytes)
const MAX_LOG_CHARS = 2_000_000; // the browser keeps the last ~2 MB of a log; the download has all of it

export async function render(root, params, query) {
  const jobId = params.id;
  const path = location.pathname; // this page's, while its job is asked for
  if (!/^\d+(_\d+)?$/.test(jobId)) {
    replace(
      root,
      emptyState(
        'Not a job id',
        `"${jobId}" is not a Slurm job id (digits, or <id>_<index> for a task of a job array).`,
        h('a', { class: 'btn', href: '/jobs' }, 'All jobs'),
      ),
    );
    return null;
  }
  const where = clusterQuery(); // the URL's cluster (the router keeps the tab's there), else the server's default
  let job;
  try {
    job = await api(`/api/jobs/${jobId}`, { query: where });
  } catch (err) {
    if (err.status === 404) {
      replace(
        root,
        emptyState(`Job ${jobId} not found`, errorText(err), h('a', { class: 'btn', href: '/jobs' }, 'All jobs')),
      );
      return null;
    }
    throw err;
  }
  where.transport = job.transport; // pinned: a later change of the server's default does not move this page
  bindPageCluster(job.transport, path); // the URL and the pill name the job's cluster, whatever the tab's choice
  setTitle(`Job ${jobId} on ${job.transport}`);

  const head = h('div', { class: 'job-head' });
  const headError = alertBox(null);
  const timeline = h('ol', { class: 'timeline' });
  const details = h('dl', { class: 'kv' });
  const scriptBox = h('div');
  // a failed job opens on its stderr (when it has any) unless the URL names a log
  const log = logViewer(jobId, where, query.log === 'stderr' ? 'stderr' : 'stdout', {
    stderrFirst: !query.log && FAILED.has(job.status),
  });
  const why = pendingBox(jobId, where);
  function explainIfPending() {
    if (job.status === 'PENDING') why.load();
    else why.element.hidden = true;
  }

  function drawHead() {
    const failed = FAILED.has(job.status);
    const cancel = ACTIVE.has(job.status)
      ? actionButton(
          'Cancel job',
          async () => {
            const ok = await confirmDialog({
              title: `Cancel job ${jobId} on ${job.transport}?`,
              body: [h('p', null, `"${job.name}" is ${job.status}. Slurm stops it now; this cannot be undone.`)],
              confirmLabel: 'Cancel job',
              danger: true,
            });
            if (!ok) return;
            await api(`/api/jobs/${jobId}`, { method: 'DELETE', query: where });
            toast(`Job ${jobId} on ${job.transport} cancelled`, 'ok');
            await refresh();
          },
          { cls: 'btn btn-danger', errorBox: headError },
        )
      : null;
    replace(
      head,
      h('span', { class: 'job-name' }, job.name || `job ${jobId}`),
      h('span', { class: 'muted mono' }, `#${jobId}`),
      h('span', { class: 'cluster-chip', id: 'job-cluster', title: 'The cluster this job runs on' }, job.transport),
      h('span', { id: 'job-state' }, stateBadge(job.status)),
      job.status === 'CANCELLED'
        ? h(
            'span',
            { id: 'job-cancelled-by', class: 'muted' },
            job.cancelled_by ? `cancelled by ${job.cancelled_by}` : 'cancelled',
          )
        : null,
      job.exit_code !== null && job.exit_code !== undefined && !(job.status === 'CANCELLED' && !job.exit_code)
        ? h(
            'span',
            { id: 'job-exit', class: failed || job.exit_code ? 'exit-bad' : 'muted' },
            `exit code ${job.exit_code}${job.signal ? ` (signal ${job.signal})` : ''}`,
          )
        : null,
      job.reason && job.reason !== 'None' ? h('span', { class: 'muted' }, `reason: ${job.reason}`) : null,
      h('span', { class: 'grow' }),
      failed
        ? h(
            'button',
            {
              type: 'button',
              class: 'btn',
              onClick: () => {
                log.show('stderr');
                log.element.scrollIntoView({ behavior: 'smooth' });
              },
            },
            'Show stderr',
          )
        : null,
      cancel,
    );
  }

  function drawTimeline() {
    const items = [];
    if (job.submitted_at)
      items.push({ to: 'SUBMITTED', at: job.submitted_at, note: job.source ? `via ${job.source}` : '' });
    for (const t of job.transitions || [])
      items.push({ to: t.to, at: t.at, note: t.raw_state && t.raw_state !== t.to ? t.raw_state : '' });
    if (!items.length) {
      replace(timeline, h('li', { class: 'muted' }, 'svc did not submit this job, so it has no stored transitions.'));
      return;
    }
    replace(
      timeline,
      items.map((it) =>
        h(
          'li',
          null,
          h('span', { class: 'tl-dot' }),
          it.to === 'SUBMITTED' ? h('strong', null, 'Submitted') : stateBadge(it.to),
          it.note ? h('span', { class: 'muted' }, ` ${it.note}`) : null,
          h('div', { class: 'tl-time', title: fmtTime(it.at) }, fmtTime(it.at)),
        ),
      ),
    );
  }

  // The elapsed time moves on screen while the job runs (counted here; refreshed from the API on each event).
  let elapsed = clockSeconds(job.elapsed_time);
  let elapsedAt = Date.now();
  function elapsedText() {
    if (elapsed === null) return '—';
    const extra = job.status === 'RUNNING' ? (Date.now() - elapsedAt) / 1000 : 0;
    return fmtDuration(elapsed + extra);
  }
  const elapsedTicker = setInterval(() => {
    const el = document.getElementById('job-elapsed');
    if (el && job.status === 'RUNNING') el.textContent = elapsedText();
  }, 1000);

  function drawDetails() {
    const r = job.resources || {};
    const rows = [
      ['Partition', job.partition || r.partition || '—'],
      ['Nodes', String(job.nodes ?? r.nodes ?? '—')],
      [
        'GPUs',
        h(
          'span',
          { id: 'job-gpus' },
          `${jobGpusText(job.gpus, job.gpu_types)}${r.gpus_per_node ? ` (${r.gpus_per_node} per node)` : ''}`,
        ),
      ],
      r.cpus_per_task ? ['CPUs per task', String(r.cpus_per_task)] : null,
      r.memory_per_node ? ['Memory per node', r.memory_per_node] : null,
      ['Time limit', h('span', { id: 'job-time-limit' }, limitText(job.time_limit || r.time_limit))],
      ['Elapsed', h('span', { id: 'job-elapsed' }, elapsedText())],
      ['Node list', h('span', { id: 'job-node-list' }, job.node_list || '—')],
      ['Started', h('span', { id: 'job-started' }, fmtTime(job.started_at))],
      ['Ended', h('span', { id: 'job-ended' }, fmtTime(job.ended_at))],
      ['Cluster', job.transport || '—'],
      job.command?.length ? ['Command', h('code', null, job.command.join(' '))] : null,
      ['stdout', job.stdout_path ? h('code', null, job.stdout_path) : '—'],
      ['stderr', job.stderr_path ? h('code', null, job.stderr_path) : '—'],
    ].filter(Boolean);
    replace(
      details,
      rows.map(([k, v]) => [h('dt', null, k), h('dd', null, v)]),
    );
  }

  async function loadScript() {
    // Slurm keeps a batch script while the job is in slurmctld's memory; of an ended job svc did not submit there
    // is nothing to ask for (the answer would be a 404 in the console of every such page)
    if (!job.submitted_at && !ACTIVE.has(job.status)) {
      replace(
        scriptBox,
        h(
          'p',
          { class: 'muted', id: 'job-no-script' },
          'svc did not submit this job, and Slurm keeps its script only while it is queued or running.',
          job.command?.length ? [' The command was: ', h('code', null, job.command.join(' '))] : null,
        ),
      );
      return;
    }
    try {
      const { script } = await api(`/api/jobs/${jobId}/script`, { query: where });
      replace(scriptBox, h('pre', { class: 'script', id: 'job-script' }, script));
    } catch (err) {
      replace(
        scriptBox,
        h(
          'p',
          { class: 'muted' },
          err.status === 404 ? `${errorText(err)}.` : errorText(err),
          job.command?.length ? [' The command was: ', h('code', null, job.command.join(' '))] : null,
        ),
      );
    }
  }

  async function refresh() {
    job = await api(`/api/jobs/${jobId}`, { query: where });
    elapsed = clockSeconds(job.elapsed_time);
    elapsedAt = Date.now();
    drawHead();
    drawTimeline();
    drawDetails();
    explainIfPending();
    log.setActive(ACTIVE.has(job.status));
  }

  drawHead();
  drawTimeline();
  drawDetails();
  replace(
    root,
    headError,
    card(null, [head, why.element]),
    h(
      'div',
      { class: 'grid grid-main-side' },
      h('div', { class: 'col' }, log.element),
      h('div', { class: 'col' }, card('Timeline', timeline), card('Resources', details)),
    ),
    card('Script', scriptBox),
  );
  loadScript();
  explainIfPending();
  log.setActive(ACTIVE.has(job.status));
  log.start();
  if (query.log) log.element.scrollIntoView();

  const unsubscribe = live(
    ['job.status_changed'],
    (events) => {
      const mine = (e) => String(e.payload?.job_id) === jobId && e.payload?.transport === job.transport;
      if (events.some((e) => e.type === 'resync' || mine(e))) refresh().catch((err) => toast(errorText(err), 'error'));
    },
    { wait: 100 },
  );
  // A job that ended between the first read and the subscription sends no further event: read it once more.
  unsubscribe.ready.then(() => refresh()).catch((err) => toast(errorText(err), 'error'));
  // Events come for the jobs svc tracks (those it submitted); any other live job (a task of an array submitted as
  // one job, a job submitted with sbatch) is read again every few seconds instead.
  const untrackedPoll = setInterval(() => {
    if (!job.submitted_at && ACTIVE.has(job.status)) refresh().catch((err) => toast(errorText(err), 'error'));
  }, UNTRACKED_MS);
  return () => {
    unsubscribe();
    log.stop();
    clearInterval(elapsedTicker);
    clearInterval(untrackedPoll);
  };
}

/** Answers to a log read that the next read would repeat (400 a log that is not a regular file, 403 a file not the
 * job's user's): the viewer says it once and stops asking. */
const LASTING = new Set([400, 403]);

/**
 * stdout/stderr tail by byte offset: follow (auto-scroll), pause, jump to end, download. Polls the log file
 * (not the scheduler) every 2 s while the job is active, once more when it ends; `stderrFirst`: shown on stderr
 * when the first read finds any. A lasting error (an unreadable log) is shown once, in place of the log.
 */
function logViewer(jobId, where, initial, { stderrFirst = false } = {}) {
  const state = { stdout: { text: '', offset: 0 }, stderr: { text: '', offset: 0 } };
  let current = initial;
  let follow = true;
  let paused = false;
  let active = true;
  let timer = null;
  let stopped = false;
  let finalRead = false;
  let firstRead = true;
  let unreadable = false;
  const pre = h('pre', { class: 'log', id: 'job-log', tabindex: '0', 'aria-label': 'Job log', 'aria-live': 'off' });
  const status = h('span', { class: 'log-status' });
  const error = alertBox(null);
  const tabButtons = {
    stdout: h('button', { type: 'button', onClick: () => show('stdout') }, 'stdout'),
    stderr: h('button', { type: 'button', onClick: () => show('stderr') }, 'stderr'),
  };
  const followBox = h('input', {
    type: 'checkbox',
    checked: true,
    onChange: (e) => {
      follow = e.target.checked;
      if (follow) toEnd();
    },
  });
  const pauseBtn = h(
    'button',
    {
      type: 'button',
      class: 'btn btn-sm',
      onClick: () => {
        paused = !paused;
        pauseBtn.textContent = paused ? 'Resume' : 'Pause';
        drawStatus();
        if (!paused) tick();
      },
    },
    'Pause',
  );
  const endBtn = h('button', { type: 'button', class: 'btn btn-sm', onClick: () => toEnd() }, 'Jump to end');
  const download = h('button', { type: 'button', class: 'btn btn-sm', onClick: () => downloadAll() }, 'Download');
  pre.addEventListener('scroll', () => {
    const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
    if (!atEnd && follow) {
      follow = false;
      followBox.checked = false;
    }
  });
  const element = card(
    'Log',
    [
      h(
        'div',
        { class: 'toolbar card-toolbar' },
        h(
          'div',
          { class: 'segmented', role: 'group', 'aria-label': 'Log stream' },
          tabButtons.stdout,
          tabButtons.stderr,
        ),
        h('label', { class: 'check' }, followBox, 'Follow'),
        pauseBtn,
        endBtn,
        download,
        h('span', { class: 'grow' }),
        status,
      ),
      error,
      pre,
    ],
    { cls: 'flush log-card' },
  );

  function toEnd() {
    pre.scrollTop = pre.scrollHeight;
  }
  function drawStatus() {
    const s = state[current];
    if (unreadable) {
      status.textContent = 'no log to read';
      return;
    }
    const now = paused ? 'paused' : active ? `following, updated ${fmtClock(Date.now())}` : 'job ended';
    status.textContent = `${fmtBytes(s.offset)} read · ${now}`;
  }
  function draw() {
    for (const [name, btn] of Object.entries(tabButtons)) {
      btn.classList.toggle('active', name === current);
      btn.setAttribute('aria-pressed', String(name === current));
    }
    pre.hidden = unreadable;
    pre.textContent = unreadable
      ? ''
      : state[current].text || (state[current].offset ? '' : `(${current} is empty${active ? ' so far' : ''})`);
    drawStatus();
    if (follow) toEnd();
  }
  function show(which) {
    current = which;
    setQuery({ log: which === 'stdout' ? '' : which });
    draw();
  }
  async function fetchMore() {
    let more = true;
    while (more && !stopped) {
      const data = await api(`/api/jobs/${jobId}/logs`, {
        query: { ...where, stdout_offset: state.stdout.offset, stderr_offset: state.stderr.offset },
      });
      more = false;
      for (const which of ['stdout', 'stderr']) {
        const chunk = data[which] || '';
        const next = data[`${which}_offset`];
        if (chunk) state[which].text = (state[which].text + chunk).slice(-MAX_LOG_CHARS);
        if (next - state[which].offset >= CHUNK) more = true; // a full chunk: read on at once
        state[which].offset = Math.max(state[which].offset, next);
      }
    }
  }
  let inFlight = false;
  let again = false;
  async function tick() {
    clearTimeout(timer);
    if (stopped || unreadable) return;
    // One read at a time: two reads from the same offset would append the same bytes twice.
    if (inFlight) {
      again = true;
      return;
    }
    inFlight = true;
    try {
      await fetchMore();
      error.hidden = true;
      if (firstRead && stderrFirst && state.stderr.text) current = 'stderr';
      firstRead = false;
    } catch (err) {
      if (err.status !== 404) {
        error.hidden = false;
        error.textContent = errorText(err);
      }
      if (LASTING.has(err.status)) {
        unreadable = true; // the same answer every time: no more reads, nothing to follow, pause or download
        for (const control of [followBox, pauseBtn, endBtn, download]) control.disabled = true;
      }
    } finally {
      inFlight = false;
    }
    draw();
    if (again) {
      again = false;
      tick();
      return;
    }
    if (stopped || unreadable) return;
    if (active && !paused) timer = setTimeout(tick, TAIL_MS);
    else if (!active && !finalRead) {
      finalRead = true;
      timer = setTimeout(tick, 500);
    }
  }
  async function downloadAll() {
    const parts = [];
    let offset = 0;
    for (;;) {
      const data = await api(`/api/jobs/${jobId}/logs`, {
        query: {
          ...where,
          [`${current}_offset`]: offset,
          [`${current === 'stdout' ? 'stderr' : 'stdout'}_offset`]: 0,
          limit: CHUNK,
        },
      });
      const chunk = data[current] || '';
      parts.push(chunk);
      if (!chunk || data[`${current}_offset`] <= offset) break;
      offset = data[`${current}_offset`];
    }
    const url = URL.createObjectURL(new Blob(parts, { type: 'text/plain' }));
    const a = h('a', { href: url, download: `job-${jobId}.${current === 'stdout' ? 'out' : 'err'}` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 5000);
  }
  return {
    element,
    show,
    start: () => {
      draw();
      tick();
    },
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
    setActive: (value) => {
      const was = active;
      active = value;
      // an ended job's log grows no more: nothing to follow or pause (Jump to end and Download stay)
      followBox.disabled = !value || unreadable;
      pauseBtn.disabled = !value || unreadable;
      if (!value && paused) {
        paused = false;
        pauseBtn.textContent = 'Pause';
      }
      if (was && !value) {
        finalRead = false;
        tick();
      } else if (!was && value) tick();
      drawStatus();
    },
  };
}

/** A time limit as Slurm spells it (`1-02:00:00`), "unlimited" for none, "—" when unknown. */
function limitText(limit) {
  if (!limit) return '—';
  return limit === 'UNLIMITED' ? 'unlimited' : limit;
}
