// The formatters every page uses: times (in the browser's zone, with it), durations, Slurm's clock times, sizes,
// numbers and percentages. Pure text, no DOM (dom.js builds the elements that show them; tests/js covers these).

/** A Date from an ISO string, epoch seconds or milliseconds (numbers above 1e12 are taken as ms). */
export function toDate(value) {
  if (value === null || value === undefined || value === '') return null;
  if (value instanceof Date) return value;
  if (typeof value === 'number') return new Date(value > 1e12 ? value : value * 1000);
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d;
}

const dateTimeFmt = new Intl.DateTimeFormat('en-CA', {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
  timeZoneName: 'short',
});
const dayFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: '2-digit' });

/** The parts of `d` as the dashboard writes times (browser's zone, 24-hour clock). */
function timeParts(d) {
  return Object.fromEntries(dateTimeFmt.formatToParts(d).map((p) => [p.type, p.value]));
}

/** A time in the browser's zone, with the zone: "2026-11-23 19:20:01 CET" (the zone's short name, or its offset
 * such as "GMT+5:30" where it has none); "—" when absent. */
export function fmtTime(value) {
  const d = toDate(value);
  if (!d) return '—';
  const part = timeParts(d);
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute}:${part.second} ${part.timeZoneName}`;
}

/** Only the clock time (browser's zone), as fmtTime writes it: "19:20:01"; for today's events. */
export function fmtClock(value) {
  const d = toDate(value);
  if (!d) return '—';
  const part = timeParts(d);
  return `${part.hour}:${part.minute}:${part.second}`;
}

/** Month and day (browser's zone), for date axes. */
export function fmtDay(value) {
  const d = toDate(value);
  return d ? dayFmt.format(d) : '—';
}

/** "3 min ago", "in 2 h": relative to now. */
export function fmtAgo(value, now = Date.now()) {
  const d = toDate(value);
  if (!d) return '—';
  const secs = Math.round((now - d.getTime()) / 1000);
  const text = fmtDuration(Math.abs(secs), { coarse: true });
  return secs >= 0 ? `${text} ago` : `in ${text}`;
}

/** Seconds as "1h 02m 03s" (or "2 h" with coarse); "—" when absent. */
export function fmtDuration(seconds, { coarse = false } = {}) {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return '—';
  let s = Math.max(0, Math.round(seconds));
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const hr = Math.floor(s / 3600);
  s -= hr * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (coarse) {
    if (d) return `${d} d`;
    if (hr) return `${hr} h`;
    if (m) return `${m} min`;
    return `${s} s`;
  }
  const pad = (n) => String(n).padStart(2, '0');
  if (d) return `${d}d ${pad(hr)}h ${pad(m)}m`;
  if (hr) return `${hr}h ${pad(m)}m ${pad(s)}s`;
  if (m) return `${m}m ${pad(s)}s`;
  return `${s}s`;
}

/** "1-02:03:04" / "2:03:04" / "03:04" to seconds. */
export function clockSeconds(text) {
  if (!text) return null;
  let days = 0;
  let rest = text;
  if (rest.includes('-')) {
    const [d, r] = rest.split('-');
    days = Number(d);
    rest = r;
  }
  const parts = rest.split(':').map(Number);
  if (parts.some(Number.isNaN)) return null;
  while (parts.length < 3) parts.unshift(0);
  return days * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2];
}

/** Bytes as "1.5 MiB". */
export function fmtBytes(bytes) {
  if (bytes === null || bytes === undefined || Number.isNaN(bytes)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Number(bytes);
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** A number with thousands separators, at most `digits` decimals. */
export function fmtNumber(value, digits = 1) {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  return Number(value).toLocaleString(undefined, { maximumFractionDigits: digits });
}

/** A 0..1 fraction as "75%". */
export function fmtPercent(fraction) {
  if (fraction === null || fraction === undefined || Number.isNaN(fraction)) return '—';
  return `${Math.round(fraction * 100)}%`;
}
