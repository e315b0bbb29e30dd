// Settings: configuration layers (which layer each value comes from, user values editable), SSH profiles and
// their mounts (add, edit, make the server default, test, delete; a mount's exclude patterns), each project's
// configuration (the project file in a mount's directory: job defaults and excludes), and the server's SVC_*
// environment. Values are judged by the API; its problems are said under their fields.
import { h, replace } from '../dom.js';
import { api, errorText } from '../api.js';
import {
  card,
  field,
  alertBox,
  showError,
  showFormError,
  patternRule,
  confirmDialog,
  actionButton,
  toast,
  tabs,
} from '../ui.js';
import { emptyState, setQuery } from '../router.js';
import { clustersChanged } from '../cluster.js';
import { excludeField } from '../components/exclude-field.js';
import { projectsPanel } from '../components/project-editor.js';

export async function render(root, _params, query) {
  const view = tabs(
    [
      { id: 'general', label: 'Configuration', render: (panel) => configTab(panel) },
      { id: 'profiles', label: 'SSH profiles & mounts', render: (panel) => profilesTab(panel, query.new === '1') },
      { id: 'projects', label: 'Projects', render: (panel) => projectsPanel(panel) },
      { id: 'environment', label: 'Environment', render: (panel) => envTab(panel) },
    ],
    query.tab,
    (id) => setQuery({ tab: id === 'general' ? '' : id }),
  );
  replace(root, view.element);
  await view.drawn; // the page is ready when its first tab has drawn with its data
  return null;
}

// -- configuration layers ---------------------------------------------------------------------------------

/** A path whose lines may break only after a `/` (a `<wbr>` there, each name unbroken, its `-` included):
 * "/home/svcdev/<wbr>.config/svc/..." never splits a name in two. */
function pathBreaks(path) {
  return path.split('/').flatMap((part, i) => {
    const name = h('span', { class: 'nowrap' }, part);
    return i ? ['/', h('wbr'), name] : [name];
  });
}

function layerBadge(source) {
  return h('span', { class: ['layer', `layer-${source}`] }, source);
}

function show(value) {
  if (value === null || value === undefined) return h('span', { class: 'muted' }, 'not set');
  if (typeof value === 'object') {
    const entries = Object.entries(value);
    return entries.length
      ? h('code', null, entries.map(([k, v]) => `${k}=${v}`).join(' '))
      : h('span', { class: 'muted' }, 'none');
  }
  return h('code', null, String(value));
}

/** {a: {b: v}} from "a.b" and v: the partial PUT /api/config takes. */
function nested(key, value) {
  const parts = key.split('.');
  const out = {};
  let at = out;
  parts.slice(0, -1).forEach((p) => {
    at[p] = {};
    at = at[p];
  });
  at[parts[parts.length - 1]] = value;
  return out;
}

function parseValue(text, previous) {
  const t = text.trim();
  if (t === '') return null;
  if (typeof previous === 'number' || /^\d+$/.test(t)) return Number(t);
  return t;
}

async function configTab(panel) {
  panel.append(h('div', { class: 'loading' }, 'Loading…'));
  const error = alertBox(null);
  const [layers, paths, config] = await Promise.all([
    api('/api/config/layers'),
    api('/api/config/paths'),
    api('/api/config'),
  ]).catch((err) => {
    replace(panel, alertBox(err));
    return [null, null, null];
  });
  if (!layers) return;
  // What is configured but will do nothing (a chat webhook with no plugin to deliver it): said where it is set.
  const warnings = h('div', { id: 'config-warnings' });
  function drawWarnings(list) {
    replace(
      warnings,
      (list || []).map((text) => h('div', { class: 'alert alert-warn', role: 'status' }, text)),
    );
  }
  drawWarnings(config.warnings);
  const body = h('tbody');
  function drawRows(data) {
    replace(
      body,
      data.values.map((v) => {
        const editable = typeof v.value !== 'object' || v.value === null;
        const rowError = h('div', { class: 'alert alert-error small', hidden: true });
        const cell = h('td', { class: 'wrap' }, show(v.value), rowError);
        const edit = editable
          ? h(
              'button',
              {
                type: 'button',
                class: 'btn btn-sm',
                'aria-label': `Edit ${v.key}`,
                onClick: () => {
                  const input = h('input', {
                    value: v.value ?? '',
                    'aria-label': v.key,
                    placeholder: 'empty: not set',
                  });
                  const save = async () => {
                    try {
                      const saved = await api('/api/config', {
                        method: 'PUT',
                        body: nested(v.key, parseValue(input.value, v.value)),
                      });
                      drawWarnings(saved.warnings);
                      toast(`${v.key} saved in your user configuration`, 'ok');
                      drawRows(await api('/api/config/layers'));
                    } catch (err) {
                      rowError.hidden = false;
                      rowError.textContent = errorText(err);
                    }
                  };
                  input.addEventListener('keydown', (e) => {
                    if (e.key === 'Enter') save();
                    if (e.key === 'Escape') drawRows(data);
                  });
                  replace(
                    cell,
                    h(
                      'div',
                      { class: 'inline-edit' },
                      input,
                      h('button', { type: 'button', class: 'btn btn-sm btn-primary', onClick: save }, 'Save'),
                      h('button', { type: 'button', class: 'btn btn-sm', onClick: () => drawRows(data) }, 'Cancel'),
                    ),
                    rowError,
                  );
                  input.focus();
                },
              },
              'Edit',
            )
          : null;
        return h(
          'tr',
          null,
          h('td', null, h('code', null, v.key)),
          cell,
          h('td', null, layerBadge(v.source)),
          h('td', null, edit),
        );
      }),
    );
  }
  drawRows(layers);
  replace(
    panel,
    error,
    warnings,
    h(
      'div',
      { class: 'grid grid-main-side' },
      card(
        'Job defaults',
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'data', id: 'config-table' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                h('th', null, 'Key'),
                h('th', null, 'Value'),
                h('th', null, 'From'),
                h('th', null, h('span', { class: 'sr-only' }, 'Edit')),
              ),
            ),
            body,
          ),
        ),
        {
          cls: 'flush',
          actions: actionButton(
            'Reset user file',
            async () => {
              if (
                !(await confirmDialog({
                  title: 'Reset your user configuration?',
                  body: 'Your user file is overwritten with the defaults; system, project and SVC_* values stay.',
                  confirmLabel: 'Reset',
                  danger: true,
                }))
              )
                return;
              await api('/api/config/reset', { method: 'POST' });
              drawRows(await api('/api/config/layers'));
              drawWarnings((await api('/api/config')).warnings);
            },
            { cls: 'btn btn-sm', errorBox: error },
          ),
        },
      ),
      card('Layers', [
        h(
          'p',
          { class: 'muted small' },
          'Later layers win: system, then user, then the project file, then SVC_* variables. ' +
            'Edits go to your user file.',
        ),
        h(
          'ul',
          { class: 'layer-list' },
          paths.map((p) =>
            h(
              'li',
              null,
              layerBadge(p.source),
              h('code', null, pathBreaks(p.path)),
              h('span', { class: p.exists ? 'muted' : 'muted' }, p.exists ? 'present' : 'absent'),
            ),
          ),
        ),
        layers.layers.some((l) => l.source === 'env')
          ? h('p', { class: 'small' }, layerBadge('env'), ' SVC_* variables of the server process')
          : null,
      ]),
    ),
  );
}

// -- SSH profiles ----------------------------------------------------------------------------------------

const PROFILE_FIELDS = [
  ['hostname', 'Hostname', 'login.hpc.example'],
  ['username', 'Username', ''],
  ['port', 'Port', '22'],
  ['key_filename', 'Private key file', '~/.ssh/id_ed25519'],
  ['known_hosts', 'known_hosts file', '~/.ssh/known_hosts (default)'],
  ['ssh_host', 'ssh_config Host alias', 'optional'],
  ['proxy_jump', 'ProxyJump', 'optional: user@bastion'],
  ['description', 'Description', ''],
];
const UPDATABLE = new Set(['hostname', 'username', 'key_filename', 'port', 'description', 'ssh_host', 'proxy_jump']);

function profileForm({ name = '', profile = {}, editing = false, onDone }) {
  const error = alertBox(null);
  // The API's own rule (a profile name is a cluster name): Chromium compiles `pattern` with the v flag, so '-' is
  // escaped.
  const nameInput = patternRule(
    h('input', { name: 'name', value: name, required: true, disabled: editing, placeholder: 'hpc', maxlength: '64' }),
    '[a-z0-9][a-z0-9_.\\-]{0,63}',
    "1-64 lowercase letters, digits, '.', '-' or '_', starting with a letter or digit",
  );
  const inputs = Object.fromEntries(
    PROFILE_FIELDS.map(([key, , placeholder]) => [
      key,
      h('input', {
        name: key,
        value: profile[key] === null || profile[key] === undefined ? '' : String(profile[key]),
        placeholder,
        type: key === 'port' ? 'number' : 'text',
        disabled: editing && !UPDATABLE.has(key),
      }),
    ]),
  );
  const envVars = h(
    'textarea',
    {
      name: 'env_vars',
      rows: '3',
      spellcheck: 'false',
      placeholder: 'KEY=value, one per line: set before every command on the cluster',
    },
    Object.entries(profile.env_vars || {})
      .map(([k, v]) => `${k}=${v}`)
      .join('\n'),
  );
  const save = h('button', { type: 'submit', class: 'btn btn-primary' }, editing ? 'Save profile' : 'Create profile');
  const form = h(
    'form',
    {
      class: 'profile-form',
      onSubmit: async (event) => {
        event.preventDefault();
        showFormError(form, error, null);
        const body = {};
        for (const [key] of PROFILE_FIELDS) {
          if (editing && !UPDATABLE.has(key)) continue;
          const v = inputs[key].value.trim();
          if (key === 'port') body.port = v ? Number(v) : 22;
          else if (['ssh_host', 'proxy_jump', 'known_hosts'].includes(key)) body[key] = v || null;
          else body[key] = v;
        }
        // The server shows env values redacted and keeps the stored value for a <redacted> sent back.
        if (!editing || envVars.value !== envVars.defaultValue) {
          body.env_vars = {};
          for (const line of envVars.value.split('\n')) {
            const t = line.trim();
            if (!t) continue;
            const i = t.indexOf('=');
            if (i < 1) {
              showError(error, `"${t}" is not KEY=value`);
              return;
            }
            body.env_vars[t.slice(0, i).trim()] = t.slice(i + 1); // <redacted> sent back keeps the stored value
          }
        }
        save.disabled = true;
        try {
          if (editing) await api(`/api/config/ssh/profiles/${encodeURIComponent(name)}`, { method: 'PUT', body });
          else
            await api('/api/config/ssh/profiles', { method: 'POST', body: { name: nameInput.value.trim(), ...body } });
          toast(editing ? `Profile ${name} saved` : `Profile ${nameInput.value.trim()} created`, 'ok');
          clustersChanged(); // a new cluster to switch to
          onDone(true);
        } catch (err) {
          showFormError(form, error, err);
        } finally {
          save.disabled = false;
        }
      },
    },
    h(
      'div',
      { class: 'form-grid' },
      field('Name', nameInput),
      PROFILE_FIELDS.map(([key, label]) => field(label, inputs[key])),
    ),
    field('Environment variables', envVars, {
      hint: 'passed with env before every remote command (e.g. PATH additions, SLURM_CONF)',
    }),
    error,
    h(
      'div',
      { class: 'form-actions' },
      save,
      h('button', { type: 'button', class: 'btn', onClick: () => onDone(false) }, 'Cancel'),
    ),
  );
  setTimeout(() => (editing ? inputs.hostname : nameInput).focus(), 0);
  return form;
}

function mountForm(profileName, onDone) {
  const error = alertBox(null);
  const name = patternRule(
    h('input', {
      name: 'mount_name',
      dataset: { field: 'name' },
      placeholder: 'code',
      required: true,
      maxlength: '64',
    }),
    '[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}',
    "1-64 letters, digits, '.', '-' or '_', starting with a letter or digit",
  );
  const local = h('input', {
    name: 'mount_local',
    dataset: { field: 'local' },
    placeholder: '/home/me/project (on this machine)',
    required: true,
  });
  const remote = h('input', {
    name: 'mount_remote',
    dataset: { field: 'remote' },
    placeholder: 'projects/code (on the cluster)',
    required: true,
  });
  const form = h(
    'form',
    {
      class: 'mount-form',
      onSubmit: async (event) => {
        event.preventDefault();
        showFormError(form, error, null);
        try {
          await api(`/api/config/ssh/profiles/${encodeURIComponent(profileName)}/mounts`, {
            method: 'POST',
            body: { name: name.value.trim(), local: local.value.trim(), remote: remote.value.trim() },
          });
          toast(`Mount ${name.value.trim()} added`, 'ok');
          onDone(true);
        } catch (err) {
          showFormError(form, error, err);
        }
      },
    },
    h(
      'div',
      { class: 'form-grid' },
      field('Mount name', name),
      field('Local directory', local),
      field('Cluster directory', remote),
    ),
    error,
    h(
      'div',
      { class: 'form-actions' },
      h('button', { type: 'submit', class: 'btn btn-primary' }, 'Add mount'),
      h('button', { type: 'button', class: 'btn', onClick: () => onDone(false) }, 'Cancel'),
    ),
  );
  return form;
}

async function profilesTab(panel, startNew) {
  const error = alertBox(null);
  const list = h('div', { class: 'profile-list', id: 'profile-list' });
  const formBox = h('div');
  let data = null;

  function newProfile() {
    replace(
      formBox,
      card(
        'New SSH profile',
        profileForm({
          onDone: async (changed) => {
            replace(formBox);
            if (changed) await load();
          },
        }),
      ),
    );
    formBox.scrollIntoView({ block: 'nearest' });
  }

  function profileCard(name, p) {
    const current = data.current === name;
    const testResult = h('div', { class: 'test-result', role: 'status' });
    const editBox = h('div');
    const mountBox = h('div');
    const cardError = alertBox(null);
    const test = actionButton(
      'Test connection',
      async () => {
        replace(testResult, h('div', { class: 'loading' }, `Connecting to ${p.hostname || p.ssh_host}…`));
        const r = await api(`/api/config/ssh/profiles/${encodeURIComponent(name)}/test`, { method: 'POST' });
        replace(
          testResult,
          h(
            'div',
            { class: ['alert', r.ok ? 'alert-ok' : 'alert-error'] },
            r.ok
              ? `Connected: ${r.message}${r.partitions.length ? ` (${r.partitions.join(', ')})` : ''}.`
              : `Cannot connect: ${r.message}`,
          ),
        );
      },
      { cls: 'btn btn-sm', busyLabel: 'Testing…', errorBox: cardError },
    );
    const activate = defaultButton(name, current, cardError);
    const edit = h(
      'button',
      {
        type: 'button',
        class: 'btn btn-sm',
        onClick: () =>
          replace(
            editBox,
            profileForm({
              name,
              profile: p,
              editing: true,
              onDone: async (changed) => {
                replace(editBox);
                if (changed) await load();
              },
            }),
          ),
      },
      'Edit',
    );
    const del = actionButton(
      'Delete',
      async () => {
        if (
          !(await confirmDialog({
            title: `Delete profile "${name}"?`,
            body: `Its ${p.mounts.length} mount(s) go too (their local files stay).`,
            confirmLabel: 'Delete profile',
            danger: true,
          }))
        )
          return;
        await api(`/api/config/ssh/profiles/${encodeURIComponent(name)}`, { method: 'DELETE' });
        clustersChanged();
        await load();
      },
      { cls: 'btn btn-sm btn-ghost-danger', errorBox: cardError },
    );
    const mounts = p.mounts.length
      ? h(
          'table',
          { class: 'data compact' },
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              h('th', null, 'Mount'),
              h('th', null, 'Local'),
              h('th', null, 'Cluster'),
              h('th', null, 'Excludes'),
              h('th', null, ''),
            ),
          ),
          h(
            'tbody',
            null,
            p.mounts.map((m) => [
              h(
                'tr',
                { dataset: { mount: m.name } },
                h('td', null, h('strong', null, m.name)),
                h('td', null, h('code', null, m.local)),
                h('td', null, h('code', null, m.remote)),
                excludesCell(name, m),
                h(
                  'td',
                  null,
                  actionButton(
                    'Remove',
                    async () => {
                      if (
                        !(await confirmDialog({
                          title: `Remove mount "${m.name}"?`,
                          body: 'Only the mount goes; no file is deleted, here or on the cluster.',
                          confirmLabel: 'Remove mount',
                          danger: true,
                        }))
                      )
                        return;
                      await api(
                        `/api/config/ssh/profiles/${encodeURIComponent(name)}/mounts/${encodeURIComponent(m.name)}`,
                        { method: 'DELETE' },
                      );
                      await load();
                    },
                    { cls: 'btn btn-sm btn-ghost-danger', errorBox: cardError },
                  ),
                ),
              ),
              m.editRow,
            ]),
          ),
        )
      : h('p', { class: 'muted small' }, 'No mounts: add one to browse and sync a project folder.');
    return h(
      'div',
      { class: ['profile', current && 'current'], dataset: { profile: name } },
      h(
        'div',
        { class: 'profile-head' },
        h('span', { class: 'pname' }, name),
        activate,
        h(
          'span',
          { class: 'muted mono' },
          `${p.username ? `${p.username}@` : ''}${p.hostname || p.ssh_host}` +
            `${p.port && p.port !== 22 ? `:${p.port}` : ''}`,
        ),
        p.proxy_jump ? h('span', { class: 'muted small' }, `via ${p.proxy_jump}`) : null,
        h('span', { class: 'grow' }),
        test,
        edit,
        del,
      ),
      p.description ? h('p', { class: 'muted small' }, p.description) : null,
      Object.keys(p.env_vars || {}).length
        ? h(
            'p',
            { class: 'small' },
            h('span', { class: 'muted' }, 'Environment: '),
            h('code', null, Object.keys(p.env_vars).join(' ')),
          )
        : null,
      cardError,
      testResult,
      editBox,
      h(
        'div',
        { class: 'mounts' },
        h(
          'div',
          { class: 'mounts-head' },
          h('h3', { class: 'sub' }, 'Mounts'),
          h(
            'button',
            {
              type: 'button',
              class: 'btn btn-sm',
              onClick: () =>
                replace(
                  mountBox,
                  mountForm(name, async (changed) => {
                    replace(mountBox);
                    if (changed) await load();
                  }),
                ),
            },
            'Add mount',
          ),
        ),
        mounts,
        mountBox,
      ),
    );
  }

  /** A mount's exclude patterns, and an editor of them in a row of its own below the mount's (`m.editRow`, set
   * here): the API judges them, and a bad one is said under the field. */
  function excludesCell(profileName, m) {
    const cell = h('td', { class: 'wrap mount-excludes' });
    const editCell = h('td', { colspan: '5' });
    m.editRow = h('tr', { class: 'exclude-edit-row', dataset: { excludeOf: m.name }, hidden: true }, editCell);
    const show = () => {
      m.editRow.hidden = true;
      replace(editCell);
      replace(
        cell,
        m.exclude.length ? h('code', null, m.exclude.join(' ')) : h('span', { class: 'muted' }, 'none'),
        ' ',
        h(
          'button',
          { type: 'button', class: 'btn btn-sm', 'aria-label': `Edit the excludes of ${m.name}`, onClick: edit },
          'Edit',
        ),
      );
    };
    function edit() {
      const error = alertBox(null);
      const patterns = excludeField(m.exclude);
      const form = h(
        'form',
        {
          class: 'exclude-form',
          novalidate: true,
          onSubmit: async (event) => {
            event.preventDefault();
            showFormError(form, error, null);
            try {
              const path =
                `/api/config/ssh/profiles/${encodeURIComponent(profileName)}` +
                `/mounts/${encodeURIComponent(m.name)}/exclude`;
              await api(path, { method: 'PUT', body: { exclude: patterns.value() } });
              toast(`Excludes of ${m.name} saved`, 'ok');
              await load();
            } catch (err) {
              showFormError(form, error, err);
            }
          },
        },
        patterns.element,
        error,
        h(
          'div',
          { class: 'form-actions' },
          h('button', { type: 'submit', class: 'btn btn-sm btn-primary' }, 'Save excludes'),
          h('button', { type: 'button', class: 'btn btn-sm', onClick: show }, 'Cancel'),
        ),
      );
      replace(editCell, form);
      m.editRow.hidden = false;
      form.querySelector('textarea').focus();
    }
    show();
    return cell;
  }

  /** "server default" (a badge) on the default cluster, else a button that makes `name` the default. */
  function defaultButton(name, isDefault, errorBox) {
    if (isDefault) return h('span', { class: 'badge state-COMPLETED' }, 'server default');
    return actionButton(
      'Make server default',
      async () => {
        await api(`/api/config/ssh/profiles/${encodeURIComponent(name)}/activate`, { method: 'POST' });
        toast(`${name} is now the server's default cluster`, 'ok');
        clustersChanged();
        await load();
      },
      { cls: 'btn btn-sm', errorBox },
    );
  }

  async function load() {
    try {
      data = await api('/api/config/ssh/profiles');
    } catch (err) {
      showError(error, err);
      return;
    }
    const names = Object.keys(data.profiles);
    const localError = alertBox(null);
    const local = h(
      'div',
      { class: ['profile', !data.current && 'current'], dataset: { profile: 'local' } },
      h(
        'div',
        { class: 'profile-head' },
        h('span', { class: 'pname' }, 'local'),
        defaultButton('local', !data.current, localError),
        h('span', { class: 'muted' }, "this machine's Slurm, always there"),
      ),
      localError,
    );
    if (!names.length) {
      replace(
        list,
        local,
        card(
          null,
          emptyState(
            'No SSH profile yet',
            'Without a profile the server drives the Slurm on this machine. ' +
              'A profile lets it reach a cluster over SSH.',
            h('button', { type: 'button', class: 'btn btn-primary', onClick: newProfile }, 'Create a profile'),
          ),
        ),
      );
      return;
    }
    replace(
      list,
      local,
      names.map((n) => profileCard(n, data.profiles[n])),
    );
  }

  replace(
    panel,
    h(
      'div',
      { class: 'toolbar' },
      h(
        'p',
        { class: 'muted grow' },
        'The server default is the cluster of the CLI, of schedules made without one and of every tab that chose ' +
          'none (unless SVC_SSH_* or SVC_TRANSPORT say otherwise); ' +
          'each tab can show another with the switch in the top bar.',
      ),
      h('button', { type: 'button', class: 'btn btn-primary', id: 'new-profile', onClick: newProfile }, 'New profile'),
    ),
    error,
    formBox,
    list,
  );
  await load();
  if (startNew) newProfile();
}

// -- environment ------------------------------------------------------------------------------------------

async function envTab(panel) {
  let entries;
  try {
    entries = await api('/api/config/env');
  } catch (err) {
    replace(panel, alertBox(err));
    return;
  }
  replace(
    panel,
    card(
      'SVC_* variables of the server process',
      entries.length
        ? h(
            'table',
            { class: 'data' },
            h(
              'thead',
              null,
              h('tr', null, h('th', null, 'Variable'), h('th', null, 'Value'), h('th', null, 'Meaning')),
            ),
            h(
              'tbody',
              null,
              entries.map((e) =>
                h(
                  'tr',
                  null,
                  h('td', null, h('code', null, e.name)),
                  h('td', { class: 'wrap' }, h('code', null, e.value)),
                  h('td', { class: 'wrap muted' }, e.description),
                ),
              ),
            ),
          )
        : emptyState(
            'No SVC_* variables set',
            'The server runs on its configuration files alone. Variables such as SVC_SSH_PROFILE or ' +
              'SVC_RESOURCES__PARTITION override them when set before `svc serve` starts.',
          ),
      { cls: 'flush' },
    ),
  );
}
