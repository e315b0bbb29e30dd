// The charts' axes (components/chart.js): round value ticks and time ticks on the browser zone's round times.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { niceTicks, timeTicks } from '../../svc_host/web/static/js/components/chart.js';

test('value ticks are round steps from 0 that reach the maximum', () => {
  assert.deepEqual(niceTicks(0, 100), [0, 20, 40, 60, 80, 100]);
  assert.deepEqual(niceTicks(0, 7), [0, 2, 4, 6, 8]);
  assert.deepEqual(niceTicks(0, 1), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.deepEqual(niceTicks(0, 0.03), [0, 0.01, 0.02, 0.03]);
  assert.deepEqual(niceTicks(0, 12.5), [0, 2.5, 5, 7.5, 10, 12.5]);
});

test('counts get whole ticks only, and an empty range still gets an axis', () => {
  assert.deepEqual(niceTicks(0, 3, 5, { integer: true }), [0, 1, 2, 3]);
  assert.deepEqual(niceTicks(0, 0), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.deepEqual(niceTicks(5, 5, 5, { integer: true }), [5, 6]);
});

test('time ticks fall on round times of the local zone, about the count asked for', () => {
  const t0 = new Date(2026, 10, 28, 9, 7, 30).getTime(); // local time
  const { ticks, step } = timeTicks(t0, t0 + 60 * 60e3, 6);
  assert.equal(step, 10 * 60e3);
  const shown = ticks.map((t) => [new Date(t).getHours(), new Date(t).getMinutes()]);
  assert.deepEqual(shown, [
    [9, 10],
    [9, 20],
    [9, 30],
    [9, 40],
    [9, 50],
    [10, 0],
  ]);
  for (const t of ticks) assert.ok(t >= t0 && t <= t0 + 60 * 60e3);
});

test('a week gets day ticks at local midnight; a span under a minute still gets one', () => {
  const t0 = new Date(2026, 10, 20, 13, 0).getTime();
  const { ticks, step } = timeTicks(t0, t0 + 7 * 86400e3, 8);
  assert.equal(step, 86400e3);
  assert.equal(ticks.length, 7);
  for (const t of ticks) assert.deepEqual([new Date(t).getHours(), new Date(t).getMinutes()], [0, 0]);
  const short = timeTicks(new Date(2026, 10, 20, 13, 0, 10).getTime(), new Date(2026, 10, 20, 13, 1, 5).getTime());
  assert.equal(short.step, 60e3);
  assert.equal(short.ticks.length, 1);
});
