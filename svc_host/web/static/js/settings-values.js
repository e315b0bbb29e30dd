// Pure helpers of the Settings editors (no DOM): values of a configuration by dotted path ("resources.nodes"), as
// the REST API names fields in its 422 `errors`, and exclude patterns typed one per line.

/** The value at `path` ("a.b") of `config`; undefined when a part is missing. */
export function valueAt(config, path) {
  return path.split('.').reduce((at, key) => (at && typeof at === 'object' ? at[key] : undefined), config);
}

/** A copy of `config` with `path` set to `value`; undefined, null or '' removes the key, and a section left
 * empty by that goes too (the file keeps only what is set). `config` is not changed. */
export function withValue(config, path, value) {
  const copy = structuredClone(config || {});
  const keys = path.split('.');
  const parents = [copy];
  for (const key of keys.slice(0, -1)) {
    const at = parents[parents.length - 1];
    if (!at[key] || typeof at[key] !== 'object' || Array.isArray(at[key])) at[key] = {};
    parents.push(at[key]);
  }
  const last = keys[keys.length - 1];
  if (value === undefined || value === null || value === '') delete parents[parents.length - 1][last];
  else parents[parents.length - 1][last] = value;
  for (let i = parents.length - 1; i > 0; i -= 1) {
    if (Object.keys(parents[i]).length) break;
    delete parents[i - 1][keys[i - 1]];
  }
  return copy;
}

/** A number field's text as the API should judge it: '' nothing, a number as a number, anything else as typed
 * (the API then says "must be a whole number" under the field). */
export function numberOrText(text) {
  const t = String(text).trim();
  if (t === '') return '';
  return /^-?\d+(\.\d+)?$/.test(t) ? Number(t) : t;
}

/** Exclude patterns typed one per line: each line trimmed, blank lines dropped. */
export function patternLines(text) {
  return String(text)
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}
