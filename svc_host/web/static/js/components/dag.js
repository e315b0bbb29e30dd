// A workflow DAG drawn as SVG: jobs in columns by topological layer (parents left of children), edges for
// depends_on (solid afterok, dashed afterany/after, red dotted afternotok), node colour from the job's state.
// `update(states)` recolours nodes live; nodes are selectable by click or keyboard (Enter/Space); with
// `onConnect` a drag from a node's right handle to another node draws a dependency (the visual builder).
// An edge that closes a dependency cycle is drawn red (is-cycle) and left out of the layering.

const SVG = 'http://www.w3.org/2000/svg';
const NODE_W = 150;
const NODE_H = 48;
const COL_GAP = 60;
const ROW_GAP = 22;
const PAD = 20;
const MIN_SCALE = 0.6; // below this a job's name is too small to read: the panel pans instead
const MAX_SCALE = 2;
const BACK_ROOM = 40; // below the graph, for the edges that close a cycle

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** `afterany:prep` -> {type: 'afterany', job: 'prep'}; a bare name is afterok. */
export function parseDependency(entry) {
  const text = String(entry);
  const i = text.indexOf(':');
  return i < 0 ? { type: 'afterok', job: text } : { type: text.slice(0, i), job: text.slice(i + 1) };
}

/** name -> the names it depends on (known jobs only, no self-loops). */
function parentsOf(jobs) {
  const names = new Set(jobs.map((job) => job.name));
  return new Map(jobs.map((job) => [job.name, (job.depends_on || []).map((d) => parseDependency(d).job).filter((p) => names.has(p) && p !== job.name)]));
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
  const parents = new Map([...parentsOf(jobs)].map(([name, ps]) => [name, ps.filter((p) => !cyclic.has(`${p}->${name}`))]));
  const layer = new Map();
  const depth = (name) => {
    if (!layer.has(name)) layer.set(name, Math.max(-1, ...parents.get(name).map(depth)) + 1);
    return layer.get(name);
  };
  jobs.forEach((job) => depth(job.name));
  const columns = [];
  for (const job of jobs) {
    const d = layer.get(job.name);
    (columns[d] ||= []).push(job.name);
  }
  const row = new Map();
  columns.forEach((col, ci) => {
    if (ci > 0) {
      const weight = (name) => {
        const ps = parents.get(name).filter((p) => row.has(p));
        return ps.length ? ps.reduce((sum, p) => sum + row.get(p), 0) / ps.length : Infinity;
      };
      col.sort((a, b) => weight(a) - weight(b) || byName.get(a).index - byName.get(b).index);
    }
    col.forEach((name, ri) => row.set(name, ri));
  });
  const tallest = Math.max(1, ...columns.map((c) => c.length));
  const height = PAD * 2 + tallest * NODE_H + (tallest - 1) * ROW_GAP;
  const positions = new Map();
  columns.forEach((col, ci) => {
    const colHeight = col.length * NODE_H + (col.length - 1) * ROW_GAP;
    const top = (height - colHeight) / 2;
    col.forEach((name, ri) => positions.set(name, { x: PAD + ci * (NODE_W + COL_GAP), y: top + ri * (NODE_H + ROW_GAP) }));
  });
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

function edgePath(a, b, bottom = null) {
  if (bottom !== null) { // a cycle's closing edge: under the graph, from bottom to bottom
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

function clip(text, max = 20) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const clamp = (value, lo, hi) => Math.min(hi, Math.max(lo, value));

/**
 * dagView({jobs: [{name, depends_on}], states: {name: state}, subtitles: {name: text}, selected, onSelect,
 * onConnect(parent, child), onEdgeClick({from, to, type}), empty}) -> element with
 * update(states, subtitles), select(name), setJobs(jobs).
 *
 * The graph fits the panel's width (never enlarged, never below MIN_SCALE: a wider graph is panned instead);
 * −/+/Fit buttons and Ctrl+wheel zoom, a drag on the background pans. Pointer positions are mapped through the
 * SVG's screen transform, so a drop lands on the job under the pointer at any scale.
 */
export function dagView({ jobs = [], states = {}, subtitles = {}, selected = null, onSelect = null, onConnect = null,
  onEdgeClick = null, empty = 'No jobs yet' } = {}) {
  const root = document.createElement('div');
  root.className = 'dag';
  let current = { jobs, states: { ...states }, subtitles: { ...subtitles }, selected };
  let nodes = new Map();
  let svg = null;
  let content = { width: 0, height: 0 };
  const view = { x: 0, y: 0, k: 1, height: 0, fitted: true };

  const button = (label, title, onClick) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'btn btn-sm';
    b.textContent = label;
    b.title = title;
    b.setAttribute('aria-label', title);
    b.addEventListener('click', onClick);
    return b;
  };
  const tools = document.createElement('div');
  tools.className = 'dag-zoom';
  tools.append(button('−', 'Zoom out', () => zoomBy(1 / 1.25)), button('+', 'Zoom in', () => zoomBy(1.25)), button('Fit', 'Fit the graph to the panel', () => fit()));

  /** The screen point of a pointer event in the graph's own coordinates. */
  function toGraph(ev) {
    return new DOMPoint(ev.clientX, ev.clientY).matrixTransform(svg.getScreenCTM().inverse());
  }

  function panelWidth() {
    return root.clientWidth;
  }

  function apply() {
    const w = panelWidth();
    if (!svg || !w) return;
    svg.setAttribute('width', String(w));
    svg.setAttribute('height', String(view.height));
    svg.setAttribute('viewBox', `${view.x} ${view.y} ${w / view.k} ${view.height / view.k}`);
    root.dataset.scale = view.k.toFixed(3);
  }

  /** Whole width at the largest scale up to 1, never below MIN_SCALE; a narrower graph is centred. */
  function fit() {
    const w = panelWidth();
    if (!svg || !w) return;
    view.k = clamp(w / content.width, MIN_SCALE, 1);
    view.height = Math.ceil(content.height * view.k);
    view.x = Math.min(0, (content.width - w / view.k) / 2);
    view.y = 0;
    view.fitted = true;
    apply();
  }

  function zoomBy(factor, around = null) {
    if (!svg) return;
    const w = panelWidth();
    const k = clamp(view.k * factor, MIN_SCALE, MAX_SCALE);
    const at = around || { x: view.x + w / view.k / 2, y: view.y + view.height / view.k / 2 };
    view.x = at.x - (at.x - view.x) * (view.k / k);
    view.y = at.y - (at.y - view.y) * (view.k / k);
    view.k = k;
    view.fitted = false;
    apply();
  }

  function pannable(target) {
    target.addEventListener('pointerdown', (e) => {
      if (e.button !== 0 || e.target.closest('.dag-node, .dag-edge')) return;
      const start = { cx: e.clientX, cy: e.clientY, x: view.x, y: view.y };
      root.classList.add('is-panning');
      const move = (ev) => {
        view.x = start.x - (ev.clientX - start.cx) / view.k;
        view.y = start.y - (ev.clientY - start.cy) / view.k;
        view.fitted = false;
        apply();
      };
      const up = () => {
        root.classList.remove('is-panning');
        window.removeEventListener('pointermove', move);
        window.removeEventListener('pointerup', up);
      };
      window.addEventListener('pointermove', move);
      window.addEventListener('pointerup', up);
    });
    target.addEventListener('wheel', (e) => {
      if (!e.ctrlKey && !e.metaKey) return; // a plain wheel scrolls the page
      e.preventDefault();
      zoomBy(e.deltaY < 0 ? 1.1 : 1 / 1.1, toGraph(e));
    }, { passive: false });
  }

  function draw() {
    nodes = new Map();
    if (!current.jobs.length) {
      svg = null;
      const msg = document.createElement('div');
      msg.className = 'dag-empty';
      msg.textContent = empty;
      root.replaceChildren(msg);
      return;
    }
    const { positions, edges, width, height } = layout(current.jobs);
    content = { width, height };
    svg = s('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'group', 'aria-label': 'workflow graph' });
    svg.append(s('defs', {},
      s('marker', { id: 'dag-arrow', viewBox: '0 0 10 10', refX: 4, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
        s('path', { class: 'dag-arrow', d: 'M0,0 L10,5 L0,10 z' })),
      s('marker', { id: 'dag-arrow-cycle', viewBox: '0 0 10 10', refX: 4, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
        s('path', { class: 'dag-arrow is-cycle', d: 'M0,0 L10,5 L0,10 z' }))));
    for (const edge of edges) {
      const what = edge.cycle ? `${edge.to} runs ${edge.type} ${edge.from}: this closes a cycle` : `${edge.to} runs ${edge.type} ${edge.from}`;
      const path = s('path', { class: `dag-edge is-${edge.type}${edge.cycle ? ' is-cycle' : ''}`, d: edgePath(positions.get(edge.from), positions.get(edge.to), edge.cycle ? height - 4 : null),
        'marker-end': edge.cycle ? 'url(#dag-arrow-cycle)' : 'url(#dag-arrow)', 'data-from': edge.from, 'data-to': edge.to },
        s('title', {}, `${what}${onEdgeClick ? ' (click to remove)' : ''}`));
      if (onEdgeClick) {
        path.style.cursor = 'pointer';
        path.style.pointerEvents = 'stroke';
        path.setAttribute('stroke-width', '3');
        path.addEventListener('click', () => onEdgeClick(edge));
      }
      svg.append(path);
    }
    for (const job of current.jobs) {
      const p = positions.get(job.name);
      const state = current.states[job.name] || '';
      const g = s('g', { class: 'dag-node', transform: `translate(${p.x},${p.y})`, tabindex: 0, role: 'button', 'data-name': job.name, 'data-state': state, 'aria-label': `${job.name}${state ? `: ${state}` : ''}` });
      const title = s('title', {}, `${job.name}${state ? ` — ${state}` : ''}`);
      const stateText = s('text', { class: 'dag-node-state', x: 26, y: 35 }, current.subtitles[job.name] || state || ' ');
      g.append(title, s('rect', { width: NODE_W, height: NODE_H, rx: 9 }),
        s('circle', { class: 'dag-node-dot', cx: 14, cy: 17, r: 4 }),
        s('text', { x: 26, y: 21, 'font-weight': 600 }, clip(job.name)), stateText);
      g.addEventListener('click', () => choose(job.name));
      g.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); choose(job.name); }
      });
      if (onConnect) g.append(handle(job.name, p, positions));
      svg.append(g);
      nodes.set(job.name, { g, title, stateText });
    }
    pannable(svg);
    root.replaceChildren(svg, tools);
    if (view.fitted || !panelWidth()) fit();
    else apply();
    markSelected();
  }

  function handle(name, p, positions) {
    const knob = s('circle', { class: 'dag-handle', cx: NODE_W, cy: NODE_H / 2, r: 6 }, s('title', {}, `Drag to the job that should run after ${name}`));
    knob.addEventListener('pointerdown', (e) => {
      e.preventDefault();
      e.stopPropagation();
      const line = s('path', { class: 'dag-edge dag-edge-draft', 'marker-end': 'url(#dag-arrow)' });
      svg.append(line);
      root.classList.add('is-connecting');
      const move = (ev) => {
        const q = toGraph(ev);
        line.setAttribute('d', `M${p.x + NODE_W},${p.y + NODE_H / 2} L${q.x},${q.y}`);
      };
      const up = (ev) => {
        window.removeEventListener('pointermove', move);
        window.removeEventListener('pointerup', up);
        line.remove();
        root.classList.remove('is-connecting');
        const q = toGraph(ev);
        for (const [target, pos] of positions) {
          if (target !== name && q.x >= pos.x && q.x <= pos.x + NODE_W && q.y >= pos.y && q.y <= pos.y + NODE_H) {
            onConnect(name, target);
            return;
          }
        }
      };
      window.addEventListener('pointermove', move);
      window.addEventListener('pointerup', up);
    });
    return knob;
  }

  function choose(name) {
    current.selected = name;
    markSelected();
    if (onSelect) onSelect(name);
  }

  function markSelected() {
    for (const [name, node] of nodes) node.g.classList.toggle('is-selected', name === current.selected);
  }

  // The panel's width decides the fitted scale: refit when it changes (a zoomed or panned view keeps its scale).
  let lastWidth = 0;
  new ResizeObserver(() => {
    const w = panelWidth();
    if (!w || w === lastWidth) return;
    lastWidth = w;
    if (view.fitted) fit(); else apply();
  }).observe(root);

  /** Recolour in place (no relayout): `states` maps job name -> state; `subtitles` the line under the name. */
  root.update = (states = {}, subtitles = null) => {
    current.states = { ...current.states, ...states };
    if (subtitles) current.subtitles = { ...current.subtitles, ...subtitles };
    for (const [name, node] of nodes) {
      const state = current.states[name] || '';
      node.g.dataset.state = state;
      node.g.setAttribute('aria-label', `${name}${state ? `: ${state}` : ''}`);
      node.title.textContent = `${name}${state ? ` — ${state}` : ''}`;
      node.stateText.textContent = current.subtitles[name] || state || ' ';
    }
  };
  root.select = (name) => {
    current.selected = name;
    markSelected();
  };
  root.setJobs = (next) => {
    current = { ...current, jobs: next };
    draw();
  };
  draw();
  return root;
}
