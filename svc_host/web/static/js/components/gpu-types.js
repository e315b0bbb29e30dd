// GPUs per type out of a resource snapshot's `gpu_types` ([{type, total, in_use, available}], sorted by the
// server, untyped last). A snapshot whose GPUs all lack a type shows no line: its totals say it all already.
// Pure text (no DOM), for the Overview, the Resources page, the All-clusters blocks and a job's GPUs.

/** "a100: 1 of 2 free · v100: 2 of 2 free", or '' when no GPU has a type. */
export function gpuTypesText(types) {
  const list = (types || []).filter((t) => t.total > 0);
  if (!list.some((t) => t.type)) return '';
  return list.map((t) => `${t.type ?? 'untyped'}: ${t.available} of ${t.total} free`).join(' · ');
}

/** The types a job may ask for on a snapshot's nodes (its typed entries), with their free count. */
export function gpuTypeChoices(snapshot) {
  return (snapshot?.gpu_types || []).filter((t) => t.type && t.total > 0);
}

/** Per-type entries of several snapshots (one per Slurm cluster) summed: a100 of two clusters is one line. */
export function sumGpuTypes(lists) {
  const sums = new Map();
  for (const t of lists.flat()) {
    const key = t.type ?? null;
    const sum = sums.get(key) || { type: key, total: 0, in_use: 0, available: 0 };
    sum.total += t.total;
    sum.in_use += t.in_use;
    sum.available += t.available;
    sums.set(key, sum);
  }
  return [...sums.values()].sort(
    (a, b) => (a.type === null) - (b.type === null) || String(a.type).localeCompare(String(b.type)),
  );
}

/** "same nodes as gpu, multi" for a partition whose nodes other partitions hold too (`shares_nodes_with`): its GPUs
 * and their use are theirs too, so the partitions' figures do not add up; '' for none. */
export function sharedNodesText(snapshot) {
  const others = snapshot?.shares_nodes_with || [];
  return others.length ? `same nodes as ${others.join(', ')}` : '';
}

/** Why a partition's figures repeat another's (the title of `sharedNodesText`). */
export const SHARED_NODES_TITLE =
  'These GPUs are those of the partitions named: their use shows in each, and the whole ' +
  'cluster counts each node once.';

/** A job's GPUs with their types (`gpu_types` of the jobs list): "1 a100", "2 a100 + 1 v100", "2" when no type is
 * known. */
export function jobGpusText(gpus, types) {
  const typed = Object.entries(types || {}).filter(([type, n]) => type && n > 0);
  if (!typed.length) return String(gpus ?? 0);
  const rest = (gpus ?? 0) - typed.reduce((acc, [, n]) => acc + n, 0);
  return [...typed.map(([type, n]) => `${n} ${type}`), rest > 0 ? `${rest} untyped` : null].filter(Boolean).join(' + ');
}
