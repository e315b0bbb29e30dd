// Tiny DOM helpers shared by every page: one element builder, the state badge and the times that tick. Plain ES
// module, no build step. The formatters live in format.js (no DOM); they are re-exported here for the pages that
// take them with the builder.
import { fmtAgo, fmtDuration, toDate } from './format.js';

export {
  clockSeconds,
  fmtAgo,
  fmtBytes,
  fmtClock,
  fmtDay,
  fmtDuration,
  fmtNumber,
  fmtPercent,
  fmtTime,
  toDate,
} from './format.js';

/**
 * h(tag, props, ...children): build an element.
 * props: `class` (string or array), `on<Event>` handlers (onClick, oninput...), `style` (string or object),
 * `dataset` (object), boolean attributes (true sets, false/null omits), other attributes as strings.
 * Properties `value`, `checked`, `selected`, `disabled`, `hidden`, `htmlFor` are set as DOM properties.
 * children: strings/numbers (text), nodes, arrays (flattened); null/undefined/false are skipped.
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [key, value] of Object.entries(props)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class' || key === 'className') {
        el.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
      } else if (key === 'style') {
        if (typeof value === 'string') el.style.cssText = value;
        else Object.assign(el.style, value);
      } else if (key === 'dataset') {
        Object.assign(el.dataset, value);
      } else if (key.startsWith('on') && typeof value === 'function') {
        el.addEventListener(key.slice(2).toLowerCase(), value);
      } else if (PROPS.has(key)) {
        el[key] = value;
      } else {
        el.setAttribute(key, value === true ? '' : String(value));
      }
    }
  }
  append(el, children);
  return el;
}

const PROPS = new Set(['value', 'checked', 'selected', 'disabled', 'hidden', 'htmlFor', 'indeterminate']);

/** Append children (same rules as h) to a node; returns the node. */
export function append(node, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false || child === true) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Replace all of a node's children. */
export function replace(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

/** "3 min ago" that stays true: the shell's ticker (`tickTimes`) rewrites it every second. */
export function agoSpan(value, props = {}) {
  const d = toDate(value);
  return h('span', { ...props, dataset: d ? { ago: d.toISOString() } : {} }, fmtAgo(value));
}

/** A duration of `seconds` as of now, counted on by the shell's ticker while `running` ("running for 12s"). */
export function durationSpan(seconds, running, props = {}) {
  const ticking = running && seconds !== null && seconds !== undefined;
  return h(
    'span',
    { ...props, dataset: ticking ? { since: String(Date.now() - seconds * 1000) } : {} },
    fmtDuration(seconds),
  );
}

/** Rewrite every `agoSpan` and running `durationSpan` under `root` for the time now (the shell calls it each
 * second). */
export function tickTimes(root = document) {
  const now = Date.now();
  for (const el of root.querySelectorAll('[data-ago]')) el.textContent = fmtAgo(el.dataset.ago, now);
  for (const el of root.querySelectorAll('[data-since]'))
    el.textContent = fmtDuration((now - Number(el.dataset.since)) / 1000);
}

/** The state badge every page uses: Slurm states as `state-X`, run/sweep statuses as `status-x`. */
export function stateBadge(state) {
  const s = state || 'UNKNOWN';
  const cls = s === s.toUpperCase() ? `state-${s}` : `status-${s}`;
  return h('span', { class: ['badge', cls] }, s);
}
