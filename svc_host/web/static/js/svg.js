// The one SVG element builder (the graph and the charts): `h` of dom.js makes HTML elements, which SVG cannot use.

const SVG = 'http://www.w3.org/2000/svg';

/** svg(tag, attrs, ...children): attributes set as strings (null/undefined skipped), children as for `h`. */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}
