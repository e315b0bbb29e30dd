// Efficiency of ended jobs as a table (the History page's measured jobs, a run's jobs): CPU, memory and time
// used of what each asked for, GPUs, and what to ask for next time.
import { h, fmtDuration, fmtNumber, fmtBytes, stateBadge } from '../dom.js';

/** Percent of what a job asked for under which a completed job is flagged (as the server flags it). */
export const FLAG_BELOW = 80;
const EFFICIENCY_ROWS = 50;

/** A percentage cell: muted when unknown, marked when under what a job should use of what it asked. */
function pctCell(part, title) {
  if (!part) return h('td', { class: 'num muted' }, '—');
  return h('td', { class: ['num', 'eff', part.percent < FLAG_BELOW ? 'eff-low' : 'eff-ok'], title }, `${fmtNumber(part.percent, 1)}%`);
}

/** Rows of `{job_id, name, status, efficiency}` (measured jobs only), the first 50. */
export function efficiencyTable(rows) {
  const body = rows.slice(0, EFFICIENCY_ROWS).map((r) => {
    const e = r.efficiency;
    return h('tr', { class: e.flagged ? 'flagged' : null },
      h('td', { class: 'num' }, h('a', { href: `/jobs/${r.job_id}` }, String(r.job_id))),
      h('td', null, r.name),
      h('td', null, stateBadge(r.status)),
      pctCell(e.cpu, e.cpu ? `${e.cpu.used_average} of ${e.cpu.allocated} CPUs on average` : ''),
      pctCell(e.memory, e.memory ? `peak ${fmtBytes(e.memory.peak_bytes)} of ${fmtBytes(e.memory.allocated_bytes)}` : ''),
      pctCell(e.time, e.time ? `ran ${fmtDuration(e.time.elapsed_seconds)} of ${fmtDuration(e.time.limit_seconds)}` : ''),
      h('td', { class: 'num', title: e.gpus.note || '' }, String(e.gpus.allocated)),
      h('td', { class: 'suggestions' }, e.suggestions.length
        ? h('ul', null, e.suggestions.map((f) => h('li', null, f.message)))
        : h('span', { class: 'muted', title: 'no request worth changing: too small a saving, or the job did not complete' }, 'nothing to change')));
  });
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data', id: 'efficiency-table' },
    h('thead', null, h('tr', null, ['Job', 'Name', 'Status', 'CPU', 'Memory', 'Time', 'GPUs', 'Suggestions'].map((c) => h('th', { class: ['CPU', 'Memory', 'Time', 'GPUs'].includes(c) ? 'num' : null }, c)))),
    h('tbody', null, body)));
}
