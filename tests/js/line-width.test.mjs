// No line of the dashboard's modules is over 120 characters: Biome's formatter keeps code within its width, but not
// strings and comments, which are split by hand (a reader of the source sees each whole line without scrolling).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../svc_host/web/static/js');
const WIDTH = 120;

function modules(dir = ROOT) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return modules(path);
    return entry.name.endsWith('.js') ? [path] : [];
  });
}

test('no line of a dashboard module is over 120 characters', () => {
  const long = modules().flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, index) => ([...line].length > WIDTH ? [`${relative(ROOT, file)}:${index + 1}`] : [])),
  );
  assert.deepEqual(long, []);
});
