// The dashboard shell: navigation, theme, the server's transport and health in the header, the login view.
import { h, replace } from './dom.js';
import { api, setUnauthorizedHandler } from './api.js';
import { interceptLinks, onNavigate, renderCurrent } from './router.js';
import { showLogin } from './login.js';

const ICONS = {
  overview: 'M3 13h8V3H3zm0 8h8v-6H3zm10 0h8V11h-8zm0-18v6h8V3z',
  jobs: 'M4 6h16v2H4zm0 5h16v2H4zm0 5h10v2H4z',
  submit: 'M12 4l-7 7h4v7h6v-7h4z',
  workflows: 'M6 3a3 3 0 110 6 3 3 0 010-6zm12 12a3 3 0 110 6 3 3 0 010-6zM6 15a3 3 0 110 6 3 3 0 010-6zM7 9v6h2V9zm1 3h6.5a2.5 2.5 0 012.5 2.5V15h2v-.5A4.5 4.5 0 0014.5 10H8z',
  sweeps: 'M3 3h5v5H3zm6.5 0h5v5h-5zM16 3h5v5h-5zM3 9.5h5v5H3zm6.5 0h5v5h-5zM16 9.5h5v5h-5zM3 16h5v5H3zm6.5 0h5v5h-5z',
  schedules: 'M12 2a10 10 0 110 20 10 10 0 010-20zm0 2a8 8 0 100 16 8 8 0 000-16zm-1 3h2v5.2l3.6 2.1-1 1.7L11 13.4z',
  files: 'M3 5a2 2 0 012-2h5l2 2h7a2 2 0 012 2v11a2 2 0 01-2 2H5a2 2 0 01-2-2z',
  history: 'M13 3a9 9 0 00-9 9H1l4 4 4-4H6a7 7 0 117 7v2a9 9 0 000-18zm-1 5v5l4 2.5.8-1.3-3.3-2V8z',
  resources: 'M3 21V10h4v11zm7 0V3h4v18zm7 0v-7h4v7z',
  settings: 'M19.4 13a7.5 7.5 0 000-2l2.1-1.6-2-3.5-2.5 1a7.7 7.7 0 00-1.7-1L15 3h-4l-.4 2.9a7.7 7.7 0 00-1.7 1l-2.5-1-2 3.5L6.6 11a7.5 7.5 0 000 2l-2.1 1.6 2 3.5 2.5-1a7.7 7.7 0 001.7 1L11 21h4l.4-2.9a7.7 7.7 0 001.7-1l2.5 1 2-3.5zM13 15.5a3.5 3.5 0 110-7 3.5 3.5 0 010 7z',
};

const NAV = [
  ['overview', '/', 'Overview'], ['jobs', '/jobs', 'Jobs'], ['submit', '/submit', 'Submit'],
  ['workflows', '/workflows', 'Workflows'], ['sweeps', '/sweeps', 'Sweeps'],
  ['schedules', '/schedules', 'Schedules'], ['files', '/files', 'Files'],
  ['history', '/history', 'History'], ['resources', '/resources', 'Resources'], ['settings', '/settings', 'Settings'],
];

function icon(name) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', ICONS[name] || '');
  svg.append(path);
  return svg;
}

function buildNav() {
  const nav = document.getElementById('nav');
  const links = NAV.map(([id, href, label]) => h('a', { href, class: 'nav-link', dataset: { nav: id } }, icon(id), h('span', null, label)));
  replace(nav, links);
  onNavigate((route) => {
    for (const a of links) {
      const on = route && a.dataset.nav === route.nav;
      a.classList.toggle('active', on);
      if (on) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    }
  });
  replace(document.getElementById('sidebar-foot'),
    h('a', { href: '/docs', class: 'foot-link', target: '_blank', rel: 'noopener' }, 'API docs'),
    h('button', { type: 'button', class: 'foot-link', onClick: logout }, 'Log out'));
}

async function logout() {
  await api('/api/auth/logout', { method: 'POST' }).catch(() => null);
  showLogin();
}

function setTheme(theme) {
  document.documentElement.dataset.theme = theme;
  try { localStorage.setItem('svc-theme', theme); } catch { /* storage disabled: the choice lasts this page */ }
  const btn = document.getElementById('theme-toggle');
  btn.textContent = theme === 'dark' ? '☀' : '☾';
  btn.setAttribute('aria-label', theme === 'dark' ? 'Switch to light theme' : 'Switch to dark theme');
  window.dispatchEvent(new CustomEvent('svc-theme', { detail: theme }));
}

function buildThemeToggle() {
  const btn = document.getElementById('theme-toggle');
  setTheme(document.documentElement.dataset.theme || 'light');
  btn.addEventListener('click', () => setTheme(document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark'));
}

const serverState = { transport: null, answers: null, detail: '' };

function drawServerStatus() {
  const el = document.getElementById('server-status');
  if (!serverState.transport) { replace(el); return; }
  const tone = serverState.answers === null ? 'unknown' : serverState.answers ? 'ok' : 'bad';
  const text = serverState.answers === null ? 'checking…' : serverState.answers ? 'answers' : 'does not answer';
  el.title = serverState.detail || `Scheduler reached through the "${serverState.transport}" transport`;
  replace(el, h('span', { class: ['dot', `dot-${tone}`] }), h('span', { class: 'server-transport' }, serverState.transport), h('span', { class: 'server-answer' }, text));
}

/**
 * The header's "transport · answers". The server samples the scheduler in the background; a sample from the last
 * few minutes answers the question without asking the scheduler again (twenty open dashboards cost nothing).
 * Only without a recent sample is the scheduler asked once; live samples keep it true afterwards.
 */
async function checkServer() {
  try {
    const plugins = await api('/api/plugins');
    serverState.transport = plugins.server_transport;
    drawServerStatus();
    const recent = await api('/api/resources/history', { query: { hours: 0.1 } }).catch(() => null);
    const sampled = recent && recent.transport === plugins.server_transport && recent.series.some((s) => s.points.length);
    if (!sampled) await api('/api/resources');
    serverState.answers = true;
    serverState.detail = '';
  } catch (err) {
    if (err.status === 401) return;
    serverState.answers = false;
    serverState.detail = err.detail || err.message;
  }
  drawServerStatus();
}

async function followServer() {
  try {
    const { subscribe } = await import('./events.js');
    subscribe(['resources.sampled'], () => {
      if (serverState.answers !== true) { serverState.answers = true; serverState.detail = ''; drawServerStatus(); }
    });
  } catch (err) {
    console.warn('live updates unavailable', err);
  }
}

export function serverStatus() {
  return { ...serverState };
}

/** "/" jumps to the page's search box (as on most dashboards), unless one is typing already. */
function keyboardShortcuts() {
  document.addEventListener('keydown', (event) => {
    if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target.closest && target.closest('input, textarea, select, [contenteditable="true"]')) return;
    const search = document.querySelector('main input[type="search"]');
    if (search) { event.preventDefault(); search.focus(); search.select(); }
  });
}

function start() {
  keyboardShortcuts();
  // Settings says so when the server's profile changes: the header shows the new transport at once.
  window.addEventListener('svc-server-changed', () => { serverState.answers = null; checkServer(); });
  buildNav();
  buildThemeToggle();
  interceptLinks();
  setUnauthorizedHandler(() => showLogin());
  const params = new URLSearchParams(location.search);
  if (params.get('login') === 'failed') {
    params.delete('login');
    const qs = params.toString();
    history.replaceState(null, '', location.pathname + (qs ? `?${qs}` : ''));
    showLogin('That login link carried a wrong or old token. Open the link the running `svc serve` printed, or paste its token below.');
    return;
  }
  renderCurrent();
  checkServer().then(followServer);
}

export function restart() {
  document.body.classList.remove('logged-out');
  import('./events.js').then((events) => events.reconnect()).catch(() => null);
  renderCurrent();
  checkServer().then(followServer);
}

start();
