// Charts drawn as SVG, no library: a time-series line chart, a category bar chart and a stacked bar.
// Colours come from CSS variables (--chart-1 … --chart-8, --border, --muted in flow.css/app.css), so a theme
// switch recolours them without a redraw. Times are shown in the browser's zone.
import { svg as s } from '../svg.js';

const PALETTE = 8;
const MARGIN = { top: 12, right: 16, bottom: 28, left: 48 };

function div(cls, ...children) {
  const el = document.createElement('div');
  el.className = cls;
  el.append(...children.flat().filter((c) => c !== null && c !== undefined));
  return el;
}

function colorVar(i) {
  return `var(--chart-${(i % PALETTE) + 1})`;
}

/** Round numbers for a value axis: about `count` ticks from 0 (or min) to at least max. */
export function niceTicks(min, max, count = 5, { integer = false } = {}) {
  if (!(max > min)) max = min + 1;
  const raw = (max - min) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((v) => v >= raw) || 10 * mag;
  if (integer) step = Math.max(1, Math.ceil(step)); // counts of jobs or GPUs: no "1.5 jobs" tick
  const start = Math.floor(min / step) * step;
  const ticks = [];
  for (let v = start; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toFixed(10)));
  if (ticks[ticks.length - 1] < max) ticks.push(Number((ticks[ticks.length - 1] + step).toFixed(10)));
  return ticks;
}

const MINUTE = 60e3;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const TIME_STEPS = [
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
];

/** Tick times (epoch ms) on round local-time boundaries between t0 and t1, about `count` of them. */
export function timeTicks(t0, t1, count = 6) {
  const span = Math.max(t1 - t0, MINUTE);
  const step = TIME_STEPS.find((st) => span / st <= count) || 14 * DAY;
  const midnight = new Date(t0);
  midnight.setHours(0, 0, 0, 0); // local midnight: ticks fall on round times of the browser's zone
  const unit = Math.min(step, DAY);
  const ticks = [];
  for (let t = midnight.getTime() + Math.ceil((t0 - midnight.getTime()) / unit) * unit; t <= t1; t += step) {
    ticks.push(t);
  }
  return { ticks, step };
}

const clockFmt = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dayFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
const fullFmt = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
});

function tickLabel(t, step, spanMs) {
  const d = new Date(t);
  if (step >= DAY) return dayFmt.format(d);
  if (spanMs > DAY && d.getHours() === 0 && d.getMinutes() === 0) return dayFmt.format(d);
  return clockFmt.format(d);
}

function fmtValue(v) {
  return Number.isInteger(v) ? String(v) : v.toLocaleString(undefined, { maximumFractionDigits: 2 });
}

/** A series' colour: its own `color` (any CSS colour, e.g. 'var(--bad)' for failures), else the palette's. */
function colorOf(series, i) {
  return series[i]?.color ? series[i].color : colorVar(i);
}

function legend(series) {
  return div(
    'chart-legend',
    series.map((ser, i) =>
      div(
        'chart-legend-item',
        Object.assign(document.createElement('span'), {
          className: 'chart-swatch',
          style: `background:${colorOf(series, i)}`,
        }),
        document.createTextNode(ser.name),
      ),
    ),
  );
}

/** Redraw `draw(width)` into `holder` whenever its width changes (charts stay crisp at any size). */
function responsive(holder, draw) {
  let width = 0;
  const redraw = () => {
    const w = Math.max(240, Math.floor(holder.clientWidth || 640));
    if (w === width) return;
    width = w;
    holder.replaceChildren(draw(w));
  };
  if (typeof ResizeObserver !== 'undefined') new ResizeObserver(redraw).observe(holder);
  queueMicrotask(redraw);
  requestAnimationFrame(redraw);
  return redraw;
}

/**
 * lineChart({series: [{name, points: [[epochMs, value], ...], color?}], yLabel, height, yMax}) -> element.
 * A time axis in the browser's zone, a value axis from 0, one line per series, a legend, and a hover readout
 * of every series' value at the nearest time. An empty series list shows `empty` (a message).
 */
export function lineChart({ series = [], yLabel = '', height = 220, yMax = null, empty = 'No data yet' } = {}) {
  const root = div('chart chart-line');
  const plot = div('chart-plot');
  plot.style.height = `${height}px`;
  const tip = div('chart-tip');
  tip.hidden = true;
  const all = series.flatMap((ser) => ser.points);
  if (!all.length) {
    root.append(div('chart-empty', empty));
    return root;
  }
  const t0 = Math.min(...all.map((p) => p[0]));
  const t1 = Math.max(...all.map((p) => p[0]), t0 + MINUTE);
  const top = Math.max(yMax ?? 0, ...all.map((p) => p[1]), 1);
  const yTicks = niceTicks(0, top, 4, { integer: all.every((p) => Number.isInteger(p[1])) });
  const y1 = yTicks[yTicks.length - 1];
  const times = [...new Set(all.map((p) => p[0]))].sort((a, b) => a - b);

  responsive(plot, (width) => {
    const w = width - MARGIN.left - MARGIN.right;
    const hgt = height - MARGIN.top - MARGIN.bottom;
    const x = (t) => MARGIN.left + ((t - t0) / (t1 - t0)) * w;
    const y = (v) => MARGIN.top + hgt - (v / y1) * hgt;
    const svg = s('svg', {
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: 'img',
      'aria-label': yLabel || 'chart',
    });
    const { ticks, step } = timeTicks(t0, t1, Math.max(2, Math.floor(w / 110)));
    for (const v of yTicks) {
      svg.append(s('line', { class: 'chart-grid', x1: MARGIN.left, x2: MARGIN.left + w, y1: y(v), y2: y(v) }));
      svg.append(
        s('text', { class: 'chart-tick', x: MARGIN.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, fmtValue(v)),
      );
    }
    for (const t of ticks) {
      svg.append(
        s('line', { class: 'chart-axis-tick', x1: x(t), x2: x(t), y1: MARGIN.top + hgt, y2: MARGIN.top + hgt + 4 }),
      );
      svg.append(
        s(
          'text',
          { class: 'chart-tick', x: x(t), y: MARGIN.top + hgt + 18, 'text-anchor': 'middle' },
          tickLabel(t, step, t1 - t0),
        ),
      );
    }
    svg.append(
      s('line', {
        class: 'chart-axis',
        x1: MARGIN.left,
        x2: MARGIN.left + w,
        y1: MARGIN.top + hgt,
        y2: MARGIN.top + hgt,
      }),
    );
    if (yLabel) {
      svg.append(
        s(
          'text',
          {
            class: 'chart-label',
            transform: `translate(12 ${MARGIN.top + hgt / 2}) rotate(-90)`,
            'text-anchor': 'middle',
          },
          yLabel,
        ),
      );
    }
    series.forEach((ser, i) => {
      if (!ser.points.length) return;
      const d = ser.points.map((p, j) => `${j ? 'L' : 'M'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join('');
      svg.append(
        s('path', { class: 'chart-line-path', d, style: `stroke:${colorOf(series, i)}` }, s('title', {}, ser.name)),
      );
      if (ser.points.length <= 60) {
        for (const p of ser.points) {
          svg.append(
            s(
              'circle',
              { class: 'chart-dot', cx: x(p[0]), cy: y(p[1]), r: 2.5, style: `fill:${colorOf(series, i)}` },
              s('title', {}, `${ser.name}: ${fmtValue(p[1])} at ${fullFmt.format(new Date(p[0]))}`),
            ),
          );
        }
      }
    });
    const cursor = s('line', {
      class: 'chart-cursor',
      x1: 0,
      x2: 0,
      y1: MARGIN.top,
      y2: MARGIN.top + hgt,
      visibility: 'hidden',
    });
    svg.append(cursor);
    const hit = s('rect', {
      class: 'chart-hit',
      x: MARGIN.left,
      y: MARGIN.top,
      width: w,
      height: hgt,
      fill: 'transparent',
    });
    hit.addEventListener('mousemove', (ev) => {
      const box = svg.getBoundingClientRect();
      const t = t0 + ((ev.clientX - box.left - MARGIN.left) / w) * (t1 - t0);
      const near = times.reduce((a, b) => (Math.abs(b - t) < Math.abs(a - t) ? b : a), times[0]);
      cursor.setAttribute('x1', x(near));
      cursor.setAttribute('x2', x(near));
      cursor.setAttribute('visibility', 'visible');
      const rows = series.map((ser, i) => {
        const p = ser.points.reduce((a, b) => (Math.abs(b[0] - near) < Math.abs(a[0] - near) ? b : a), ser.points[0]);
        return p
          ? div(
              'chart-tip-row',
              Object.assign(document.createElement('span'), {
                className: 'chart-swatch',
                style: `background:${colorOf(series, i)}`,
              }),
              document.createTextNode(`${ser.name}: ${fmtValue(p[1])}`),
            )
          : null;
      });
      tip.replaceChildren(div('chart-tip-time', fullFmt.format(new Date(near))), ...rows.filter(Boolean));
      tip.hidden = false;
      const left = Math.min(x(near) + 12, width - 180);
      tip.style.left = `${Math.max(0, left)}px`;
      tip.style.top = `${MARGIN.top}px`;
    });
    hit.addEventListener('mouseleave', () => {
      cursor.setAttribute('visibility', 'hidden');
      tip.hidden = true;
    });
    svg.append(hit);
    return svg;
  });
  root.append(plot, tip, legend(series));
  return root;
}

/**
 * barChart({categories, series: [{name, values, color?}], stacked, yLabel, height, formatValue}) -> element.
 * Vertical bars per category, side by side or stacked, with a value axis, a legend and a title per bar.
 */
export function barChart({
  categories = [],
  series = [],
  stacked = false,
  yLabel = '',
  height = 220,
  formatValue = fmtValue,
  empty = 'No data yet',
} = {}) {
  const root = div('chart chart-bar');
  if (!categories.length || !series.length) {
    root.append(div('chart-empty', empty));
    return root;
  }
  const plot = div('chart-plot');
  plot.style.height = `${height}px`;
  const totals = categories.map((_, ci) =>
    stacked
      ? series.reduce((sum, ser) => sum + (Number(ser.values[ci]) || 0), 0)
      : Math.max(...series.map((ser) => Number(ser.values[ci]) || 0)),
  );
  const integer = series.every((ser) => ser.values.every((v) => Number.isInteger(Number(v) || 0)));
  const yTicks = niceTicks(0, Math.max(...totals, 1), 4, { integer });
  const y1 = yTicks[yTicks.length - 1];
  responsive(plot, (width) => {
    const w = width - MARGIN.left - MARGIN.right;
    const hgt = height - MARGIN.top - MARGIN.bottom;
    const y = (v) => MARGIN.top + hgt - (v / y1) * hgt;
    const band = w / categories.length;
    const gap = Math.min(band * 0.2, 16);
    const svg = s('svg', {
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: 'img',
      'aria-label': yLabel || 'bar chart',
    });
    for (const v of yTicks) {
      svg.append(s('line', { class: 'chart-grid', x1: MARGIN.left, x2: MARGIN.left + w, y1: y(v), y2: y(v) }));
      svg.append(
        s('text', { class: 'chart-tick', x: MARGIN.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, formatValue(v)),
      );
    }
    const labelEvery = Math.max(1, Math.ceil(categories.length / Math.max(1, Math.floor(w / 60))));
    categories.forEach((cat, ci) => {
      const x0 = MARGIN.left + ci * band + gap / 2;
      const bw = band - gap;
      let base = 0;
      series.forEach((ser, si) => {
        const v = Number(ser.values[ci]) || 0;
        const title = s('title', {}, `${cat} · ${ser.name}: ${formatValue(v)}`);
        if (stacked) {
          if (v > 0)
            svg.append(
              s(
                'rect',
                {
                  class: 'chart-bar-rect',
                  x: x0,
                  y: y(base + v),
                  width: Math.max(1, bw),
                  height: Math.max(0, y(base) - y(base + v)),
                  style: `fill:${colorOf(series, si)}`,
                },
                title,
              ),
            );
          base += v;
        } else {
          const sw = bw / series.length;
          svg.append(
            s(
              'rect',
              {
                class: 'chart-bar-rect',
                x: x0 + si * sw,
                y: y(v),
                width: Math.max(1, sw - 1),
                height: Math.max(0, y(0) - y(v)),
                style: `fill:${colorOf(series, si)}`,
              },
              title,
            ),
          );
        }
      });
      if (ci % labelEvery === 0) {
        svg.append(
          s('text', { class: 'chart-tick', x: x0 + bw / 2, y: MARGIN.top + hgt + 18, 'text-anchor': 'middle' }, cat),
        );
      }
    });
    svg.append(
      s('line', {
        class: 'chart-axis',
        x1: MARGIN.left,
        x2: MARGIN.left + w,
        y1: MARGIN.top + hgt,
        y2: MARGIN.top + hgt,
      }),
    );
    if (yLabel) {
      svg.append(
        s(
          'text',
          {
            class: 'chart-label',
            transform: `translate(12 ${MARGIN.top + hgt / 2}) rotate(-90)`,
            'text-anchor': 'middle',
          },
          yLabel,
        ),
      );
    }
    return svg;
  });
  root.append(plot, legend(series));
  return root;
}

/**
 * stackedBar(parts: [{label, value, cls}], {total, showLegend}) -> element with `update(parts)`.
 * One horizontal bar split by value; `cls` colours a segment (e.g. 'state-COMPLETED'). Segments slide when
 * `update` is called with new values, so a live counter moves instead of flashing.
 */
export function stackedBar(parts = [], { showLegend = true, label = 'progress' } = {}) {
  const root = div('stacked');
  const bar = div('stacked-bar');
  bar.setAttribute('role', 'img');
  const legendEl = div('stacked-legend');
  const segments = new Map();
  root.append(bar);
  if (showLegend) root.append(legendEl);
  root.update = (next) => {
    const total = next.reduce((sum, p) => sum + Math.max(0, Number(p.value) || 0), 0);
    bar.setAttribute('aria-label', `${label}: ${next.map((p) => `${p.label} ${p.value}`).join(', ')}`);
    for (const p of next) {
      let seg = segments.get(p.label);
      if (!seg) {
        seg = div(`stacked-seg ${p.cls || ''}`);
        seg.dataset.label = p.label;
        segments.set(p.label, seg);
        bar.append(seg);
      }
      seg.className = `stacked-seg ${p.cls || ''}`;
      const pct = total ? (Math.max(0, Number(p.value) || 0) / total) * 100 : 0;
      seg.style.width = `${pct}%`;
      seg.title = `${p.label}: ${p.value}`;
      seg.dataset.value = String(p.value);
      seg.textContent = pct >= 8 ? String(p.value) : '';
    }
    legendEl.replaceChildren(
      ...next.map((p) =>
        div(
          'stacked-legend-item',
          Object.assign(document.createElement('span'), { className: `stacked-swatch ${p.cls || ''}` }),
          document.createTextNode(`${p.label} ${p.value}`),
        ),
      ),
    );
    if (!total) bar.classList.add('is-empty');
    else bar.classList.remove('is-empty');
  };
  root.update(parts);
  return root;
}
