// The builder's YAML writer (components/yaml.js): what it quotes, and the shape of a written workflow.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scalar, toYaml } from '../../svc_host/web/static/js/components/yaml.js';

test('plain words stay plain; what YAML would read as something else is quoted', () => {
  assert.equal(scalar('prepare'), 'prepare');
  assert.equal(scalar('echo hello'), 'echo hello');
  assert.equal(scalar('./train.py'), './train.py');
  for (const text of ['true', 'No', 'off', 'null', '~', 'y']) assert.equal(scalar(text), JSON.stringify(text));
  assert.equal(scalar('42'), '"42"'); // a string of digits stays a string
  assert.equal(scalar('echo {{ message }}'), '"echo {{ message }}"');
  assert.equal(scalar('key: value'), '"key: value"');
  assert.equal(scalar('a # comment'), '"a # comment"');
  assert.equal(scalar('trailing '), '"trailing "');
  assert.equal(scalar(''), '""');
  assert.equal(scalar('-c'), '"-c"');
  assert.equal(scalar('say "hi"\n'), '"say \\"hi\\"\\n"');
});

test('numbers, booleans and nulls are written as YAML reads them back', () => {
  assert.equal(scalar(3), '3');
  assert.equal(scalar(0.5), '0.5');
  assert.equal(scalar(Number.NaN), '"NaN"');
  assert.equal(scalar(true), 'true');
  assert.equal(scalar(null), 'null');
  assert.equal(scalar(undefined), 'null');
});

test('a workflow is written with its keys in the conventional order, short lists inline', () => {
  const doc = {
    jobs: [
      { depends_on: ['prepare'], command: ['bash', '-c', 'echo left'], name: 'left', resources: { gpus_per_node: 1 } },
      { name: 'solo', environment: {}, command: 'echo {{ message }}' },
    ],
    args: { message: 'hello', rate: 0.1 },
    name: 'diamond',
  };
  assert.equal(
    toYaml(doc),
    [
      'name: diamond',
      'args:',
      '  message: hello',
      '  rate: 0.1',
      'jobs:',
      '  - name: left',
      '    command: [bash, "-c", echo left]',
      '    depends_on: [prepare]',
      '    resources:',
      '      gpus_per_node: 1',
      '  - name: solo',
      '    command: "echo {{ message }}"',
      '    environment: {}',
      '',
    ].join('\n'),
  );
});

test('long lists go one item a line; empty lists and jobs stay valid YAML', () => {
  const long = Array.from({ length: 12 }, (_, i) => `dependency-number-${i}`);
  const text = toYaml({ name: 'w', jobs: [{ name: 'a', depends_on: long }, {}], extra: [] });
  assert.ok(text.includes('    depends_on:\n      - dependency-number-0\n'));
  assert.ok(text.includes('\n  - {}\n'));
  assert.ok(text.endsWith('extra: []\n'));
});
