// The History page's figures per day (pages/history.js): counted by the local day each job was submitted.
import assert from 'node:assert/strict';
import { test } from 'node:test';

globalThis.location ??= { pathname: '/', search: '' };
const { efficiencyRows, perDay } = await import('../../svc_host/web/static/js/pages/history.js');

const at = (day, hour) => new Date(`${day}T${String(hour).padStart(2, '0')}:30:00`).toISOString(); // local time

test('jobs are counted on their local day, failures of every kind as Failed, GPU-hours as GPUs x elapsed', () => {
  const records = [
    { submitted_at: at('2026-11-26', 0), status: 'COMPLETED', gpus: 2, elapsed_seconds: 5400 },
    { submitted_at: at('2026-11-26', 23), status: 'NODE_FAIL', gpus: 1, elapsed_seconds: 3600 },
    { submitted_at: at('2026-11-28', 12), status: 'OUT_OF_MEMORY', gpus: 0, elapsed_seconds: 60 },
    { submitted_at: at('2026-11-28', 13), status: 'TIMEOUT', gpus: 4, elapsed_seconds: null },
    { submitted_at: at('2026-11-29', 1), status: 'COMPLETED', gpus: 1, elapsed_seconds: 100 }, // after the range
  ];
  const { days, counts, gpuHours } = perDay(records, '2026-11-26', '2026-11-28');
  assert.deepEqual(days, ['2026-11-26', '2026-11-27', '2026-11-28']);
  assert.deepEqual(counts.COMPLETED, [1, 0, 0]);
  assert.deepEqual(counts.FAILED, [1, 0, 1]);
  assert.deepEqual(counts.TIMEOUT, [0, 0, 1]);
  assert.deepEqual(gpuHours, [4, 0, 0]);
});

test('measured jobs of the range, flagged ones first', () => {
  const records = [
    { submitted_at: at('2026-11-27', 10), efficiency: { flagged: false }, job_id: 1 },
    { submitted_at: at('2026-11-27', 11), efficiency: { flagged: true }, job_id: 2 },
    { submitted_at: at('2026-11-27', 12), efficiency: null, job_id: 3 },
    { submitted_at: at('2026-11-20', 12), efficiency: { flagged: true }, job_id: 4 },
  ];
  assert.deepEqual(
    efficiencyRows(records, '2026-11-26', '2026-11-28').map((r) => r.job_id),
    [2, 1],
  );
});
