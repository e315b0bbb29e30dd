// Slurm job states as the dashboard groups them. No DOM: pages and components share these sets.

/** The states of a job that ended in failure: its page offers the error log first, a run's graph links to it. */
export const FAILED = new Set([
  'FAILED',
  'TIMEOUT',
  'NODE_FAIL',
  'OUT_OF_MEMORY',
  'BOOT_FAIL',
  'DEADLINE',
  'PREEMPTED',
]);
