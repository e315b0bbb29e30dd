// The "Exclude patterns" field of the Settings editors (a mount's own, a project file's): rsync patterns syncs
// never upload nor delete, one per line, as the API takes them (`exclude`, a list).
import { h } from '../dom.js';
import { field } from '../ui.js';
import { patternLines } from '../settings-values.js';

/** `{element, value()}`: a labelled textarea named `exclude` (the API's field, so its errors show under it). */
export function excludeField(patterns, { hint = null } = {}) {
  const input = h(
    'textarea',
    {
      name: 'exclude',
      rows: String(Math.min(8, Math.max(3, patterns.length + 1))),
      spellcheck: 'false',
      class: 'mono',
      placeholder: 'data/\n*.ckpt\n/checkpoints/**',
    },
    patterns.join('\n'),
  );
  const element = field('Exclude patterns', input, {
    hint: hint || 'one rsync pattern per line: syncs never upload nor delete what matches (data/, *.ckpt)',
  });
  return { element, value: () => patternLines(input.value) };
}
