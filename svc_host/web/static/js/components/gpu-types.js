// GPUs per type out of a resource snapshot's `gpu_types` ([{type, total, in_use, available}], sorted by the
// server, untyped last). A snapshot whose GPUs all lack a type shows no line: its totals say it all already.

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
