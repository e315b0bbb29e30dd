// The workflow graph's geometry (components/dag-layout.js): dependencies, cycles, columns, the pan/zoom view.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  MAX_SCALE,
  MIN_SCALE,
  NODE_W,
  cycleEdges,
  descendants,
  fittedView,
  isSwap,
  keptInPanel,
  layout,
  parseDependency,
  zoomedView,
} from '../../svc_host/web/static/js/components/dag-layout.js';

const DIAMOND = [
  { name: 'prepare' },
  { name: 'left', depends_on: ['prepare'] },
  { name: 'right', depends_on: ['afterany:prepare'] },
  { name: 'join', depends_on: ['left', 'afternotok:right'] },
];

test('a dependency names its type, a bare name is afterok', () => {
  assert.deepEqual(parseDependency('prep'), { type: 'afterok', job: 'prep' });
  assert.deepEqual(parseDependency('afterany:prep'), { type: 'afterany', job: 'prep' });
  assert.deepEqual(parseDependency('afternotok:a:b'), { type: 'afternotok', job: 'a:b' }); // only the first colon
});

test('descendants are every job that waits, directly or not; unknown names have none', () => {
  assert.deepEqual([...descendants(DIAMOND, 'prepare')].sort(), ['join', 'left', 'right']);
  assert.deepEqual([...descendants(DIAMOND, 'left')], ['join']);
  assert.deepEqual([...descendants(DIAMOND, 'join')], []);
  assert.deepEqual([...descendants(DIAMOND, 'nobody')], []);
});

test('the edge that closes a cycle is the one pointing up the file', () => {
  const cyclic = DIAMOND.map((job) => (job.name === 'prepare' ? { ...job, depends_on: ['join'] } : job));
  assert.deepEqual([...cycleEdges(cyclic)], ['join->prepare']);
  assert.deepEqual([...cycleEdges(DIAMOND)], []);
  assert.deepEqual([...cycleEdges([{ name: 'a', depends_on: ['a'] }])], []); // a self-loop is ignored, not a cycle
});

test('the diamond is laid out in three columns, parents left of children, edges typed', () => {
  const { positions, edges, layers, width, height } = layout(DIAMOND);
  assert.deepEqual(layers, [['prepare'], ['left', 'right'], ['join']]);
  assert.ok(positions.get('prepare').x < positions.get('left').x);
  assert.equal(positions.get('left').x, positions.get('right').x);
  assert.ok(positions.get('left').y < positions.get('right').y);
  assert.equal(positions.get('prepare').y, positions.get('join').y); // single jobs centred on the tallest column
  assert.equal(width, 20 * 2 + 3 * NODE_W + 2 * 60);
  assert.equal(height, 20 * 2 + 2 * 48 + 22);
  assert.deepEqual(
    edges.map((e) => `${e.from}-${e.type}->${e.to}`),
    ['prepare-afterok->left', 'prepare-afterany->right', 'left-afterok->join', 'right-afternotok->join'],
  );
});

test('a cyclic or half-written workflow still lays out: unknown parents ignored, the back edge marked', () => {
  const { layers, edges, height } = layout([
    { name: 'a', depends_on: ['c'] },
    { name: 'b', depends_on: ['a', 'ghost'] },
    { name: 'c', depends_on: ['b'] },
  ]);
  assert.deepEqual(layers, [['a'], ['b'], ['c']]);
  assert.deepEqual(
    edges.filter((e) => e.cycle).map((e) => `${e.from}->${e.to}`),
    ['c->a'],
  );
  assert.equal(height, 20 * 2 + 48 + 40); // room below the graph for the back edge
  assert.deepEqual(layout([]).layers, []);
});

test("within a column, children follow their parents' rows (fewer crossings)", () => {
  const { layers } = layout([
    { name: 'p1' },
    { name: 'p2' },
    { name: 'c2', depends_on: ['p2'] },
    { name: 'c1', depends_on: ['p1'] },
  ]);
  assert.deepEqual(layers, [
    ['p1', 'p2'],
    ['c1', 'c2'],
  ]);
});

test('the fitted view shows the whole width, never enlarged, never below the minimum scale', () => {
  const content = { width: 820, height: 158 };
  const wide = fittedView(content, 1640);
  assert.equal(wide.k, 1);
  assert.equal(wide.x, (820 - 1640) / 2); // a narrower graph is centred
  const narrow = fittedView(content, 615);
  assert.equal(narrow.k, 0.75);
  assert.equal(narrow.x, 0);
  assert.equal(narrow.height, Math.ceil(158 * 0.75));
  assert.equal(fittedView(content, 100).k, MIN_SCALE);
});

test('zooming keeps the point under the pointer in place and stays within the scale bounds', () => {
  const view = { x: 0, y: 0, k: 1, height: 200 };
  const zoomed = zoomedView(view, 2, { x: 100, y: 50 });
  assert.equal(zoomed.k, 2);
  assert.equal((100 - zoomed.x) * zoomed.k, (100 - view.x) * view.k); // same screen position as before
  assert.equal((50 - zoomed.y) * zoomed.k, (50 - view.y) * view.k);
  assert.equal(zoomedView(view, 100, { x: 0, y: 0 }).k, MAX_SCALE);
  assert.equal(zoomedView(view, 0.01, { x: 0, y: 0 }).k, MIN_SCALE);
});

test('no pan leaves the panel without the graph', () => {
  const content = { width: 820, height: 158 };
  const view = { x: 0, y: 0, k: 1, height: 158, fitted: false }; // the panel is 400 px wide, 158 high
  assert.equal(keptInPanel({ ...view, x: -5000 }, content, 400).x, 0); // the left edge stays at the panel's
  assert.equal(keptInPanel({ ...view, x: 5000 }, content, 400).x, 820 - 400); // the right edge too
  assert.equal(keptInPanel({ ...view, x: 200 }, content, 400).x, 200); // within bounds: unchanged
  assert.equal(keptInPanel({ ...view, y: 999 }, content, 400).y, 0); // as tall as the panel: no vertical pan
  // narrower than the panel: it stays whole inside it
  assert.equal(keptInPanel({ ...view, x: 300 }, content, 1000).x, 0);
  assert.equal(keptInPanel({ ...view, x: -900 }, content, 1000).x, 820 - 1000);
  assert.equal(keptInPanel(view, content, 400).fitted, false);
});

test('another workflow is a swap; adding, removing or renaming a job is not', () => {
  const names = (...n) => n.map((name) => ({ name }));
  assert.equal(isSwap(names('a', 'b', 'c', 'd'), names('a', 'b', 'c', 'd', 'e')), false);
  assert.equal(isSwap(names('a', 'b', 'c', 'd'), names('a', 'b', 'c')), false);
  assert.equal(isSwap(names('a', 'b', 'c', 'd'), names('a', 'b', 'c', 'x')), false);
  assert.equal(isSwap(names('a', 'b', 'c', 'd'), names('p', 'q', 'r')), true);
  assert.equal(isSwap([], names('a')), true);
});
