// Files: one cluster's mounts (the tab's cluster, said and chosen at the top), a directory browser with breadcrumbs, a
// file viewer, "what would sync change", sync (additive) and mirror (what is sent and deleted shown and confirmed
// first); a sync the server refuses for a reason a flag overrides (force: another machine's mount; adopt: a first
// mirror into a directory holding files) offers that flag, confirmed on the dry run with it.
import { h, replace, fmtBytes, fmtNumber } from '../dom.js';
import { api, ApiError, errorText } from '../api.js';
import { card, alertBox, showError, confirmDialog, actionButton, toast } from '../ui.js';
import { emptyState, setQuery } from '../router.js';
import { icon } from '../icons.js';
import { chooseCluster, clusters, shownCluster } from '../cluster.js';
import { clusterChoice } from '../components/mounts-cluster.js';

/** A directory, file, symlink or "up" icon for the browser's rows (outlined: see .ficon). */
function entryIcon(kind) {
  return icon(kind, `ficon ficon-${kind}`);
}

/** What Files says with no mount to browse on `cluster`: a profile without mounts, or this machine's Slurm (no
 * profile, so no mounts) while profiles exist, or there is no profile at all. */
function noMounts(cluster, profiles) {
  const names = Object.keys(profiles.profiles || {});
  if (names.includes(cluster)) {
    return emptyState(
      `Profile "${cluster}" has no mounts`,
      'A mount pairs a local directory with a directory on the cluster; add one to browse and sync it.',
      h('a', { class: 'btn btn-primary', href: '/settings?tab=profiles' }, 'Add a mount'),
    );
  }
  if (names.length) {
    const which = names.length === 1 ? names[0] : `one of ${names.join(', ')}`;
    return emptyState(
      'No mounts to browse',
      `Files browses the mounts of an SSH profile, and ${cluster} is not one (its jobs read files where ` +
        `they are). Choose ${which} above, or add a mount to it under SSH profiles & mounts.`,
      h('a', { class: 'btn btn-primary', href: '/settings?tab=profiles' }, 'SSH profiles & mounts'),
    );
  }
  return emptyState(
    'No SSH profile yet',
    "Files live in mounts of the server's SSH profile. Create a profile (and a mount) first.",
    h('a', { class: 'btn btn-primary', href: '/settings?tab=profiles&new=1' }, 'Create a profile'),
  );
}

export async function render(root, params, query) {
  const cluster = await shownCluster();
  const on = { transport: cluster };
  const [mounts, profiles, known] = await Promise.all([
    api('/api/files/mounts', { query: on }),
    api('/api/config/ssh/profiles'),
    clusters().catch(() => ({ clusters: [] })),
  ]);
  const choice = clusterChoice(
    'files-cluster',
    known.clusters.map((t) => t.name),
    cluster,
    (name) => {
      chooseCluster(name);
      render(root, params, {});
    },
  );
  if (!mounts.length) {
    replace(root, choice, card(null, noMounts(cluster, profiles)));
    return null;
  }

  const state = {
    mount: mounts.some((m) => m.name === query.mount) ? query.mount : mounts[0].name,
    path: query.path || '',
    file: query.file || '',
  };
  const mountTabs = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Mount' });
  const remote = h('span', { class: 'muted mono' });
  const crumbs = h('nav', { class: 'breadcrumbs', 'aria-label': 'Folder' });
  const list = h('ul', { class: 'file-list', id: 'file-list' });
  const listError = alertBox(null);
  const viewerTitle = h('span', null, 'No file open');
  const viewer = h(
    'div',
    { id: 'file-viewer' },
    h('div', { class: 'empty' }, h('p', null, 'Pick a file on the left to read it here (text files up to 1 MB).')),
  );
  const syncBox = h('div', { id: 'sync-result' });
  const syncError = alertBox(null);

  function saveQuery() {
    setQuery({ mount: state.mount, path: state.path, file: state.file });
  }

  function drawMountTabs() {
    replace(
      mountTabs,
      mounts.map((m) =>
        h(
          'button',
          {
            type: 'button',
            class: m.name === state.mount ? 'active' : null,
            'aria-pressed': String(m.name === state.mount),
            onClick: () => {
              state.mount = m.name;
              state.path = '';
              state.file = '';
              replace(syncBox);
              showError(syncError, null);
              drawMountTabs();
              browse();
              openFile();
            },
          },
          m.name,
        ),
      ),
    );
    remote.textContent = `→ ${mounts.find((m) => m.name === state.mount).remote}`;
  }

  function drawCrumbs() {
    const parts = state.path ? state.path.split('/').filter(Boolean) : [];
    const items = [h('button', { type: 'button', onClick: () => go('') }, state.mount)];
    parts.forEach((part, i) => {
      items.push(h('span', { class: 'sep' }, '/'));
      const target = parts.slice(0, i + 1).join('/');
      items.push(
        i === parts.length - 1
          ? h('span', { 'aria-current': 'page' }, part)
          : h('button', { type: 'button', onClick: () => go(target) }, part),
      );
    });
    replace(crumbs, items);
  }

  function go(path) {
    state.path = path;
    saveQuery();
    browse();
  }

  async function browse() {
    drawCrumbs();
    replace(list, h('li', { class: 'loading' }, 'Loading…'));
    showError(listError, null);
    try {
      const data = await api('/api/files/browse', { query: { ...on, mount: state.mount, path: state.path } });
      const rows = [];
      if (state.path)
        rows.push(
          h(
            'li',
            null,
            h(
              'button',
              { type: 'button', onClick: () => go(state.path.split('/').slice(0, -1).join('/')) },
              entryIcon('up'),
              h('span', { class: 'fname' }, '..'),
            ),
          ),
        );
      for (const e of data.entries) {
        const rel = state.path ? `${state.path}/${e.name}` : e.name;
        const isDir = e.type === 'directory' || (e.type === 'symlink' && e.target_kind === 'directory');
        const blocked = e.type === 'symlink' && e.accessible === false;
        rows.push(
          h(
            'li',
            null,
            h(
              'button',
              {
                type: 'button',
                disabled: blocked,
                class: rel === state.file ? 'selected' : null,
                title: blocked ? 'a link to outside the mount: not followed' : null,
                dataset: { name: e.name },
                onClick: () => {
                  if (isDir) go(rel);
                  else {
                    state.file = rel;
                    saveQuery();
                    highlight();
                    openFile();
                  }
                },
              },
              entryIcon(isDir ? 'directory' : e.type === 'symlink' ? 'symlink' : 'file'),
              h('span', { class: 'fname' }, e.name + (isDir ? '/' : '')),
              h(
                'span',
                { class: 'fsize' },
                e.size !== null && e.size !== undefined ? fmtBytes(e.size) : blocked ? 'outside' : '',
              ),
            ),
          ),
        );
      }
      if (data.truncated)
        rows.push(
          h(
            'li',
            { class: 'muted' },
            h(
              'p',
              null,
              `This folder holds more entries than the ${fmtNumber(data.entries.length, 0)} shown; ` +
                'svc reads at most 5,000.',
            ),
          ),
        );
      replace(list, rows.length ? rows : h('li', { class: 'empty' }, h('p', null, 'This folder is empty.')));
    } catch (err) {
      replace(list);
      showError(listError, err);
    }
  }

  function highlight() {
    for (const b of list.querySelectorAll('button[data-name]')) {
      const rel = state.path ? `${state.path}/${b.dataset.name}` : b.dataset.name;
      b.classList.toggle('selected', rel === state.file);
    }
  }

  async function openFile() {
    if (!state.file) {
      viewerTitle.textContent = 'No file open';
      replace(
        viewer,
        h('div', { class: 'empty' }, h('p', null, 'Pick a file on the left to read it here (text files up to 1 MB).')),
      );
      return;
    }
    viewerTitle.textContent = state.file;
    replace(viewer, h('div', { class: 'loading' }, 'Reading…'));
    try {
      const data = await api('/api/files/read', { query: { ...on, mount: state.mount, path: state.file } });
      replace(viewer, h('pre', { class: 'viewer', tabindex: '0' }, data.content));
    } catch (err) {
      replace(viewer, alertBox(err));
    }
  }

  function pathList(paths, omitted, count, cls = '') {
    if (omitted) return h('p', { class: 'muted' }, `${fmtNumber(count, 0)} paths (too many to list).`);
    if (!paths.length) return null;
    return h(
      'ul',
      { class: ['change-list', cls] },
      paths.map((p) => h('li', null, p)),
    );
  }

  async function inspect() {
    replace(syncBox, h('div', { class: 'loading' }, 'Comparing with the cluster…'));
    const r = await api('/api/files/inspect', { query: { ...on, mount: state.mount } });
    replace(
      syncBox,
      h(
        'div',
        { class: 'inspect' },
        h(
          'div',
          { class: 'stats compact' },
          h(
            'div',
            { class: 'stat tone-info' },
            h('div', { class: 'stat-value' }, fmtNumber(r.files_would_transfer, 0)),
            h('div', { class: 'stat-label' }, 'files a sync would send'),
          ),
          h(
            'div',
            { class: 'stat tone-bad' },
            h('div', { class: 'stat-value' }, fmtNumber(r.mirror_delete_candidates, 0)),
            h('div', { class: 'stat-label' }, 'a mirror would delete'),
          ),
          h(
            'div',
            { class: 'stat tone-warn' },
            h('div', { class: 'stat-value' }, r.stale_uploads_known ? fmtNumber(r.stale_uploads, 0) : '?'),
            h('div', { class: 'stat-label' }, 'uploaded earlier, gone locally'),
          ),
        ),
        r.mirror_delete_candidates
          ? [
              h('h3', { class: 'sub' }, 'A mirror would delete on the cluster'),
              pathList(
                r.mirror_delete_candidate_paths,
                r.mirror_delete_candidate_paths_omitted,
                r.mirror_delete_candidates,
                'deletions',
              ),
            ]
          : null,
        r.stale_uploads_known && r.stale_uploads
          ? [
              h('h3', { class: 'sub' }, 'Uploaded earlier but gone locally'),
              pathList(r.stale_upload_paths, r.stale_upload_paths_omitted, r.stale_uploads),
            ]
          : null,
        !r.stale_uploads_known && r.stale_uploads_unknown_reason
          ? h('p', { class: 'muted' }, `Stale uploads unknown: ${r.stale_uploads_unknown_reason}.`)
          : null,
      ),
    );
  }

  // A refusal one flag overrides, and what that flag does: said in the confirmation, above the dry run's lists.
  const REMEDIES = {
    force: {
      offer: 'Take over from this machine…',
      verb: 'Take over',
      note:
        'Another machine synced this mount last. Taking it over makes this machine its owner: a sync from the ' +
        'other machine is refused afterwards, until it takes the mount back.',
    },
    adopt: {
      offer: 'Adopt the cluster directory…',
      verb: 'Adopt',
      note:
        'svc never synced this cluster directory and it already holds files. Adopting it claims it for this ' +
        'mount, so the mirror deletes there what is not in the local folder.',
    },
  };

  const dryRun = (op, flags) =>
    api(`/api/files/${op}`, {
      method: 'POST',
      query: on,
      body: { mount: state.mount, dry_run: true, ...(op === 'mirror' ? { max_delete: 100000 } : {}), ...flags },
    });

  function changeLists(dry) {
    const sent = dry.files_transferred;
    const deletions = dry.entries_deleted;
    return [
      h('p', null, sent ? `${fmtNumber(sent, 0)} file(s) will be sent:` : 'No file needs sending.'),
      sent ? pathList(dry.transferred_paths, dry.transferred_paths_omitted, sent, 'sends') : null,
      !dry.delete
        ? h('p', { class: 'muted' }, 'Nothing will be deleted on the cluster (a sync is additive).')
        : deletions
          ? [
              h(
                'p',
                null,
                h(
                  'strong',
                  { class: 'exit-bad' },
                  `${fmtNumber(deletions, 0)} entr${deletions === 1 ? 'y' : 'ies'} will be deleted on the cluster:`,
                ),
              ),
              pathList(dry.deleted_paths, dry.deleted_paths_omitted, deletions, 'deletions'),
            ]
          : h('p', null, 'Nothing will be deleted on the cluster.'),
    ];
  }

  function confirmLabel(op, remedy, deletions) {
    if (remedy) return `${REMEDIES[remedy].verb} and ${op}${deletions ? ` (delete ${deletions})` : ''}`;
    return deletions ? `Mirror and delete ${deletions}` : 'Mirror';
  }

  /** The dry run of `op` with `flags`, itemised in a confirmation: the dry run when confirmed, else null. */
  async function confirmChanges(op, flags, remedy) {
    const shown = [...syncBox.childNodes]; // back in place when the user declines
    replace(syncBox, h('div', { class: 'loading' }, 'Working out what would change…'));
    const dry = await dryRun(op, flags);
    replace(syncBox);
    const deletions = dry.entries_deleted;
    const ok = await confirmDialog({
      title: `${remedy ? `${REMEDIES[remedy].verb} and ${op}` : 'Mirror'} "${state.mount}" to the cluster?`,
      body: [remedy ? h('p', { class: 'remedy-note' }, REMEDIES[remedy].note) : null, ...changeLists(dry)],
      confirmLabel: confirmLabel(op, remedy, deletions),
      danger: deletions > 0 || remedy === 'force',
    });
    if (!ok) replace(syncBox, shown);
    return ok ? dry : null;
  }

  // Sync is additive and sent at once, unless a remedy's flag goes with it (then confirmed on its dry run).
  async function sync(flags, remedy) {
    if (remedy && !(await confirmChanges('sync', flags, remedy))) return;
    replace(syncBox, h('div', { class: 'loading' }, 'Syncing…'));
    const r = await api('/api/files/sync', { method: 'POST', query: on, body: { mount: state.mount, ...flags } });
    replace(
      syncBox,
      h(
        'div',
        { class: 'alert alert-ok', role: 'status' },
        `Synced: mount "${r.mount}" is on the cluster (additive: nothing was deleted there).`,
      ),
    );
    toast(`Mount ${r.mount} synced`, 'ok');
  }

  async function mirror(flags, remedy) {
    const dry = await confirmChanges('mirror', flags, remedy);
    if (!dry) return;
    replace(syncBox, h('div', { class: 'loading' }, 'Mirroring…'));
    // max_delete is what was shown: if more would go by now, the server refuses and changes nothing.
    const r = await api('/api/files/mirror', {
      method: 'POST',
      query: on,
      body: { mount: state.mount, dry_run: false, max_delete: Math.max(1, dry.entries_deleted), ...flags },
    });
    replace(
      syncBox,
      h(
        'div',
        { class: 'alert alert-ok', role: 'status' },
        `Mirrored: ${fmtNumber(r.files_transferred, 0)} file(s) sent, ` +
          `${fmtNumber(r.entries_deleted, 0)} deleted on the cluster.`,
      ),
    );
  }

  /** Run `op`: a refusal that a flag not yet sent overrides becomes an offer of that flag; other errors are shown. */
  const guarded =
    (op, flags = {}, remedy = null) =>
    async () => {
      try {
        await (op === 'mirror' ? mirror : sync)(flags, remedy);
      } catch (err) {
        if (!(err instanceof ApiError && REMEDIES[err.remedy] && !flags[err.remedy])) {
          replace(syncBox);
          throw err;
        }
        replace(
          syncBox,
          h(
            'div',
            { class: 'alert alert-warn remedy', role: 'alert' },
            h('p', null, errorText(err)),
            actionButton(REMEDIES[err.remedy].offer, guarded(op, { ...flags, [err.remedy]: true }, err.remedy), {
              errorBox: syncError,
            }),
          ),
        );
      }
    };

  const failInto = (fn) => async () => {
    try {
      await fn();
    } catch (err) {
      replace(syncBox);
      throw err;
    }
  };
  replace(
    root,
    choice,
    card(
      null,
      h(
        'div',
        { class: 'toolbar' },
        mountTabs,
        remote,
        h('span', { class: 'grow' }),
        actionButton('What would sync change?', failInto(inspect), { errorBox: syncError }),
        actionButton('Sync', guarded('sync'), { cls: 'btn btn-primary', errorBox: syncError, busyLabel: 'Syncing…' }),
        actionButton('Mirror…', guarded('mirror'), {
          cls: 'btn btn-ghost-danger',
          errorBox: syncError,
          title: 'Make the cluster copy equal to the local folder (deletes there what is gone here)',
        }),
      ),
    ),
    syncError,
    syncBox,
    h(
      'div',
      { class: 'grid files-grid' },
      card(crumbs, [listError, list], { cls: 'flush' }),
      card(viewerTitle, viewer, { cls: 'flush' }),
    ),
  );
  drawMountTabs();
  await browse();
  await openFile();
  return null;
}
