// Efficiency of ended jobs as a table (the History page's measured jobs, a run's or a sweep's jobs): CPU, memory
// and time used of what each asked for, GPUs, and what to ask for next time; and the card an ended run or sweep
// shows it in, with the figures over all its jobs.
import { h, replace, fmtDuration, fmtNumber, fmtBytes, stateBadge } from '../dom.js';
import { api } from '../api.js';
import { card } from '../ui.js';
import { jobHref } from '../cluster.js';

/** Accounting has a job's usage a little after it ended: while some is missing, the card asks again this often,
 * this many times (a minute). */
const RETRY_MS = 5000;
const RETRIES = 12;

/** Percent of what a job asked for under which a completed job is flagged (as the server flags it). */
export const FLAG_BELOW = 80;
const EFFICIENCY_ROWS = 50;

/** A percentage cell: muted when unknown, marked when under what a job should use of what it asked. */
function pctCell(part, title) {
  if (!part) return h('td', { class: 'num muted' }, '—');
  return h(
    'td',
    { class: ['num', 'eff', part.percent < FLAG_BELOW ? 'eff-low' : 'eff-ok'], title },
    `${fmtNumber(part.percent, 1)}%`,
  );
}

/** Rows of `{job_id, transport, name, status, efficiency}` (measured jobs only), the first 50; `showCluster`
 * adds a Cluster column (History mixes clusters; a run's or a sweep's jobs share one). */
export function efficiencyTable(rows, { showCluster = false } = {}) {
  const body = rows.slice(0, EFFICIENCY_ROWS).map((r) => {
    const e = r.efficiency;
    return h(
      'tr',
      { class: e.flagged ? 'flagged' : null },
      h('td', { class: 'num' }, h('a', { href: jobHref(r.transport, r.job_id) }, String(r.job_id))),
      h('td', null, r.name),
      showCluster ? h('td', null, h('span', { class: 'cluster-chip' }, r.transport)) : null,
      h('td', null, stateBadge(r.status)),
      pctCell(e.cpu, e.cpu ? `${e.cpu.used_average} of ${e.cpu.allocated} CPUs on average` : ''),
      pctCell(
        e.memory,
        e.memory ? `peak ${fmtBytes(e.memory.peak_bytes)} of ${fmtBytes(e.memory.allocated_bytes)}` : '',
      ),
      pctCell(
        e.time,
        e.time ? `ran ${fmtDuration(e.time.elapsed_seconds)} of ${fmtDuration(e.time.limit_seconds)}` : '',
      ),
      h('td', { class: 'num', title: e.gpus.note || '' }, String(e.gpus.allocated)),
      h(
        'td',
        { class: 'suggestions' },
        e.suggestions.length
          ? h(
              'ul',
              null,
              e.suggestions.map((f) => h('li', null, f.message)),
            )
          : r.status === 'COMPLETED'
            ? h('span', { class: 'muted', title: 'no request worth changing: too small a saving' }, 'nothing to change')
            : // a job that did not complete says little about what it needs: no advice rather than a wrong one
              h('span', { class: 'muted', title: 'no advice: the job did not complete' }, '—'),
      ),
    );
  });
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'data', id: 'efficiency-table' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          ['Job', 'Name', showCluster ? 'Cluster' : null, 'Status', 'CPU', 'Memory', 'Time', 'GPUs', 'Suggestions']
            .filter(Boolean)
            .map((c) => h('th', { class: ['CPU', 'Memory', 'Time', 'GPUs'].includes(c) ? 'num' : null }, c)),
        ),
      ),
      h('tbody', null, body),
    ),
  );
}

/** The "Efficiency" card of an ended run or sweep: `url` answers `{summary, jobs}` (`/api/history/efficiency/...`),
 * `over` names what the summary is over ("the run"), `name(job)` what the Name column says (the job's name),
 * `state(job)` what its Status column says (Slurm's state; a run says its own word, as its graph does).
 * Hidden until `draw()` finds jobs; `stop()` ends its retries. A failed read leaves it as it was: the page is
 * still the run's or the sweep's page. */
export function efficiencyCard(url, { id, over, name = (job) => job.name, state = (job) => job.status }) {
  const box = h('div');
  const el = card('Efficiency', box, { cls: 'flush' });
  el.id = id;
  el.hidden = true;
  let timer = null;
  let tries = 0;
  let stopped = false;
  const pct = (v) => (v === null || v === undefined ? '—' : `${fmtNumber(v, 1)}%`);
  async function draw() {
    clearTimeout(timer);
    let found;
    try {
      found = await api(url);
    } catch {
      return;
    }
    if (stopped) return; // the page was left while the answer was on its way
    const measured = found.jobs.filter((j) => j.efficiency);
    const unmeasured = found.jobs.length - measured.length;
    const s = found.summary;
    el.hidden = !found.jobs.length;
    replace(
      box,
      h(
        'p',
        { class: 'eff-summary' },
        `Over ${over}: CPU ${pct(s.cpu_percent)} · memory ${pct(s.memory_percent)} · time ${pct(s.time_percent)}`,
        s.flagged ? h('span', { class: 'chip eff-flagged' }, `${s.flagged} flagged`) : null,
      ),
      measured.length
        ? efficiencyTable(measured.map((job) => ({ ...job, name: name(job), status: state(job) })))
        : null,
      unmeasured
        ? h(
            'p',
            { class: 'muted small eff-unmeasured' },
            `${unmeasured} job${unmeasured === 1 ? '' : 's'} not measured: ` +
              `accounting has no usage for ${unmeasured === 1 ? 'it' : 'them'} yet.`,
          )
        : null,
    );
    if (unmeasured && tries++ < RETRIES) timer = setTimeout(draw, RETRY_MS);
  }
  return {
    el,
    draw,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
