// What a workflow run (or a sweep's cell) is doing, as a user reads it. A run is "running" from the moment its
// first job is submitted, while Slurm may keep that job PENDING for long (a task past its array's % limit, a
// hold, a busy cluster): such a run is queued, not running. Pure (no DOM), for the Overview and the run lists.

const MOVING = new Set(['RUNNING', 'COMPLETING', 'CONFIGURING']);

/** `queued` for a running run none of whose jobs runs while one waits in Slurm's queue, else the run's status. */
export function runShownStatus(run) {
  if (run.status !== 'running') return run.status;
  const states = Object.values(run.job_statuses || {});
  return states.includes('PENDING') && !states.some((s) => MOVING.has(s)) ? 'queued' : run.status;
}
