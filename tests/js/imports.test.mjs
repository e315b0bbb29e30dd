// The dashboard's module structure, read from the import statements: no page imports another page (a shared thing
// lives in a module under js/ or components/), and no import circle exists among the modules (static imports and
// import() of a fixed path alike; the router's import() of a page by its route name is not a fixed path).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../svc_host/web/static/js');
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'"`]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

function modules(dir = ROOT) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return modules(path);
    return entry.name.endsWith('.js') ? [path] : [];
  });
}

/** What a module's source imports, as paths relative to js/ (bare specifiers, none here, would be skipped). */
export function importsOf(source, file) {
  const found = [];
  for (const match of source.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, '').matchAll(IMPORT)) {
    const spec = match[1] || match[2] || match[3];
    if (spec.startsWith('.')) found.push(relative(ROOT, resolve(dirname(file), spec)));
  }
  return found;
}

const graph = new Map(modules().map((file) => [relative(ROOT, file), importsOf(readFileSync(file, 'utf8'), file)]));

test('the import reader finds static, re-exported and dynamic imports', () => {
  const file = join(ROOT, 'pages', 'x.js');
  const source = [
    "import { a } from '../dom.js';",
    "export { b } from './y.js';",
    "import '../side.js';",
    "const m = await import('../events.js');",
    "// import { c } from './commented.js';",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the source of the router's import of a page by name
    'import(`./pages/${name}.js`);',
  ].join('\n');
  assert.deepEqual(importsOf(source, file), ['dom.js', 'pages/y.js', 'side.js', 'events.js']);
});

test('every imported module exists', () => {
  for (const [module, imports] of graph) {
    for (const target of imports) assert.ok(graph.has(target), `${module} imports ${target}, which does not exist`);
  }
});

test('no page imports another page', () => {
  const pages = [...graph.keys()].filter((m) => m.startsWith('pages/'));
  assert.ok(pages.length >= 10, `only ${pages.length} pages found under ${ROOT}`);
  const offenders = pages.flatMap((page) =>
    graph
      .get(page)
      .filter((t) => t.startsWith('pages/'))
      .map((t) => `${page} -> ${t}`),
  );
  assert.deepEqual(offenders, []);
});

test('no import circle among the modules', () => {
  const state = new Map(); // module -> 'open' while on the path, 'done' after
  const circles = [];
  const visit = (module, path) => {
    if (state.get(module) === 'done') return;
    if (state.get(module) === 'open') {
      circles.push([...path.slice(path.indexOf(module)), module].join(' -> '));
      return;
    }
    state.set(module, 'open');
    for (const next of graph.get(module) || []) visit(next, [...path, module]);
    state.set(module, 'done');
  };
  for (const module of graph.keys()) visit(module, []);
  assert.deepEqual(circles, []);
});

// Modules of pure logic, unit-tested under node: no DOM, no browser state, and only pure modules imported.
const PURE = [
  'format.js',
  'job-states.js',
  'components/dag-layout.js',
  'components/gpu-types.js',
  'components/yaml.js',
  'workflow-editor/document.js',
];
const BROWSER = /\b(document|window|localStorage|sessionStorage|location|navigator|fetch|HTMLElement)\b/;

test('the pure modules touch no DOM and import only pure modules', () => {
  for (const module of PURE) {
    assert.ok(graph.has(module), `${module} is gone: update the list`);
    const code = readFileSync(join(ROOT, module), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, '');
    assert.doesNotMatch(code, BROWSER, `${module} reaches the browser`);
    for (const target of graph.get(module)) assert.ok(PURE.includes(target), `${module} imports ${target}`);
  }
});
