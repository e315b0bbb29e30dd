// The formatters every page uses (dom.js): durations, Slurm's clock times, "ago", dates, sizes, percentages.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  clockSeconds,
  fmtAgo,
  fmtBytes,
  fmtDuration,
  fmtPercent,
  fmtTime,
  toDate,
} from '../../svc_host/web/static/js/format.js';

test('durations read as hours, minutes and seconds; coarse ones as one unit', () => {
  assert.equal(fmtDuration(0), '0s');
  assert.equal(fmtDuration(40.4), '40s');
  assert.equal(fmtDuration(83), '1m 23s');
  assert.equal(fmtDuration(3723), '1h 02m 03s');
  assert.equal(fmtDuration(90061), '1d 01h 01m');
  assert.equal(fmtDuration(-5), '0s'); // a clock that ran backwards is not a negative duration
  assert.equal(fmtDuration(null), '—');
  assert.equal(fmtDuration(Number.NaN), '—');
  assert.equal(fmtDuration(7200, { coarse: true }), '2 h');
  assert.equal(fmtDuration(59, { coarse: true }), '59 s');
  assert.equal(fmtDuration(3 * 86400 + 5, { coarse: true }), '3 d');
});

test('Slurm clock times become seconds', () => {
  assert.equal(clockSeconds('03:04'), 184);
  assert.equal(clockSeconds('2:03:04'), 7384);
  assert.equal(clockSeconds('1-02:03:04'), 93784);
  assert.equal(clockSeconds('365-00:00:00'), 365 * 86400);
  assert.equal(clockSeconds('0:00'), 0);
  assert.equal(clockSeconds(''), null);
  assert.equal(clockSeconds('UNLIMITED'), null);
  assert.equal(clockSeconds(null), null);
});

test('"ago" and "in" are relative to the time given as now', () => {
  const now = Date.parse('2026-11-28T12:00:00Z');
  assert.equal(fmtAgo('2026-11-28T11:57:00Z', now), '3 min ago');
  assert.equal(fmtAgo('2026-11-28T14:00:00Z', now), 'in 2 h');
  assert.equal(fmtAgo(now / 1000 - 5, now), '5 s ago'); // epoch seconds
  assert.equal(fmtAgo(null, now), '—');
});

test('dates are read from ISO text, epoch seconds or milliseconds; junk is none', () => {
  assert.equal(toDate('2026-11-28T12:00:00Z').getTime(), Date.parse('2026-11-28T12:00:00Z'));
  assert.equal(toDate(1_700_000_000).getTime(), 1_700_000_000_000);
  assert.equal(toDate(1_700_000_000_000).getTime(), 1_700_000_000_000);
  assert.equal(toDate('not a date'), null);
  assert.equal(toDate(''), null);
  assert.equal(fmtTime(null), '—');
  assert.match(fmtTime('2026-11-28T12:00:05Z'), /^2026-11-2[89] \d\d:\d\d:05 \S+$/); // with the zone's name
});

test('sizes in binary units, fractions as whole percentages', () => {
  assert.equal(fmtBytes(512), '512 B');
  assert.equal(fmtBytes(1536), '1.5 KiB');
  assert.equal(fmtBytes(20 * 1024 ** 3), '20 GiB');
  assert.equal(fmtBytes(5 * 1024 ** 5), '5120 TiB');
  assert.equal(fmtBytes(undefined), '—');
  assert.equal(fmtPercent(0.756), '76%');
  assert.equal(fmtPercent(null), '—');
});
