// Writing a workflow document (the JSON the server parsed from YAML) back as YAML, for the visual builder.
// Strings that YAML would read as something else (numbers, booleans, templates `{{ x }}`, `key: value`) are
// double-quoted with JSON escapes, which YAML's double-quoted style reads the same way.

const TOP_ORDER = ['name', 'args', 'default_project', 'jobs'];
const JOB_ORDER = [
  'name',
  'command',
  'script_path',
  'depends_on',
  'resources',
  'environment',
  'work_dir',
  'log_dir',
  'retry',
  'retry_delay',
];

const PLAIN = /^[A-Za-z_./][A-Za-z0-9_ ./@%+=-]*$/;
const RESERVED = /^(true|false|yes|no|on|off|null|y|n|~)$/i;

export function scalar(value) {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : JSON.stringify(String(value));
  const text = String(value);
  if (text && PLAIN.test(text) && !RESERVED.test(text) && !text.endsWith(' ') && !/\s#/.test(text)) return text;
  return JSON.stringify(text);
}

function isScalar(value) {
  return value === null || value === undefined || ['string', 'number', 'boolean'].includes(typeof value);
}

function ordered(obj, order) {
  const keys = Object.keys(obj);
  return [...order.filter((k) => keys.includes(k)), ...keys.filter((k) => !order.includes(k))];
}

function key(k) {
  return scalar(k);
}

function emitMap(obj, indent, order = []) {
  const pad = ' '.repeat(indent);
  const lines = [];
  for (const k of ordered(obj, order)) {
    const v = obj[k];
    if (v === undefined) continue;
    if (isScalar(v)) {
      lines.push(`${pad}${key(k)}: ${scalar(v)}`);
    } else if (Array.isArray(v)) {
      if (!v.length) lines.push(`${pad}${key(k)}: []`);
      else if (v.every(isScalar) && v.map(scalar).join(', ').length < 80)
        lines.push(`${pad}${key(k)}: [${v.map(scalar).join(', ')}]`);
      else lines.push(`${pad}${key(k)}:`, ...emitList(v, indent + 2, k === 'jobs' ? JOB_ORDER : []));
    } else if (!Object.keys(v).length) {
      lines.push(`${pad}${key(k)}: {}`);
    } else {
      lines.push(`${pad}${key(k)}:`, ...emitMap(v, indent + 2));
    }
  }
  return lines;
}

function emitList(list, indent, order) {
  const pad = ' '.repeat(indent);
  const lines = [];
  for (const item of list) {
    if (isScalar(item)) {
      lines.push(`${pad}- ${scalar(item)}`);
    } else if (Array.isArray(item)) {
      lines.push(`${pad}- [${item.map(scalar).join(', ')}]`);
    } else {
      const inner = emitMap(item, indent + 2, order);
      if (!inner.length) lines.push(`${pad}- {}`);
      else lines.push(`${pad}- ${inner[0].trimStart()}`, ...inner.slice(1));
    }
  }
  return lines;
}

/** The YAML text of a workflow document: top keys and job keys in the conventional order. */
export function toYaml(doc) {
  return `${emitMap(doc, 0, TOP_ORDER).join('\n')}\n`;
}
