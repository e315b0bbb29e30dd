// The dashboard shell: navigation, theme, the tab's cluster (a switcher) and its health in the header, the login view.
import { h, replace, tickTimes } from './dom.js';
import { api, setUnauthorizedHandler } from './api.js';
import { interceptLinks, onNavigate, renderCurrent } from './router.js';
import { loginLinkCommand, showLogin } from './login.js';
import {
  byClusterOrder,
  chooseCluster,
  clusters,
  onClusterChange,
  pillLabel,
  shownCluster,
  tabCluster,
} from './cluster.js';
import { icon } from './icons.js';

const NAV = [
  ['overview', '/', 'Overview'],
  ['jobs', '/jobs', 'Jobs'],
  ['submit', '/submit', 'Submit'],
  ['sessions', '/sessions', 'Sessions'],
  ['workflows', '/workflows', 'Workflows'],
  ['sweeps', '/sweeps', 'Sweeps'],
  ['schedules', '/schedules', 'Schedules'],
  ['files', '/files', 'Files'],
  ['history', '/history', 'History'],
  ['resources', '/resources', 'Resources'],
  ['settings', '/settings', 'Settings'],
];

function buildNav() {
  const nav = document.getElementById('nav');
  const links = NAV.map(([id, href, label]) =>
    h('a', { href, class: 'nav-link', dataset: { nav: id } }, icon(id), h('span', null, label)),
  );
  replace(nav, links);
  onNavigate((route) => {
    for (const a of links) {
      const on = route && a.dataset.nav === route.nav;
      a.classList.toggle('active', on);
      if (on) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
  });
  replace(
    document.getElementById('sidebar-foot'),
    h('a', { href: '/docs', class: 'foot-link', target: '_blank', rel: 'noopener' }, 'API docs'),
    h('button', { type: 'button', class: 'foot-link', onClick: logout }, 'Log out'),
  );
}

/**
 * Below 1024 px the sidebar folds away behind the top bar's ☰ button (aria-expanded says which); it opens over the
 * page and closes on a choice, Escape or a click on the page beside it. Wider, it is always there and the button
 * is hidden.
 */
function buildNavToggle() {
  const btn = document.getElementById('nav-toggle');
  const sidebar = document.getElementById('sidebar');
  const setOpen = (open) => {
    document.body.classList.toggle('nav-open', open);
    btn.setAttribute('aria-expanded', String(open));
    btn.setAttribute('aria-label', open ? 'Hide navigation' : 'Show navigation');
  };
  setOpen(false);
  btn.addEventListener('click', () => {
    const open = !document.body.classList.contains('nav-open');
    setOpen(open);
    if (open) sidebar.querySelector('.nav-link.active, .nav-link')?.focus();
  });
  sidebar.addEventListener('click', (event) => {
    if (event.target.closest('a')) setOpen(false);
  });
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || !document.body.classList.contains('nav-open')) return;
    setOpen(false);
    btn.focus();
  });
  document.getElementById('main').addEventListener('click', () => setOpen(false)); // a click on the page beside it
}

async function logout() {
  await api('/api/auth/logout', { method: 'POST' }).catch(() => null);
  logIn();
}

/** The login view; once the token is accepted, the shell starts again (login.js needs nothing from this module). */
function logIn(message = null) {
  showLogin(message, restart);
}

function setTheme(theme) {
  document.documentElement.dataset.theme = theme;
  try {
    localStorage.setItem('svc-theme', theme);
  } catch {
    /* storage disabled: the choice lasts this page */
  }
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

const serverState = { cluster: null, answers: null, detail: '' };
let checkSeq = 0;

/** The top bar's pill: the cluster this tab shows (a switcher) and whether it answers. */
async function drawClusterPill() {
  const pill = document.getElementById('cluster-pill');
  let known;
  try {
    known = await clusters();
  } catch (err) {
    if (err.status !== 401)
      replace(pill, h('span', { class: 'server-answer' }, `clusters unknown: ${err.detail || err.message}`));
    return;
  }
  const chosen = tabCluster();
  // this machine's Slurm first, then the profiles by name, "All clusters" last: as in every form and filter
  const names = known.transports.map((t) => t.name).sort(byClusterOrder);
  if (chosen && !names.includes(chosen)) names.push(chosen);
  const select = h(
    'select',
    {
      id: 'cluster-switch',
      class: 'cluster-select',
      'aria-label': 'Cluster this tab shows',
      title: 'The cluster this tab shows; other tabs keep theirs. The server default is set in Settings.',
      onChange: () => {
        chooseCluster(select.value || null);
        renderCurrent();
      },
    },
    h('option', { value: '' }, `${known.defaultName} · server default`),
    names.map((name) => h('option', { value: name }, pillLabel(name))),
  );
  select.value = chosen || '';
  const tone = serverState.answers === null ? 'unknown' : serverState.answers ? 'ok' : 'bad';
  replace(pill, h('span', { class: ['dot', `dot-${tone}`], 'aria-hidden': 'true' }), select);
  drawServerStatus();
}

function drawServerStatus() {
  const el = document.getElementById('server-status');
  if (!serverState.cluster) {
    replace(el);
    return;
  }
  const text = serverState.answers === null ? 'checking…' : serverState.answers ? 'answers' : 'does not answer';
  el.title = serverState.detail || `Slurm on the cluster "${serverState.cluster}"`;
  replace(el, h('span', { class: 'sr-only' }, `${serverState.cluster} `), h('span', { class: 'server-answer' }, text));
  const dot = document.querySelector('#cluster-pill .dot');
  if (dot) dot.className = `dot dot-${serverState.answers === null ? 'unknown' : serverState.answers ? 'ok' : 'bad'}`;
}

/**
 * Does the tab's cluster answer? The server samples its clusters in the background; a sample from the last few
 * minutes answers the question without asking the scheduler again (twenty open dashboards cost nothing). Only
 * without a recent sample is the scheduler asked once; live samples keep it true afterwards.
 */
async function checkServer() {
  const seq = ++checkSeq;
  try {
    const shown = await shownCluster();
    if (seq !== checkSeq) return;
    serverState.cluster = shown;
    serverState.answers = null;
    await drawClusterPill();
    const query = { transport: shown };
    const recent = await api('/api/resources/history', { query: { ...query, hours: 0.1 } }).catch(() => null);
    const sampled = recent?.series.some((s) => s.points.length);
    if (!sampled) await api('/api/resources', { query });
    if (seq !== checkSeq) return;
    serverState.answers = true;
    serverState.detail = '';
  } catch (err) {
    if (err.status === 401 || seq !== checkSeq) return;
    serverState.answers = false;
    serverState.detail = err.detail || err.message;
  }
  drawServerStatus();
}

async function followServer() {
  try {
    const { subscribe } = await import('./events.js');
    subscribe(['resources.sampled'], (event) => {
      if (event.payload && event.payload.transport !== serverState.cluster) return;
      if (serverState.answers !== true) {
        serverState.answers = true;
        serverState.detail = '';
        drawServerStatus();
      }
    });
  } catch (err) {
    console.warn('live updates unavailable', err);
  }
}

/** A link or Back went to another cluster's page, or into or out of a job's page: the pill follows. */
function followNavigation() {
  onNavigate(() => {
    if (document.getElementById('cluster-switch')) drawClusterPill();
    shownCluster()
      .then((shown) => {
        if (shown !== serverState.cluster) checkServer();
      })
      .catch(() => null);
  });
}

/** The server's default moved, or profiles changed: the pill follows; a tab that follows the default redraws. */
function followClusters() {
  let shownBefore = null;
  onClusterChange(async () => {
    const shown = await shownCluster().catch(() => null);
    if (shownBefore !== null && shown !== shownBefore && !tabCluster()) renderCurrent();
    shownBefore = shown;
    checkServer();
  });
  shownCluster()
    .then((name) => {
      shownBefore = name;
    })
    .catch(() => null);
}

export function serverStatus() {
  return { ...serverState };
}

/** "/" jumps to the page's search box (as on most dashboards), unless one is typing already. */
function keyboardShortcuts() {
  document.addEventListener('keydown', (event) => {
    if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target.closest?.('input, textarea, select, [contenteditable="true"]')) return;
    const search = document.querySelector('main input[type="search"]');
    if (search) {
      event.preventDefault();
      search.focus();
      search.select();
    }
  });
}

let following = false;

/** Once logged in: the pill follows the tab's cluster, the server's default and navigation. */
function followAll() {
  if (following) return;
  following = true;
  followClusters();
  followNavigation();
}

async function start() {
  keyboardShortcuts();
  setInterval(() => tickTimes(), 1000); // every "3 min ago" and "running for" on any page stays true
  buildNav();
  buildNavToggle();
  buildThemeToggle();
  interceptLinks();
  setUnauthorizedHandler(() => logIn());
  const params = new URLSearchParams(location.search);
  if (params.get('login') === 'failed') {
    params.delete('login');
    const qs = params.toString();
    history.replaceState(null, '', location.pathname + (qs ? `?${qs}` : ''));
    logIn(
      'That login link was used already, has expired or is wrong: each link logs in one browser, within ' +
        `10 minutes. Run \`${loginLinkCommand()}\` for a new one, or paste the token below.`,
    );
    return;
  }
  // One quiet question first (always 200): a logged-out browser goes straight to the login view, with no 401 from
  // every request the page would make (each one an error in the browser's console).
  const session = await api('/api/auth/session').catch(() => ({ logged_in: true }));
  if (!session.logged_in) {
    logIn();
    return;
  }
  followAll();
  renderCurrent();
  checkServer().then(followServer);
}

function restart() {
  document.body.classList.remove('logged-out');
  followAll();
  import('./events.js').then((events) => events.reconnect()).catch(() => null);
  renderCurrent();
  checkServer().then(followServer);
}

start();
