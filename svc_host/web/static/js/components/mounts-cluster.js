// The cluster whose mounts a page shows (Files, Settings → Projects): named and chosen above the page, one at a
// time, since mounts belong to one SSH profile.
import { h } from '../dom.js';

/** A "Mounts of <cluster>" choice: `names` (the clusters on offer, in the pill's order) and `shown` (the one shown:
 * the tab's cluster, or the server default's while the tab follows it or chose "All clusters"); `onChoose(name)`. */
export function clusterChoice(id, names, shown, onChoose) {
  const select = h(
    'select',
    { id, class: 'cluster-filter', onChange: () => onChoose(select.value) },
    [...new Set([...names, shown])].map((n) => h('option', { value: n, selected: n === shown }, n)),
  );
  return h('div', { class: 'toolbar mounts-cluster' }, h('label', { for: id }, 'Mounts of'), select);
}
