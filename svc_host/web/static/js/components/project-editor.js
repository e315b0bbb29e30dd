// Settings → Projects: the editor of each project's configuration, the project file (`.svc.json`) in a mount's local
// directory, its job defaults and its exclude patterns, read and saved through /api/config/projects/<mount>, for the
// mounts of one cluster's SSH profile (the tab's, named and chosen at the top). The API judges every value (as it
// does for the CLI); each problem it finds is said in words under its field.
import { h, replace } from '../dom.js';
import { api } from '../api.js';
import { card, field, alertBox, showFormError, toast } from '../ui.js';
import { numberOrText, valueAt, withValue } from '../settings-values.js';
import { emptyState } from '../router.js';
import { chooseCluster, clusters, shownCluster } from '../cluster.js';
import { excludeField } from './exclude-field.js';
import { clusterChoice } from './mounts-cluster.js';

/** [dotted path, label, placeholder, number?]: the job defaults a project usually sets. */
const FIELDS = [
  ['resources.partition', 'Partition', "the cluster's default", false],
  ['resources.time_limit', 'Time limit', '1:00:00', false],
  ['resources.nodes', 'Nodes', '1', true],
  ['resources.gpus_per_node', 'GPUs per node', '0', true],
  ['resources.cpus_per_task', 'CPUs per task', '1', true],
  ['resources.memory_per_node', 'Memory per node', '16G', false],
  ['environment.conda', 'Conda environment', 'optional', false],
  ['environment.venv', 'Python venv', 'optional: path on the cluster', false],
  ['log_dir', 'Log directory', 'logs', false],
  ['work_dir', 'Working directory', 'optional', false],
];

/** The Projects panel: the project of each mount of the cluster this tab shows (the tab's cluster, or the server
 * default's while the tab follows it or chose "All clusters"); choosing another cluster here makes it the tab's. */
export async function projectsPanel(panel) {
  replace(panel, h('div', { class: 'loading' }, 'Loading…'));
  let cluster;
  let entries;
  let known;
  try {
    cluster = await shownCluster();
    [entries, known] = await Promise.all([
      api('/api/config/projects', { query: { transport: cluster } }),
      clusters().catch(() => ({ clusters: [] })),
    ]);
  } catch (err) {
    replace(panel, alertBox(err));
    return;
  }
  const choice = clusterChoice(
    'projects-cluster',
    known.clusters.map((t) => t.name),
    cluster,
    (name) => {
      chooseCluster(name);
      projectsPanel(panel);
    },
  );
  const intro = h(
    'p',
    { class: 'muted' },
    "A project file (.svc.json in the mount's local directory) sets job defaults for " +
      "the project's jobs over your user configuration, and exclude patterns its syncs add to the mount's own.",
  );
  if (!entries.length) {
    replace(
      panel,
      choice,
      intro,
      card(
        null,
        emptyState(
          'No project to configure',
          `Projects are the mounts of an SSH profile, and ${cluster} has none. Add a mount to a profile under ` +
            'SSH profiles & mounts, or choose another cluster above.',
          h('a', { class: 'btn', href: '/settings?tab=profiles' }, 'SSH profiles & mounts'),
        ),
      ),
    );
    return;
  }
  replace(panel, choice, intro, ...(await Promise.all(entries.map((entry) => projectEditor(entry, cluster)))));
}

/** A card editing the project of a mount of `cluster` (`{mount_name, local_path, config_path, config_exists}`). */
async function projectEditor(entry, cluster) {
  const on = { transport: cluster };
  const body = h('div', null, h('div', { class: 'loading' }, 'Reading the project file…'));
  const element = card(`Project of mount ${entry.mount_name}`, body);
  element.dataset.project = entry.mount_name;

  async function draw() {
    let project;
    try {
      project = await api(`/api/config/projects/${encodeURIComponent(entry.mount_name)}`, { query: on });
    } catch (err) {
      replace(body, alertBox(err));
      return;
    }
    const error = alertBox(null);
    const inputs = FIELDS.map(([path, , placeholder, number]) => {
      const value = valueAt(project.config, path);
      return [
        path,
        number,
        h('input', {
          name: path,
          placeholder,
          value: value === undefined || value === null ? '' : String(value),
          inputmode: number ? 'numeric' : null,
        }),
      ];
    });
    const excludes = excludeField(project.config.exclude || [], {
      hint: "one rsync pattern per line, added to the mount's own: syncs never upload nor delete what matches",
    });
    const save = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save project');
    const form = h(
      'form',
      {
        class: 'project-form',
        novalidate: true,
        onSubmit: async (event) => {
          event.preventDefault();
          showFormError(form, error, null);
          // what the editor does not show (notifications, plugins, a secret shown <redacted>) is sent back as read
          let config = project.config;
          for (const [path, number, input] of inputs)
            config = withValue(config, path, number ? numberOrText(input.value) : input.value.trim());
          const patterns = excludes.value();
          config = withValue(config, 'exclude', patterns.length ? patterns : null);
          save.disabled = true;
          try {
            await api(`/api/config/projects/${encodeURIComponent(entry.mount_name)}`, {
              method: 'PUT',
              query: on,
              body: config,
            });
            toast(`Project of ${entry.mount_name} saved in ${project.config_path}`, 'ok');
            await draw();
          } catch (err) {
            showFormError(form, error, err);
          } finally {
            save.disabled = false;
          }
        },
      },
      h(
        'p',
        { class: 'muted small' },
        h('code', null, project.config_path),
        project.exists ? " · beside the project's code" : ' · no file yet: saving creates it',
      ),
      h(
        'div',
        { class: 'form-grid' },
        inputs.map(([path, , input]) => field(FIELDS.find((f) => f[0] === path)[1], input)),
      ),
      excludes.element,
      error,
      h('div', { class: 'form-actions' }, save),
    );
    replace(body, form);
  }

  await draw();
  return element;
}
