// The dashboard's one way to the REST API: same-origin fetch with the HttpOnly cookie, JSON in and out,
// the API's {detail} surfaced as ApiError. No token is ever read or stored by page scripts.

export class ApiError extends Error {
  /**
   * `remedy`: the flag ('force', 'adopt') that lets a refused sync through, from the error body; else null.
   * `fields`: a 422's problems as [{field, message}] (field a dotted path such as "resources.time_limit", message
   * in words), which forms show next to their fields (ui.js showFormError); [] when the answer has none.
   */
  constructor(status, detail, remedy = null, fields = []) {
    super(typeof detail === 'string' ? detail : JSON.stringify(detail));
    this.name = 'ApiError';
    this.status = status;
    this.detail = detail;
    this.remedy = remedy;
    this.fields = fields;
  }
}

let onUnauthorized = null;

/** The shell registers what to do on 401 (show the login view). */
export function setUnauthorizedHandler(handler) {
  onUnauthorized = handler;
}

/** Build "/api/x?a=1&b=2", skipping null/undefined/'' values; arrays repeat the key. */
export function apiUrl(path, query) {
  const url = path.startsWith('/api') ? path : `/api${path.startsWith('/') ? '' : '/'}${path}`;
  if (!query) return url;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === null || v === undefined || v === '') continue;
    for (const item of Array.isArray(v) ? v : [v]) params.append(k, String(item));
  }
  const qs = params.toString();
  return qs ? `${url}?${qs}` : url;
}

/**
 * api(path, {method, body, query, signal, raw}) -> parsed JSON (null on 204).
 * `raw: true` returns the Response itself (for text endpoints). Throws ApiError with .status and .detail.
 */
export async function api(path, { method = 'GET', body, query, signal, raw = false } = {}) {
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' }, signal };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers['Content-Type'] = 'application/json';
  }
  let response;
  try {
    response = await fetch(apiUrl(path, query), init);
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new ApiError(0, 'the svc server does not answer (is `svc serve` still running?)');
  }
  if (response.status === 401) {
    const { detail } = await readError(response);
    if (onUnauthorized) onUnauthorized(detail);
    throw new ApiError(401, detail);
  }
  if (!response.ok) {
    const { detail, remedy, fields } = await readError(response);
    throw new ApiError(response.status, detail, remedy, fields);
  }
  if (raw) return response;
  if (response.status === 204) return null;
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

async function readError(response) {
  try {
    const data = await response.json();
    if (data && data.detail !== undefined) {
      const fields = Array.isArray(data.errors) ? data.errors : [];
      return {
        detail: fields.length ? wordedDetail(fields) : String(data.detail),
        remedy: data.remedy || null,
        fields,
      };
    }
    return { detail: `HTTP ${response.status}`, remedy: null, fields: [] };
  } catch {
    return { detail: `HTTP ${response.status} ${response.statusText}`.trim(), remedy: null, fields: [] };
  }
}

/** A 422's problems in words as one line ("time limit: must look like 4:00:00; nodes: must be at least 1"): what
 * is shown wherever no form field takes them; the API's `detail` keeps pydantic's wording for scripts. */
export function wordedDetail(fields) {
  return fields.map((f) => (f.field ? `${fieldName(f.field)}: ${f.message}` : f.message)).join('; ');
}

/** "resources.time_limit" as "time limit": the field's own name, in words. */
export function fieldName(path) {
  const parts = String(path)
    .split('.')
    .filter((p) => !/^\d+$/.test(p));
  return (parts[parts.length - 1] || String(path)).replace(/_/g, ' ');
}

/** The message to show for any error thrown by api(). */
export function errorText(err) {
  if (err instanceof ApiError) return typeof err.detail === 'string' ? err.detail : err.message;
  return err?.message ? err.message : String(err);
}
