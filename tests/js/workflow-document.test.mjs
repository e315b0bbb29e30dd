// The visual builder's rules for changing a workflow document (workflow-editor/document.js).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  addJob,
  cellCount,
  changedArgs,
  commandSummary,
  connect,
  disconnect,
  errorLine,
  errorsByLine,
  jobsOf,
  matrixOf,
  reaches,
  removeJob,
  replaceJob,
  typed,
} from '../../svc_host/web/static/js/workflow-editor/document.js';

function diamond() {
  return {
    name: 'diamond',
    args: { message: 'hello', lr: 0.1, layers: [1, 2] },
    jobs: [
      { name: 'prepare', command: 'echo prepare' },
      { name: 'left', command: ['bash', '-c', 'echo left'], depends_on: ['prepare'] },
      { name: 'right', script_path: 'scripts/right.sh', depends_on: ['afterany:prepare'] },
      { name: 'join', command: 'echo join', depends_on: ['left', 'right'] },
    ],
  };
}

test('validation messages point at their lines', () => {
  assert.equal(errorLine('line 12: bad indentation'), 12);
  assert.equal(errorLine('line 3, column 5: expected a mapping'), 3);
  assert.equal(errorLine('jobs: dependency cycle: a -> b -> a'), null);
  const lines = errorsByLine(['line 2: one', 'line 2: two', 'no line', 'line 7: three']);
  assert.deepEqual(
    [...lines],
    [
      [2, 'line 2: one\nline 2: two'],
      [7, 'line 7: three'],
    ],
  );
});

test('the graph takes named jobs only, with their dependencies as text', () => {
  assert.deepEqual(jobsOf({ jobs: [{ name: 'a', depends_on: [1] }, { command: 'x' }, null, { name: '' }, 'b'] }), [
    { name: 'a', depends_on: ['1'] },
  ]);
  assert.deepEqual(jobsOf(null), []);
  assert.deepEqual(jobsOf({ jobs: 'not a list' }), []);
});

test("a job's line in the graph is its command or script, cut short", () => {
  const [prepare, left, right] = diamond().jobs;
  assert.equal(commandSummary(prepare), 'echo prepare');
  assert.equal(commandSummary(left), 'bash -c echo left');
  assert.equal(commandSummary(right), 'script scripts/right.…'); // 22 characters at most
  assert.equal(commandSummary({ command: 'python train.py --epochs 100' }), 'python train.py --epo…');
  assert.equal(commandSummary({}), '');
});

test('values are typed as meant: numbers and booleans, the rest text', () => {
  assert.equal(typed(' 3 '), 3);
  assert.equal(typed('-0.5'), -0.5);
  assert.equal(typed('1e-3'), 0.001);
  assert.equal(typed('true'), true);
  assert.equal(typed('False'), 'False');
  assert.equal(typed('0x10'), '0x10');
  assert.equal(typed('v1.2'), 'v1.2');
});

test('only the arguments changed from their defaults are sent, typed', () => {
  const { args } = diamond();
  assert.equal(changedArgs({ message: 'hello', lr: '0.1', layers: '[1,2]' }, args), undefined);
  assert.deepEqual(changedArgs({ message: 'bye', lr: '0.01', layers: '[1,2]', extra: undefined }, args), {
    message: 'bye',
    lr: 0.01,
  });
});

test("a sweep's matrix and its number of cells", () => {
  const axes = [
    { name: ' lr ', values: '0.1, 0.01,,0.001' },
    { name: 'opt', values: 'adam,sgd' },
    { name: '', values: '1,2' },
  ];
  assert.deepEqual(matrixOf(axes), { lr: [0.1, 0.01, 0.001], opt: ['adam', 'sgd'] });
  assert.equal(cellCount(axes), 6);
  assert.equal(cellCount([{ name: '', values: '1' }]), 0);
  assert.equal(cellCount([{ name: 'lr', values: '' }]), 0);
});

test('a new job is independent and takes the first free name', () => {
  const doc = diamond();
  assert.equal(addJob(doc), 'job5');
  assert.equal(addJob(doc), 'job6');
  assert.deepEqual(doc.jobs.at(-1), { name: 'job6', command: 'echo hello' });
  const empty = {};
  assert.equal(addJob(empty), 'job1');
  assert.equal(empty.jobs.length, 1);
});

test('connecting: added once, refused when it would close a cycle', () => {
  const doc = diamond();
  assert.equal(reaches(doc.jobs, 'join', 'prepare'), true);
  assert.equal(reaches(doc.jobs, 'left', 'right'), false);
  assert.equal(connect(doc, 'prepare', 'join'), 'added');
  assert.deepEqual(doc.jobs[3].depends_on, ['left', 'right', 'prepare']);
  assert.equal(connect(doc, 'prepare', 'join'), 'exists');
  assert.equal(connect(doc, 'prepare', 'right'), 'exists'); // afterany:prepare is a dependency on prepare too
  const before = JSON.stringify(doc);
  assert.equal(connect(doc, 'join', 'prepare'), 'cycle');
  assert.equal(JSON.stringify(doc), before);
  assert.equal(connect(doc, 'left', 'nobody'), 'unknown');
});

test('disconnecting drops the dependency, and an emptied list', () => {
  const doc = diamond();
  assert.equal(disconnect(doc, 'prepare', 'right'), true);
  assert.equal('depends_on' in doc.jobs[2], false);
  assert.equal(disconnect(doc, 'left', 'join'), true);
  assert.deepEqual(doc.jobs[3].depends_on, ['right']);
  assert.equal(disconnect(doc, 'left', 'nobody'), false);
});

test('a renamed job is followed by its dependants, each keeping its type', () => {
  const doc = diamond();
  replaceJob(doc, doc.jobs[0], { ...doc.jobs[0], name: 'setup' });
  assert.equal(doc.jobs[0].name, 'setup');
  assert.deepEqual(doc.jobs[1].depends_on, ['setup']);
  assert.deepEqual(doc.jobs[2].depends_on, ['afterany:setup']);
  assert.deepEqual(doc.jobs[3].depends_on, ['left', 'right']);
});

test('a removed job takes every dependency on it along', () => {
  const doc = diamond();
  removeJob(doc, doc.jobs[0]);
  assert.deepEqual(
    doc.jobs.map((j) => j.name),
    ['left', 'right', 'join'],
  );
  assert.equal('depends_on' in doc.jobs[0], false);
  assert.equal('depends_on' in doc.jobs[1], false);
  assert.deepEqual(doc.jobs[2].depends_on, ['left', 'right']);
});
