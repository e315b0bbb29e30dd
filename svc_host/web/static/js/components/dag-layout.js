// The workflow graph's geometry, with no DOM: dependencies parsed, cycles found, jobs placed in columns by
// topological layer, edge paths, and the pan/zoom view kept on the graph. components/dag.js draws it;
// tests/js/dag-layout.test.mjs covers it under node.

export const NODE_W = 150;
export const NODE_H = 48;
const COL_GAP = 60;
const ROW_GAP = 22;
const PAD = 20;
const BACK_ROOM = 40; // below the graph, for the edges that close a cycle
export const MIN_SCALE = 0.6; // below this a job's name is too small to read: the panel pans instead
export const MAX_SCALE = 2;

export const clamp = (value, lo, hi) => Math.min(hi, Math.max(lo, value));

/** `afterany:prep` -> {type: 'afterany', job: 'prep'}; a bare name is afterok. */
export function parseDependency(entry) {
  const text = String(entry);
  const i = text.indexOf(':');
  return i < 0 ? { type: 'afterok', job: text } : { type: text.slice(0, i), job: text.slice(i + 1) };
}

/** name -> the names it depends on (known jobs only, no self-loops). */
function parentsOf(jobs) {
  const names = new Set(jobs.map((job) => job.name));
  return new Map(
    jobs.map((job) => [
      job.name,
      (job.depends_on || []).map((d) => parseDependency(d).job).filter((p) => names.has(p) && p !== job.name),
    ]),
  );
}

/** Every job that waits for `name`, directly or through others (its descendants). */
export function descendants(jobs, name) {
  const children = new Map(jobs.map((job) => [job.name, []]));
  for (const [child, ps] of parentsOf(jobs)) for (const p of ps) children.get(p).push(child);
  const found = new Set();
  const stack = [...(children.get(name) || [])];
  while (stack.length) {
    const cur = stack.pop();
    if (found.has(cur)) continue;
    found.add(cur);
    stack.push(...children.get(cur));
  }
  return found;
}

/**
 * The edges that close a cycle, as "parent->child" keys: within a cycle, those whose parent comes later in
 * the file than its child (a job made to wait for one written below it). Without them no cycle is left: what
 * remains of every cycle points down the file.
 */
export function cycleEdges(jobs) {
  const index = new Map(jobs.map((job, i) => [job.name, i]));
  const out = new Set();
  for (const [child, ps] of parentsOf(jobs)) {
    for (const p of ps) {
      if (index.get(p) > index.get(child) && descendants(jobs, child).has(p)) out.add(`${p}->${child}`);
    }
  }
  return out;
}

/**
 * Layers by longest path from a root (a job's layer is one more than its deepest parent); unknown parents are
 * ignored and the edges that close a cycle are left out of the layering (and drawn as such), so a half-written
 * or cyclic workflow still draws. Within a layer, jobs are ordered by the mean row of their parents (fewer
 * crossings), then by file order.
 */
export function layout(jobs) {
  const byName = new Map(jobs.map((job, i) => [job.name, { ...job, index: i }]));
  const cyclic = cycleEdges(jobs);
  const parents = new Map(
    [...parentsOf(jobs)].map(([name, ps]) => [name, ps.filter((p) => !cyclic.has(`${p}->${name}`))]),
  );
  const layer = new Map();
  const depth = (name) => {
    if (!layer.has(name)) layer.set(name, Math.max(-1, ...parents.get(name).map(depth)) + 1);
    return layer.get(name);
  };
  for (const job of jobs) depth(job.name);
  const columns = [];
  for (const job of jobs) {
    const d = layer.get(job.name);
    if (!columns[d]) columns[d] = [];
    columns[d].push(job.name);
  }
  const row = new Map();
  for (const [ci, col] of columns.entries()) {
    if (ci > 0) {
      const weight = (name) => {
        const ps = parents.get(name).filter((p) => row.has(p));
        return ps.length ? ps.reduce((sum, p) => sum + row.get(p), 0) / ps.length : Infinity;
      };
      col.sort((a, b) => weight(a) - weight(b) || byName.get(a).index - byName.get(b).index);
    }
    for (const [ri, name] of col.entries()) row.set(name, ri);
  }
  const tallest = Math.max(1, ...columns.map((c) => c.length));
  const height = PAD * 2 + tallest * NODE_H + (tallest - 1) * ROW_GAP;
  const positions = new Map();
  for (const [ci, col] of columns.entries()) {
    const colHeight = col.length * NODE_H + (col.length - 1) * ROW_GAP;
    const top = (height - colHeight) / 2;
    for (const [ri, name] of col.entries()) {
      positions.set(name, { x: PAD + ci * (NODE_W + COL_GAP), y: top + ri * (NODE_H + ROW_GAP) });
    }
  }
  const width = PAD * 2 + Math.max(1, columns.length) * NODE_W + Math.max(0, columns.length - 1) * COL_GAP;
  const edges = [];
  for (const job of jobs) {
    for (const entry of job.depends_on || []) {
      const dep = parseDependency(entry);
      if (byName.has(dep.job) && dep.job !== job.name) {
        edges.push({ from: dep.job, to: job.name, type: dep.type, cycle: cyclic.has(`${dep.job}->${job.name}`) });
      }
    }
  }
  // An edge that closes a cycle runs below the graph, from the bottom of its parent up into its child.
  return { positions, edges, width, height: height + (cyclic.size ? BACK_ROOM : 0), layers: columns };
}

export function edgePath(a, b, bottom = null) {
  if (bottom !== null) {
    // a cycle's closing edge: under the graph, from bottom to bottom
    const bx1 = a.x + NODE_W / 2;
    const bx2 = b.x + NODE_W / 2;
    return `M${bx1},${a.y + NODE_H} C${bx1},${bottom} ${bx2},${bottom} ${bx2},${b.y + NODE_H + 6}`;
  }
  const x1 = a.x + NODE_W;
  const y1 = a.y + NODE_H / 2;
  const x2 = b.x;
  const y2 = b.y + NODE_H / 2;
  const mid = Math.max(24, (x2 - x1) / 2);
  return `M${x1},${y1} C${x1 + mid},${y1} ${x2 - mid},${y2} ${x2 - 6},${y2}`;
}

export function clip(text, max = 20) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * The fitted view of a graph `content` ({width, height}) in a panel `panelWidth` px wide: the whole width at the
 * largest scale up to 1, never below MIN_SCALE (a wider graph is panned instead); a narrower graph is centred.
 * A view is {x, y, k, height}: the graph point at the panel's top left, the scale, the panel's height in px.
 */
export function fittedView(content, panelWidth) {
  const k = clamp(panelWidth / content.width, MIN_SCALE, 1);
  return { x: Math.min(0, (content.width - panelWidth / k) / 2), y: 0, k, height: Math.ceil(content.height * k) };
}

/** `view` zoomed by `factor` (scale kept within MIN_SCALE..MAX_SCALE) around the graph point `at`. */
export function zoomedView(view, factor, at) {
  const k = clamp(view.k * factor, MIN_SCALE, MAX_SCALE);
  return { ...view, x: at.x - (at.x - view.x) * (view.k / k), y: at.y - (at.y - view.y) * (view.k / k), k };
}

/**
 * `view` moved as little as needed to keep the graph in the panel: a graph larger than the panel (on an axis)
 * covers it edge to edge, a smaller one stays whole inside it. So no drag or zoom loses the graph off the panel.
 */
export function keptInPanel(view, content, panelWidth) {
  const bound = (at, size, shown) => clamp(at, Math.min(0, size - shown), Math.max(0, size - shown));
  return {
    ...view,
    x: bound(view.x, content.width, panelWidth / view.k),
    y: bound(view.y, content.height, view.height / view.k),
  };
}

/**
 * Is `next` another graph rather than an edit of `before`? Fewer than half of the larger one's job names in
 * common (adding, removing or renaming a job keeps the view; a pasted workflow is shown whole).
 */
export function isSwap(before, next) {
  if (!before.length || !next.length) return true;
  const names = new Set(before.map((job) => job.name));
  const common = next.filter((job) => names.has(job.name)).length;
  return common * 2 < Math.max(before.length, next.length);
}
