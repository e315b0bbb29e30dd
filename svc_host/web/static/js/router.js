// The dashboard's router: history-API paths matched against a route table, page modules loaded on demand.
// A page module exports `async function render(root, params, query)` and may return a cleanup function.
import { h, replace } from './dom.js';
import { errorText } from './api.js';
import { keepClusterInUrl } from './cluster.js';

export const ROUTES = [
  { path: '/', page: 'overview', title: 'Overview', nav: 'overview' },
  { path: '/jobs', page: 'jobs', title: 'Jobs', nav: 'jobs' },
  { path: '/jobs/:id', page: 'job', title: 'Job', nav: 'jobs' },
  { path: '/submit', page: 'submit', title: 'Submit a job', nav: 'submit' },
  { path: '/sessions', page: 'sessions', title: 'Sessions', nav: 'sessions' },
  { path: '/workflows', page: 'workflows', title: 'Workflows', nav: 'workflows' },
  { path: '/workflows/new', page: 'workflows', title: 'New workflow', nav: 'workflows' },
  { path: '/workflows/:name', page: 'workflows', title: 'Workflow', nav: 'workflows' },
  { path: '/runs/:id', page: 'run', title: 'Workflow run', nav: 'workflows' },
  { path: '/sweeps', page: 'sweeps', title: 'Sweeps', nav: 'sweeps' },
  { path: '/sweeps/:id', page: 'sweeps', title: 'Sweep', nav: 'sweeps' },
  { path: '/schedules', page: 'schedules', title: 'Schedules', nav: 'schedules' },
  { path: '/files', page: 'files', title: 'Files', nav: 'files' },
  { path: '/history', page: 'history', title: 'History', nav: 'history' },
  { path: '/resources', page: 'resources', title: 'Resources', nav: 'resources' },
  { path: '/settings', page: 'settings', title: 'Settings', nav: 'settings' },
];

const compiled = ROUTES.map((route) => ({
  ...route,
  regex: new RegExp(`^${route.path.replace(/\/:(\w+)/g, (_, name) => `/(?<${name}>[^/]+)`).replace(/\/$/, '')}/?$`),
}));

/** The route for a pathname, with its decoded params; null when nothing matches. */
export function match(pathname) {
  for (const route of compiled) {
    const m = route.regex.exec(pathname);
    if (m) {
      const params = {};
      for (const [k, v] of Object.entries(m.groups || {})) params[k] = decodeURIComponent(v);
      return { route, params };
    }
  }
  return null;
}

let cleanup = null;
let renderSeq = 0;
const listeners = [];
let leaveGuard = null;
let here = location.pathname + location.search; // the URL of the page on screen

/**
 * While the current page has something to lose, `check()` returns a sentence saying what (else null): leaving
 * through a link or Back asks first, and closing or reloading the tab gets the browser's prompt. The guard
 * ends with the page.
 */
export function guardLeaving(check) {
  leaveGuard = check;
}

async function mayLeave() {
  const loss = leaveGuard?.();
  if (!loss) return true;
  const { confirmDialog } = await import('./ui.js');
  return confirmDialog({ title: 'Leave without saving?', body: loss, confirmLabel: 'Leave', danger: true });
}

/** Called after each navigation with the matched route (the shell highlights the nav entry). */
export function onNavigate(listener) {
  listeners.push(listener);
}

/** Set the page heading and the tab title. */
export function setTitle(text) {
  document.getElementById('page-title').textContent = text;
  document.title = `${text} · svc`;
}

/** Go to a path inside the dashboard (pushState, no reload). */
export function navigate(path, { replace: replaceState = false } = {}) {
  if (replaceState) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  return renderCurrent();
}

/** Replace only the query string of the current URL (filters, open file), without re-rendering; the tab's
 * cluster stays in it. */
export function setQuery(query) {
  const params = new URLSearchParams();
  const cluster = new URLSearchParams(location.search).get('cluster');
  if (cluster) params.set('cluster', cluster);
  for (const [k, v] of Object.entries(query)) if (v !== null && v !== undefined && v !== '') params.set(k, v);
  const qs = params.toString();
  history.replaceState(null, '', location.pathname + (qs ? `?${qs}` : ''));
  here = location.pathname + location.search;
}

/** Leave the current page (its cleanup runs, late renders are dropped): the login view takes over. */
export function stopPage() {
  renderSeq += 1;
  runCleanup();
}

function runCleanup() {
  leaveGuard = null;
  if (typeof cleanup === 'function') {
    try {
      cleanup();
    } catch (err) {
      console.error('page cleanup failed', err);
    }
  }
  cleanup = null;
}

/** Draw the page for the current location into #main. */
/** The login view is up (an API call answered 401): pages must not draw over it. */
function loggedOut() {
  return document.body.classList.contains('logged-out');
}

export async function renderCurrent() {
  const seq = ++renderSeq;
  here = location.pathname + location.search;
  runCleanup();
  if (loggedOut()) return;
  keepClusterInUrl();
  const root = document.getElementById('main');
  const found = match(location.pathname);
  const query = Object.fromEntries(new URLSearchParams(location.search));
  for (const listener of listeners) listener(found?.route);
  if (!found) {
    setTitle('Not found');
    replace(
      root,
      emptyState(
        'No such page',
        `Nothing lives at ${location.pathname}.`,
        h('a', { class: 'btn', href: '/' }, 'Go to the overview'),
      ),
    );
    return;
  }
  setTitle(found.route.title);
  replace(root, h('div', { class: 'loading', 'aria-busy': 'true' }, 'Loading…'));
  let module;
  try {
    module = await import(`./pages/${found.route.page}.js`);
  } catch (err) {
    if (seq !== renderSeq) return;
    console.error(err);
    replace(
      root,
      emptyState(
        'This page is not available',
        `The dashboard could not load its "${found.route.page}" page (${err.message}). ` +
          'The rest of the dashboard works; ' +
          'reinstall svc if this persists.',
        h('a', { class: 'btn', href: '/' }, 'Go to the overview'),
      ),
    );
    return;
  }
  if (seq !== renderSeq || loggedOut()) return;
  const page = h('div', { class: 'page' });
  replace(root, page);
  try {
    const result = await module.render(page, found.params, query);
    if (seq !== renderSeq) {
      if (typeof result === 'function') result();
      return;
    }
    cleanup = result;
    page.dataset.ready = 'true'; // drawn with its data (tests and the render benchmark wait for this)
    performance.mark('svc-page-ready');
  } catch (err) {
    if (seq !== renderSeq) return;
    if (err && err.status === 401) return; // the login view is already shown
    console.error(err);
    replace(page, h('div', { class: 'alert alert-error', role: 'alert' }, errorText(err)));
  }
}

/** A centred "nothing here yet" panel: what is missing, and what to do next. */
export function emptyState(title, text, ...actions) {
  return h(
    'div',
    { class: 'empty' },
    h('div', { class: 'empty-title' }, title),
    text ? h('p', null, text) : null,
    actions.length ? h('div', { class: 'empty-actions' }, actions) : null,
  );
}

/** Same-origin links navigate without a reload; modified clicks (new tab) and downloads are left alone. */
export function interceptLinks() {
  document.addEventListener('click', (event) => {
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    )
      return;
    const a = event.target.closest('a[href]');
    if (!a || a.target || a.hasAttribute('download')) return;
    const url = new URL(a.href, location.href);
    if (
      url.origin !== location.origin ||
      url.pathname.startsWith('/api/') ||
      url.pathname.startsWith('/static/') ||
      url.pathname === '/docs'
    )
      return;
    event.preventDefault();
    const path = url.pathname + url.search;
    if (path !== location.pathname + location.search)
      mayLeave().then((ok) => {
        if (ok) navigate(path);
      });
  });
  window.addEventListener('popstate', async () => {
    if (!leaveGuard?.()) {
      renderCurrent();
      return;
    }
    const wanted = location.pathname + location.search;
    history.pushState(null, '', here); // the page stays on screen: so does its URL, until leaving is confirmed
    if (await mayLeave()) navigate(wanted);
  });
  window.addEventListener('beforeunload', (event) => {
    if (leaveGuard?.()) {
      event.preventDefault();
      event.returnValue = '';
    }
  });
}
