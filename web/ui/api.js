// api: the one way the UI talks to the daemon: the documented JSON API
// (docs/http-api.md), same-origin, with the session cookie. Mutating calls
// carry the session's CSRF token in X-CSRF-Token (the browser adds Origin).
// A 401 anywhere means the session ended: back to the login form.

export class ApiError extends Error {
  constructor(status, body) {
    const msg = (body && body.error) || `HTTP ${status}`;
    super(msg);
    this.status = status;
    this.hint = body && body.hint;
    this.field = body && body.field;
    this.body = body; // the whole answer (e.g. a 422's "problems")
  }
  // "what went wrong: what to do" as the API said it
  get text() { return this.message + (this.hint ? ` (${this.hint})` : ''); }
}

let csrf = sessionStorage.getItem('csrf_token');

// once: a poll answered 401 while the logout button already navigates would
// start a second navigation that aborts the first
let leaving = false;
export function toLogin() {
  if (leaving) return;
  leaving = true;
  sessionStorage.removeItem('csrf_token');
  location.assign('/login');
}

async function csrfToken() {
  if (csrf) return csrf;
  // a reloaded page or a new tab: the session gives its token back
  const s = await api('GET', '/api/v1/session');
  csrf = s.csrf_token || '';
  if (csrf) sessionStorage.setItem('csrf_token', csrf);
  return csrf;
}

// body: a value sent as JSON. apiText sends JSON text as it is and gives
// the answer's text back (a mapping file: its numbers are neither
// re-serialized nor rounded by JSON.parse; see mapping_view.js parseExact)
export async function api(method, path, body) {
  const text = await call(method, path, body === undefined ? undefined : JSON.stringify(body));
  try { return text ? JSON.parse(text) : null; } catch (e) { return null; }
}

export const apiText = (method, path, text) => call(method, path, text);

async function call(method, path, sent) {
  const headers = {};
  const opts = { method, credentials: 'same-origin', headers, cache: 'no-store' };
  if (method !== 'GET' && method !== 'HEAD') {
    headers['X-CSRF-Token'] = await csrfToken();
    if (sent !== undefined) {
      headers['Content-Type'] = 'application/json';
      opts.body = sent;
    }
  }
  let res;
  try {
    res = await fetch(path, opts);
  } catch (e) {
    throw new ApiError(0, { error: `the daemon did not answer ${method} ${path}`,
                            hint: 'is searchsync run still running?' });
  }
  const text = await res.text();
  if (res.ok) return text;
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch (e) { json = null; }
  if (res.status === 401) {
    toLogin();
    throw new ApiError(401, json);
  }
  throw new ApiError(res.status, json || { error: `HTTP ${res.status}: ${text.slice(0, 200)}` });
}

export const get = (path) => api('GET', path);
