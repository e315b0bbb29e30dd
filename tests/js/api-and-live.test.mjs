// The API client's pure parts (api.js) and how live events fold into job rows (live.js).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError, apiUrl, errorText, fieldName, wordedDetail } from '../../svc_host/web/static/js/api.js';
import { applyJobEvents, jobKey, snapshotsOf } from '../../svc_host/web/static/js/live.js';

test('API URLs: the /api prefix once, empty values left out, lists repeated, values escaped', () => {
  assert.equal(apiUrl('/api/jobs'), '/api/jobs');
  assert.equal(apiUrl('jobs'), '/api/jobs');
  assert.equal(
    apiUrl('/jobs', { transport: 'lab24', user: '', limit: null, q: undefined }),
    '/api/jobs?transport=lab24',
  );
  assert.equal(apiUrl('/api/jobs', { state: ['RUNNING', 'PENDING'] }), '/api/jobs?state=RUNNING&state=PENDING');
  assert.equal(apiUrl('/api/files', { path: 'a b&c' }), '/api/files?path=a+b%26c');
  assert.equal(apiUrl('/api/x', {}), '/api/x');
});

test('a refused field is named in words, and several problems make one line', () => {
  assert.equal(fieldName('resources.time_limit'), 'time limit');
  assert.equal(fieldName('body.jobs.0.name'), 'name');
  assert.equal(fieldName('port'), 'port');
  assert.equal(
    wordedDetail([
      { field: 'resources.time_limit', message: 'must look like 4:00:00' },
      { field: '', message: 'bad' },
    ]),
    'time limit: must look like 4:00:00; bad',
  );
});

test("an error's text is the API's detail, else the message", () => {
  assert.equal(errorText(new ApiError(404, 'job lab24/7 not found')), 'job lab24/7 not found');
  assert.equal(errorText(new ApiError(422, [{ loc: ['x'] }])), '[{"loc":["x"]}]');
  assert.equal(errorText(new Error('offline')), 'offline');
  assert.equal(errorText('plain'), 'plain');
});

test("a job is keyed by its cluster and id: two clusters' job 109 are two jobs", () => {
  assert.notEqual(jobKey('local', 109), jobKey('lab24', 109));
  assert.equal(jobKey('lab24', '109'), jobKey('lab24', 109));
});

test('status events update the job of their own cluster only, and add jobs not seen yet', () => {
  const rows = [
    { transport: 'local', job_id: 109, status: 'RUNNING', exit_code: null },
    { transport: 'lab24', job_id: 109, status: 'RUNNING', exit_code: null },
  ];
  const event = (payload) => ({ type: 'job.status_changed', payload });
  applyJobEvents(rows, [
    event({ transport: 'lab24', job_id: 109, to: 'FAILED', exit_code: 4 }),
    { type: 'resources.sampled', payload: { transport: 'local', job_id: 109, to: 'CANCELLED' } },
    event({ transport: 'local', job_id: 110, to: 'PENDING', name: 'nap' }),
  ]);
  assert.deepEqual(
    rows.slice(0, 2).map((r) => [r.transport, r.status, r.exit_code]),
    [
      ['local', 'RUNNING', null],
      ['lab24', 'FAILED', 4],
    ],
  );
  assert.equal(rows.length, 3);
  assert.deepEqual([rows[2].transport, rows[2].job_id, rows[2].status, rows[2].name], ['local', 110, 'PENDING', 'nap']);
});

test('resource snapshots are read from every payload shape the server sends', () => {
  assert.deepEqual(snapshotsOf([{ partition: 'gpu' }]), [{ partition: 'gpu' }]);
  assert.deepEqual(snapshotsOf({ snapshots: [1] }), [1]);
  assert.deepEqual(snapshotsOf({ partitions: [2] }), [2]);
  assert.equal(snapshotsOf({ transport: 'local' }), null);
  assert.equal(snapshotsOf(null), null);
});
