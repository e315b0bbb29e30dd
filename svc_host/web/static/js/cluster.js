// The cluster a browser tab looks at. It belongs to the tab, not to the server: `?cluster=<name>` in the URL
// (bookmarkable, and a link to a job names its job's cluster), kept for the tab in sessionStorage so a link that
// names none stays on it. A tab that never chose one follows the server's default, which Settings sets and the
// event stream announces (`server.default_changed`). REST routes take the cluster as `?transport=<name>`.
// "All clusters" (`?cluster=*`, a name no profile can have) is a choice of the pill too: the Overview then shows
// every cluster side by side, and every list (Jobs, History, Runs, Sweeps, Resources) every cluster's; a list's own
// cluster filter is the same choice (`chooseListed`), so it outlives the page. Pages about one thing (a job, a run)
// show their thing's cluster; forms start on the tab's cluster, or the server's default meanwhile.
// Only usable clusters are offered: a plugin's transport that is not configured yet is left out (Settings, via
// /api/plugins, says why).
// A job page (`/jobs/<id>?cluster=<name>`) is bound to its job's cluster: a job is (cluster, id), so its URL is
// never read on another cluster. Its cluster is not the tab's choice (the tab's own comes back on the next page),
// the pill says "lab24 · this job's cluster", and choosing another cluster there goes to that cluster's Jobs.
// A run's page (`/runs/<id>`) and a sweep's (`/sweeps/<id>`) are bound to their run's or sweep's cluster the same
// way; a switch there goes to the chosen cluster's runs (Workflows) or Sweeps.
import { api } from './api.js';

const KEY = 'svc-cluster';
/** The pill's "All clusters" choice (`?cluster=*`). */
export const ALL_CLUSTERS = '*';
const listeners = new Set();
// {defaultName, clusters: [{name, remote, description}], transports: the pill's choices (clusters + All clusters)}
let offered = null;
let loading = null;

function stored() {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

function store(name) {
  try {
    if (name) sessionStorage.setItem(KEY, name);
    else sessionStorage.removeItem(KEY);
  } catch {
    /* storage disabled: the URL still carries the cluster */
  }
}

/** The cluster this tab shows (`?cluster=`: on a job page its job's, else the tab's last choice); null: it follows
 * the server's default. */
export function tabCluster() {
  return new URLSearchParams(location.search).get('cluster') || stored() || null;
}

/** The pages about one thing of one cluster: what the thing is called, and the list a switch of cluster goes to. */
const BOUND_PAGES = [
  { path: /^\/jobs\/[^/]+\/?$/, thing: 'job', list: '/jobs' },
  { path: /^\/runs\/[^/]+\/?$/, thing: 'run', list: '/workflows' },
  { path: /^\/sweeps\/[^/]+\/?$/, thing: 'sweep', list: '/sweeps' },
];

/** The page on screen if it is one job's, run's or sweep's (bound to the cluster its URL names), else null. */
function boundPage() {
  return BOUND_PAGES.find((bound) => bound.path.test(location.pathname)) || null;
}

/** The cluster the page on screen is bound to (a job's, run's or sweep's page: its thing's), null on others. */
export function boundCluster() {
  return boundPage() ? new URLSearchParams(location.search).get('cluster') : null;
}

/** Before each page draws: a URL naming a cluster makes it the tab's (a bound page's names its thing's cluster,
 * which stays the page's own); a URL naming none gets the tab's. */
export function keepClusterInUrl() {
  const params = new URLSearchParams(location.search);
  const named = params.get('cluster');
  if (named) {
    if (!boundPage()) store(named);
    return;
  }
  const kept = stored();
  if (!kept) return;
  params.set('cluster', kept);
  history.replaceState(history.state, '', `${location.pathname}?${params}`);
}

/** The job's, run's or sweep's page at `path` found its thing on `name` (the URL may have named none, or "All
 * clusters"): the URL names it, and the page is bound to it; the pill follows. Nothing changes once another page
 * is on screen. */
export function bindPageCluster(name, path) {
  const params = new URLSearchParams(location.search);
  if (location.pathname !== path || params.get('cluster') === name) return;
  params.set('cluster', name);
  history.replaceState(history.state, '', `${location.pathname}?${params}`);
  for (const listener of listeners) listener();
}

/** Choose the tab's cluster (null: follow the server's default) and put it in the URL; the caller redraws. On a
 * bound page the choice leads to the chosen cluster's list (Jobs, runs, Sweeps): that id means another thing there,
 * or none. */
export function chooseCluster(name) {
  store(name);
  const bound = boundPage();
  const params = bound ? new URLSearchParams() : new URLSearchParams(location.search);
  if (name) params.set('cluster', name);
  else params.delete('cluster');
  const qs = params.toString();
  history.pushState(history.state, '', (bound ? bound.list : location.pathname) + (qs ? `?${qs}` : ''));
  for (const listener of listeners) listener();
}

/** Whether this tab chose "All clusters". */
export function allClustersChosen() {
  return tabCluster() === ALL_CLUSTERS;
}

/** The one cluster this tab chose, null when it follows the server's default or chose "All clusters". */
function oneCluster() {
  const name = tabCluster();
  return name === ALL_CLUSTERS ? null : name;
}

/** `{transport}` for an api() query: the tab's cluster, or nothing (the server then uses its default). */
export function clusterQuery(extra = {}) {
  const name = oneCluster();
  return name ? { ...extra, transport: name } : { ...extra };
}

/** The link to one job: its cluster and id (and `extra` query keys such as `log`). */
export function jobHref(cluster, jobId, extra = {}) {
  const params = new URLSearchParams(cluster ? { cluster, ...extra } : extra);
  const qs = params.toString();
  return `/jobs/${encodeURIComponent(jobId)}${qs ? `?${qs}` : ''}`;
}

/** The clusters on offer and the server's default (read once, then kept true by the event stream). */
export async function clusters() {
  if (offered) return offered;
  if (!loading) {
    loading = api('/api/plugins')
      .then((plugins) => {
        const usable = (plugins.transports || [])
          .filter((t) => t.usable !== false)
          .sort((a, b) => byClusterOrder(a.name, b.name));
        offered = {
          defaultName: plugins.server_transport,
          clusters: usable,
          transports: [...usable, { name: ALL_CLUSTERS }],
        };
        follow();
        return offered;
      })
      .finally(() => {
        loading = null;
      });
  }
  return loading;
}

/** One order of clusters everywhere (the pill, every form's Cluster field, every list's filter): this machine's
 * Slurm first, then the profiles by name, "All clusters" last. A comparator of names. */
export function byClusterOrder(x, y) {
  const rank = (name) => (name === 'local' ? 0 : name === ALL_CLUSTERS ? 2 : 1);
  return rank(x) - rank(y) || x.localeCompare(y);
}

/** What a list page (Jobs, History, Runs, Sweeps, Resources) shows, as the pill says: '' every cluster (the tab
 * chose "All clusters"), else one cluster: the tab's, or the server default while the tab follows it. */
export async function listedCluster() {
  return allClustersChosen() ? '' : shownCluster();
}

/** A list page's own cluster filter chose `name` ('' every cluster): that is the tab's choice, so the pill and
 * the pages after it (a job of another cluster opened and left too) show the same. */
export function chooseListed(name) {
  chooseCluster(name || ALL_CLUSTERS);
}

/** The name of the one cluster this tab shows: its own choice, else (following the default, or "All clusters")
 * the server's default. */
export async function shownCluster() {
  return oneCluster() || (await clusters()).defaultName;
}

/** Forget what is known of the clusters (a profile was added or deleted): the next read asks again. */
export function clustersChanged() {
  offered = null;
  for (const listener of listeners) listener();
}

/** Call `listener()` when the tab's cluster, the clusters on offer or the server's default change. */
export function onClusterChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

let following = false;

function follow() {
  if (following) return;
  following = true;
  import('./events.js')
    .then(({ subscribe }) =>
      subscribe(['server.default_changed'], (event) => {
        const name = event.payload?.transport;
        if (!name || !offered || offered.defaultName === name) return;
        offered = null; // a new default may come with a new profile: read the list again
        for (const listener of listeners) listener();
      }),
    )
    .catch((err) => console.warn('live updates unavailable', err));
}

/** "local" is this machine's Slurm; a profile is shown by its name; `*` is "All clusters". */
export function clusterLabel(name) {
  if (name === ALL_CLUSTERS) return 'All clusters';
  return name === 'local' ? "local · this machine's Slurm" : name;
}

/** A choice of the pill: a job's, run's or sweep's page's own cluster says so. */
export function pillLabel(name) {
  return name === boundCluster() ? `${name} · this ${boundPage().thing}'s cluster` : clusterLabel(name);
}
