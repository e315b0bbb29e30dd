// A workflow DAG drawn as SVG: jobs in columns by topological layer (parents left of children), edges for
// depends_on (solid afterok, dashed afterany/after, red dotted afternotok), node colour from the job's state.
// `update(states)` recolours nodes live; nodes are selectable by click or keyboard (Enter/Space); with
// `onConnect` a drag from a node's right handle to another node draws a dependency (the visual builder).
// An edge that closes a dependency cycle is drawn red (is-cycle) and left out of the layering. The geometry (layout,
// edge paths, the pan/zoom view) is components/dag-layout.js; this module draws it and handles the pointer.
import { svg as s } from '../svg.js';
import { NODE_H, NODE_W, clip, edgePath, fittedView, isSwap, keptInPanel, layout, zoomedView } from './dag-layout.js';

/**
 * dagView({jobs: [{name, depends_on}], states: {name: state}, subtitles: {name: text}, selected, onSelect,
 * onConnect(parent, child), onEdgeClick({from, to, type}), empty}) -> element with
 * update(states, subtitles), select(name), setJobs(jobs).
 *
 * The graph fits the panel's width (never enlarged, never below MIN_SCALE: a wider graph is panned instead);
 * −/+/Fit buttons and Ctrl+wheel zoom, a drag on the background pans. Pointer positions are mapped through the
 * SVG's screen transform, so a drop lands on the job under the pointer at any scale.
 */
export function dagView({
  jobs = [],
  states = {},
  subtitles = {},
  selected = null,
  onSelect = null,
  onConnect = null,
  onEdgeClick = null,
  empty = 'No jobs yet',
} = {}) {
  const root = document.createElement('div');
  root.className = 'dag';
  let current = { jobs, states: { ...states }, subtitles: { ...subtitles }, selected };
  let nodes = new Map();
  let svg = null;
  let content = { width: 0, height: 0 };
  let view = { x: 0, y: 0, k: 1, height: 0, fitted: true };

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
  Object.assign(tools.style, { position: 'static', justifyContent: 'flex-end', padding: '6px 6px 0' });
  tools.append(
    button('−', 'Zoom out', () => zoomBy(1 / 1.25)),
    button('+', 'Zoom in', () => zoomBy(1.25)),
    button('Fit', 'Fit the graph to the panel', () => fit()),
  );

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

  /** The view kept on the graph (no pan or zoom loses it off the panel), then applied. */
  function show(next) {
    view = { ...keptInPanel(next, content, panelWidth()), fitted: next.fitted };
    apply();
  }

  /** Whole width at the largest scale up to 1, never below MIN_SCALE; a narrower graph is centred. */
  function fit() {
    const w = panelWidth();
    if (!svg || !w) return;
    show({ ...fittedView(content, w), fitted: true });
  }

  function zoomBy(factor, around = null) {
    if (!svg) return;
    const w = panelWidth();
    const at = around || { x: view.x + w / view.k / 2, y: view.y + view.height / view.k / 2 };
    show({ ...zoomedView(view, factor, at), fitted: false });
  }

  function pannable(target) {
    target.addEventListener('pointerdown', (e) => {
      if (e.button !== 0 || e.target.closest('.dag-node, .dag-edge')) return;
      const start = { cx: e.clientX, cy: e.clientY, x: view.x, y: view.y };
      root.classList.add('is-panning');
      const move = (ev) => {
        const x = start.x - (ev.clientX - start.cx) / view.k;
        show({ ...view, x, y: start.y - (ev.clientY - start.cy) / view.k, fitted: false });
      };
      const up = () => {
        root.classList.remove('is-panning');
        window.removeEventListener('pointermove', move);
        window.removeEventListener('pointerup', up);
      };
      window.addEventListener('pointermove', move);
      window.addEventListener('pointerup', up);
    });
    target.addEventListener(
      'wheel',
      (e) => {
        if (!e.ctrlKey && !e.metaKey) return; // a plain wheel scrolls the page
        e.preventDefault();
        zoomBy(e.deltaY < 0 ? 1.1 : 1 / 1.1, toGraph(e));
      },
      { passive: false },
    );
  }

  function draw(swapped = false) {
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
    svg.append(
      s(
        'defs',
        {},
        s(
          'marker',
          {
            id: 'dag-arrow',
            viewBox: '0 0 10 10',
            refX: 4,
            refY: 5,
            markerWidth: 7,
            markerHeight: 7,
            orient: 'auto-start-reverse',
          },
          s('path', { class: 'dag-arrow', d: 'M0,0 L10,5 L0,10 z' }),
        ),
        s(
          'marker',
          {
            id: 'dag-arrow-cycle',
            viewBox: '0 0 10 10',
            refX: 4,
            refY: 5,
            markerWidth: 7,
            markerHeight: 7,
            orient: 'auto-start-reverse',
          },
          s('path', { class: 'dag-arrow is-cycle', d: 'M0,0 L10,5 L0,10 z' }),
        ),
      ),
    );
    for (const edge of edges) {
      const what = edge.cycle
        ? `${edge.to} runs ${edge.type} ${edge.from}: this closes a cycle`
        : `${edge.to} runs ${edge.type} ${edge.from}`;
      const path = s(
        'path',
        {
          class: `dag-edge is-${edge.type}${edge.cycle ? ' is-cycle' : ''}`,
          d: edgePath(positions.get(edge.from), positions.get(edge.to), edge.cycle ? height - 4 : null),
          'marker-end': edge.cycle ? 'url(#dag-arrow-cycle)' : 'url(#dag-arrow)',
          'data-from': edge.from,
          'data-to': edge.to,
        },
        s('title', {}, `${what}${onEdgeClick ? ' (click to remove)' : ''}`),
      );
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
      const g = s('g', {
        class: 'dag-node',
        transform: `translate(${p.x},${p.y})`,
        tabindex: 0,
        role: 'button',
        'data-name': job.name,
        'data-state': state,
        'aria-label': `${job.name}${state ? `: ${state}` : ''}`,
      });
      const title = s('title', {}, `${job.name}${state ? ` — ${state}` : ''}`);
      const stateText = s(
        'text',
        { class: 'dag-node-state', x: 26, y: 35 },
        current.subtitles[job.name] || state || ' ',
      );
      g.append(
        title,
        s('rect', { width: NODE_W, height: NODE_H, rx: 9 }),
        s('circle', { class: 'dag-node-dot', cx: 14, cy: 17, r: 4 }),
        s('text', { x: 26, y: 21, 'font-weight': 600 }, clip(job.name)),
        stateText,
      );
      g.addEventListener('click', () => choose(job.name));
      g.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          choose(job.name);
        }
      });
      if (onConnect) g.append(handle(job.name, p, positions));
      svg.append(g);
      nodes.set(job.name, { g, title, stateText });
    }
    pannable(svg);
    root.replaceChildren(tools, svg); // the buttons in a row of their own: they never cover a job
    if (view.fitted || !panelWidth() || swapped) fit();
    else show(view);
    markSelected();
  }

  function handle(name, p, positions) {
    const knob = s(
      'circle',
      { class: 'dag-handle', cx: NODE_W, cy: NODE_H / 2, r: 6 },
      s('title', {}, `Drag to the job that should run after ${name}`),
    );
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
    if (view.fitted) fit();
    else show(view);
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
    const swapped = isSwap(current.jobs, next); // another workflow: shown whole, not at the old one's pan
    current = { ...current, jobs: next };
    draw(swapped);
  };
  draw();
  return root;
}
