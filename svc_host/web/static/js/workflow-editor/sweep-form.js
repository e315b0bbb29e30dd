// The workflow editor's Sweep panel: a matrix of argument values (one run per combination), how many cells run at
// once, when to stop; Start saves the workflow and opens the sweep's page. Refused options are said at their fields.
import { h, replace } from '../dom.js';
import { api } from '../api.js';
import { alertBox, actionButton, field, showFormError } from '../ui.js';
import { navigate } from '../router.js';
import { cellCount, matrixOf } from './document.js';

/**
 * sweepPanel({box, cluster, editor, args}) -> {draw()}. `editor` as for runPanel; `args()` the run panel's changed
 * arguments, which every cell starts with.
 */
export function sweepPanel({ box, cluster, editor, args }) {
  const sweepState = { axes: [], maxParallel: 2, failFast: false, maxFailures: '' };
  const sweepError = alertBox(null);

  function axisRow(axis, i, updateCount) {
    const nameIn = h('input', {
      type: 'text',
      value: axis.name,
      list: 'sweep-args',
      placeholder: 'argument',
      'aria-label': `axis ${i + 1} argument`,
    });
    const valuesIn = h('input', {
      type: 'text',
      value: axis.values,
      placeholder: '0.1, 0.01, 0.001',
      'aria-label': `axis ${i + 1} values`,
    });
    nameIn.addEventListener('input', () => {
      axis.name = nameIn.value;
      updateCount();
    });
    valuesIn.addEventListener('input', () => {
      axis.values = valuesIn.value;
      updateCount();
    });
    const remove = () => {
      sweepState.axes.splice(i, 1);
      draw();
    };
    return h(
      'div',
      { class: 'matrix-row' },
      nameIn,
      valuesIn,
      h('button', { type: 'button', class: 'btn btn-sm', 'aria-label': `remove axis ${i + 1}`, onClick: remove }, '✕'),
    );
  }

  function draw() {
    const argNames = Object.keys(editor.state.doc?.args || {});
    if (!sweepState.axes.length) sweepState.axes.push({ name: argNames[0] || '', values: '' });
    const count = h('span', { class: 'cell-count' });
    const updateCount = () => {
      const n = cellCount(sweepState.axes);
      count.textContent = `${n} cell${n === 1 ? '' : 's'}`;
    };
    const rows = sweepState.axes.map((axis, i) => axisRow(axis, i, updateCount));
    const parallel = h('input', {
      type: 'number',
      name: 'max_parallel',
      dataset: { field: 'sweep.max_parallel' },
      min: 1,
      max: 1000,
      value: sweepState.maxParallel,
    });
    parallel.addEventListener('input', () => {
      sweepState.maxParallel = Number(parallel.value) || 1;
    });
    const failFast = h('input', { type: 'checkbox', checked: sweepState.failFast });
    failFast.addEventListener('change', () => {
      sweepState.failFast = failFast.checked;
    });
    const maxFailures = h('input', {
      type: 'number',
      name: 'max_failures',
      dataset: { field: 'sweep.max_failures' },
      min: 0,
      max: 1000,
      value: sweepState.maxFailures,
      placeholder: 'never stop',
    });
    maxFailures.addEventListener('input', () => {
      sweepState.maxFailures = maxFailures.value;
    });
    const startBtn = actionButton(`Start sweep on ${cluster.value()}`, start, {
      cls: 'btn btn-primary',
      errorBox: sweepError,
      busyLabel: 'Starting…',
    });
    startBtn.disabled = !editor.state.valid;
    const addAxis = () => {
      sweepState.axes.push({ name: '', values: '' });
      draw();
    };
    replace(
      box,
      h(
        'p',
        { class: 'hint' },
        'Run the workflow once per combination of argument values (the matrix); each cell is a run.',
      ),
      h(
        'datalist',
        { id: 'sweep-args' },
        argNames.map((n) => h('option', { value: n })),
      ),
      h(
        'div',
        { class: 'matrix' },
        h(
          'div',
          { class: 'matrix-row matrix-head' },
          h('span', null, 'Argument'),
          h('span', null, 'Values (comma separated)'),
          h('span'),
        ),
        rows,
      ),
      h('button', { type: 'button', class: 'btn btn-sm', onClick: addAxis }, '+ Add axis'),
      h(
        'div',
        { class: 'form-grid sweep-options' },
        cluster.element,
        field('Max parallel cells', parallel),
        field('Max failures', maxFailures, { hint: 'once more cells failed, the rest is cancelled' }),
        h('label', { class: 'check' }, failFast, 'Fail fast (stop launching cells after the first failure)'),
      ),
      h('div', { class: 'form-actions' }, startBtn, count),
      sweepError,
    );
    updateCount();
  }

  async function start() {
    const matrix = matrixOf(sweepState.axes);
    if (!Object.keys(matrix).length) throw new Error('Give at least one argument and its values');
    const name = await editor.ensureSaved();
    const spec = { matrix, max_parallel: sweepState.maxParallel, fail_fast: sweepState.failFast };
    if (String(sweepState.maxFailures).trim() !== '') spec.max_failures = Number(sweepState.maxFailures);
    showFormError(box, sweepError, null);
    let sweep;
    try {
      sweep = await api(`/api/workflows/${encodeURIComponent(name)}/run`, {
        method: 'POST',
        body: { args: args(), sweep: spec, transport: cluster.value() },
      });
    } catch (err) {
      if (!err.fields?.length) throw err;
      showFormError(box, sweepError, err); // each refused option said next to its field
      return;
    }
    navigate(`/sweeps/${sweep.id}`);
  }

  return { draw };
}
