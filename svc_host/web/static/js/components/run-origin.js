// Who started a workflow run, as a cell of the run lists and the run's page.
import { h } from '../dom.js';
import { icon } from '../icons.js';

/** Who started a run: its sweep (a link), a schedule (a link to the schedules, marked), or web/cli/mcp. */
export function runOrigin(run) {
  if (run.sweep_id) return h('a', { href: `/sweeps/${run.sweep_id}` }, `sweep ${run.sweep_id}`);
  if (run.triggered_by === 'schedule') {
    return h(
      'a',
      { href: '/schedules', class: 'chip chip-link run-origin', title: 'started by a schedule' },
      icon('schedules'),
      'schedule',
    );
  }
  return run.triggered_by;
}
