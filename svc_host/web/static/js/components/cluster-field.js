// The "Cluster" field of the submit, run, sweep and schedule forms: which cluster the job, run, sweep or schedule
// goes to, the tab's cluster first, changeable here without changing the tab's.
import { h } from '../dom.js';
import { field } from '../ui.js';
import { byClusterOrder, clusterLabel, clusters, shownCluster } from '../cluster.js';

/** A choice of the field: short enough for a form's narrowest column (the pill's "local · this machine's Slurm" is
 * cut off there at 1280 px); the pill's words are the option's title. */
const choiceLabel = (n) => (n === 'local' ? 'local · this machine' : n);

/** `{element, value(), name()}`: a labelled select of the clusters on offer; `onChange(name)` on each change. */
export async function clusterField({ onChange = null, hint = null, name = 'cluster' } = {}) {
  const [known, shown] = await Promise.all([clusters(), shownCluster()]);
  const names = known.clusters.map((t) => t.name);
  if (!names.includes(shown)) names.push(shown);
  const select = h(
    'select',
    {
      name,
      class: 'cluster-input',
      title: clusterLabel(shown),
      onChange: () => {
        select.title = clusterLabel(select.value); // a long profile name the field cuts off is whole on hover
        if (onChange) onChange(select.value);
      },
    },
    names.map((n) => h('option', { value: n, selected: n === shown, title: clusterLabel(n) }, choiceLabel(n))),
  );
  const element = field('Cluster', select, { hint: hint || "where it runs; the top bar sets this tab's cluster" });
  return { element, value: () => select.value };
}

/** The "Cluster" filter of a list (runs, sweeps, history, sessions): "All clusters" or one of `names` (and `value`,
 * shown even where no row has it), in the pill's order; `onChange(name|'')`. */
export function clusterFilter(names, value, onChange) {
  const select = h(
    'select',
    { class: 'cluster-filter', 'aria-label': 'Show the cluster', onChange: () => onChange(select.value) },
    h('option', { value: '' }, 'All clusters'),
    [...new Set([...names, ...(value ? [value] : [])])]
      .sort(byClusterOrder)
      .map((n) => h('option', { value: n, selected: n === value }, n)),
  );
  return select;
}
