// GPU types as the Overview, Resources and job pages word them (components/gpu-types.js).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  gpuTypeChoices,
  gpuTypesText,
  jobGpusText,
  sumGpuTypes,
} from '../../svc_host/web/static/js/components/gpu-types.js';

const A100 = { type: 'a100', total: 2, in_use: 1, available: 1 };
const V100 = { type: 'v100', total: 2, in_use: 0, available: 2 };
const UNTYPED = { type: null, total: 4, in_use: 1, available: 3 };

test('free GPUs per type; nothing when no GPU has a type', () => {
  assert.equal(gpuTypesText([A100, V100]), 'a100: 1 of 2 free · v100: 2 of 2 free');
  assert.equal(gpuTypesText([A100, UNTYPED]), 'a100: 1 of 2 free · untyped: 3 of 4 free');
  assert.equal(gpuTypesText([UNTYPED]), '');
  assert.equal(gpuTypesText([{ ...A100, total: 0 }]), '');
  assert.equal(gpuTypesText(null), '');
});

test('a job may ask for the typed GPUs a partition has', () => {
  assert.deepEqual(gpuTypeChoices({ gpu_types: [A100, UNTYPED, { ...V100, total: 0 }] }), [A100]);
  assert.deepEqual(gpuTypeChoices(null), []);
});

test("two clusters' GPUs of one type are summed into one line, untyped last", () => {
  const sums = sumGpuTypes([
    [UNTYPED, A100],
    [A100, V100],
  ]);
  assert.deepEqual(
    sums.map((s) => [s.type, s.total, s.in_use, s.available]),
    [
      ['a100', 4, 2, 2],
      ['v100', 2, 0, 2],
      [null, 4, 1, 3],
    ],
  );
});

test('a job\'s GPUs name their type ("1 a100", not "1")', () => {
  assert.equal(jobGpusText(1, { a100: 1 }), '1 a100');
  assert.equal(jobGpusText(3, { a100: 2, v100: 1 }), '2 a100 + 1 v100');
  assert.equal(jobGpusText(3, { a100: 2 }), '2 a100 + 1 untyped');
  assert.equal(jobGpusText(2, {}), '2');
  assert.equal(jobGpusText(null, null), '0');
});
