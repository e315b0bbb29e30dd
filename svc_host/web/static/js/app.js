// The dashboard shell: navigation, theme, the server's transport and health in the header, the login view.
import { h, replace } from './dom.js';
import { api, setUnauthorizedHandler } from './api.js';
import { interceptLinks, onNavigate, renderCurrent } from './router.js';
import { showLogin } from './login.js';
import { icon } from './icons.js';

const NAV = [
  ['overview', '/', 'Overview'], ['jobs', '/jobs', 'Jobs'], ['submit', '/submit', 'Submit'],
  ['workflows', '/workflows', 'Workflows'], ['sweeps', '/sweeps', 'Sweeps'],
  ['schedules', '/schedules', 'Schedules'], ['files', '/files', 'Files'],
  ['history', '/history', 'History'], ['resources', '/resources', 'Resources'], ['settings', '/settings', 'Settings'],
];

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
    showLogin('That login link was used already, has expired or is wrong: each link logs in one browser, within 10 minutes. Run `svc login-link` for a new one, or paste the token below.');
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
