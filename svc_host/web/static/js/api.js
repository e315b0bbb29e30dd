// The dashboard's one way to the REST API: same-origin fetch with the HttpOnly cookie, JSON in and out,
// the API's {detail} surfaced as ApiError. No token is ever read or stored by page scripts.

export class ApiError extends Error {
  /** `remedy`: the flag ('force', 'adopt') that lets a refused sync through, from the error body; else null. */
  constructor(status, detail, remedy = null) {
    super(typeof detail === 'string' ? detail : JSON.stringify(detail));
    this.name = 'ApiError';
    this.status = status;
    this.detail = detail;
    this.remedy = remedy;
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
    const { detail, remedy } = await readError(response);
    throw new ApiError(response.status, detail, remedy);
  }
  if (raw) return response;
  if (response.status === 204) return null;
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

async function readError(response) {
  try {
    const data = await response.json();
    if (data && data.detail !== undefined) return { detail: formatDetail(data.detail), remedy: data.remedy || null };
    return { detail: `HTTP ${response.status}`, remedy: null };
  } catch {
    return { detail: `HTTP ${response.status} ${response.statusText}`.trim(), remedy: null };
  }
}

/** FastAPI's 422 detail is a list of {loc, msg}: say it as one readable line per field. */
function formatDetail(detail) {
  if (!Array.isArray(detail)) return detail;
  return detail
    .map((d) => (d && d.msg ? `${(d.loc || []).filter((p) => p !== 'body').join('.')}: ${d.msg}` : String(d)))
    .join('; ');
}

/** The message to show for any error thrown by api(). */
export function errorText(err) {
  if (err instanceof ApiError) return typeof err.detail === 'string' ? err.detail : err.message;
  return err && err.message ? err.message : String(err);
}
