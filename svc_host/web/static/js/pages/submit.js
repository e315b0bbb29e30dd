// Submit: a resource form (partition and GPU type pickers from /api/resources) whose rendered script previews as
// you type, or a pasted script. The rendered preview is exactly what is submitted.
import { h, replace } from '../dom.js';
import { api, errorText } from '../api.js';
import { card, field, alertBox, showError, showFormError } from '../ui.js';
import { navigate } from '../router.js';
import { fitBox } from '../components/pending.js';
import { gpuTypeChoices } from '../components/gpu-types.js';
import { clusterField } from '../components/cluster-field.js';
import { jobHref } from '../cluster.js';

export async function render(root, _params, query) {
  const cluster = await clusterField({
    onChange: () => {
      drawSubmitLabel();
      loadPartitions();
    },
  });
  const where = () => ({ transport: cluster.value() });
  const [config, partitions, whole] = await Promise.all([
    api('/api/config').catch(() => null),
    api('/api/resources', { query: where() }).catch(() => []),
    api('/api/resources/total', { query: where() }).catch(() => null),
  ]);
  const res = config?.resources || {};
  const envCfg = config?.environment || {};

  const mode = { value: query.mode === 'script' ? 'script' : 'form' };
  const name = h('input', { name: 'name', value: query.name || 'job', required: true, maxlength: '200' });
  const partition = h('select', { name: 'partition' });
  let shown = { partitions, whole }; // the chosen cluster's partitions and its whole-cluster snapshot
  function drawPartitions(list) {
    const chosen = partition.value || res.partition;
    replace(
      partition,
      h('option', { value: '' }, 'cluster default'),
      list.map((p) =>
        h(
          'option',
          { value: p.partition, selected: p.partition === chosen },
          `${p.partition} — ${p.gpus_available}/${p.total_gpus} GPUs free`,
        ),
      ),
    );
  }
  drawPartitions(partitions);
  // The GPU types of the chosen partition (of the whole cluster for the cluster default); "any" sends no type.
  const gpuType = h('select', { name: 'gpu_type' });
  const gpuTypeHint = h('span');
  function drawGpuTypes() {
    const chosen = gpuType.value;
    const choices = gpuTypeChoices(
      partition.value ? shown.partitions.find((p) => p.partition === partition.value) : shown.whole,
    );
    replace(
      gpuType,
      h('option', { value: '' }, 'any'),
      choices.map((t) =>
        h('option', { value: t.type, selected: t.type === chosen }, `${t.type} — ${t.available}/${t.total} free`),
      ),
    );
    gpuType.disabled = !choices.length;
    gpuTypeHint.textContent = choices.length ? 'renders --gres=gpu:TYPE:N' : 'these GPUs have no type';
  }
  partition.addEventListener('change', drawGpuTypes);
  drawGpuTypes();
  let partitionSeq = 0;
  async function loadPartitions() {
    const seq = ++partitionSeq;
    const [list, total] = await Promise.all([
      api('/api/resources', { query: where() }).catch(() => []),
      api('/api/resources/total', { query: where() }).catch(() => null),
    ]);
    if (seq !== partitionSeq) return;
    shown = { partitions: list, whole: total };
    drawPartitions(list);
    drawGpuTypes();
  }
  const nodes = h('input', { name: 'nodes', type: 'number', min: '1', value: String(res.nodes || 1) });
  const gpus = h('input', { name: 'gpus_per_node', type: 'number', min: '0', value: String(res.gpus_per_node || 0) });
  const cpus = h('input', { name: 'cpus_per_task', type: 'number', min: '1', value: String(res.cpus_per_task || 1) });
  const time = h('input', { name: 'time_limit', placeholder: 'e.g. 4:00:00', value: res.time_limit || '' });
  const memory = h('input', { name: 'memory_per_node', placeholder: 'e.g. 16G', value: res.memory_per_node || '' });
  const command = h(
    'textarea',
    { name: 'command', rows: '3', placeholder: 'python train.py --lr 3e-4', spellcheck: 'false' },
    query.command || '',
  );
  const script = h('textarea', {
    name: 'script',
    rows: '14',
    spellcheck: 'false',
    placeholder: '#!/bin/bash\n#SBATCH --gres=gpu:1\npython train.py',
  });
  const envKind = h(
    'select',
    { name: 'env_kind' },
    h('option', { value: '' }, 'none'),
    h('option', { value: 'conda', selected: !!envCfg.conda }, 'conda environment'),
    h('option', { value: 'venv', selected: !envCfg.conda && !!envCfg.venv }, 'Python venv'),
    h(
      'option',
      { value: 'container', selected: !envCfg.conda && !envCfg.venv && !!envCfg.container },
      'container image',
    ),
  );
  const envValue = h('input', {
    name: 'env_value',
    dataset: { field: 'environment.conda environment.venv environment.container' },
    placeholder: 'name, path or image',
    value: envCfg.conda || envCfg.venv || envCfg.container || '',
  });
  // Configured variables come back redacted, so they are named in the hint, never copied into the job.
  const configuredVars = Object.keys(envCfg.env_vars || {});
  const envVars = h('textarea', {
    name: 'env_vars',
    rows: '3',
    spellcheck: 'false',
    placeholder: 'KEY=value, one per line',
  });
  const workDir = h('input', {
    name: 'work_dir',
    placeholder: 'cluster directory (default: home)',
    value: config?.work_dir || '',
  });
  const formError = alertBox(null);
  const preview = h('pre', { class: 'script', id: 'script-preview' }, '');
  const previewError = alertBox(null);
  const submitBtn = h('button', { type: 'submit', class: 'btn btn-primary', id: 'submit-job' });
  const drawSubmitLabel = () => {
    submitBtn.textContent = `Submit to ${cluster.value()}`;
  };
  drawSubmitLabel();
  const fit = fitBox();
  const fitBtn = h(
    'button',
    {
      type: 'button',
      class: 'btn',
      id: 'test-fit',
      onClick: async () => {
        showError(formError, null);
        fitBtn.disabled = true;
        try {
          await fit.show((await renderPreview()).script, name.value.trim() || 'job', where());
        } catch (err) {
          showError(formError, errorText(err));
        } finally {
          fitBtn.disabled = false;
        }
      },
    },
    'Will it fit?',
  );

  const modeButtons = ['form', 'script'].map((m) =>
    h(
      'button',
      {
        type: 'button',
        dataset: { mode: m },
        onClick: () => {
          mode.value = m;
          drawMode();
          schedulePreview();
        },
      },
      m === 'form' ? 'Command + resources' : 'Paste a script',
    ),
  );
  const formOnly = h(
    'div',
    { class: 'form-sections' },
    h(
      'div',
      { class: 'form-grid' },
      field('Partition', partition, {
        hint: partitions.length ? 'free GPUs as of now' : 'the scheduler did not list partitions',
      }),
      field('Nodes', nodes),
      field('GPUs per node', gpus),
      field('GPU type', gpuType, { hint: gpuTypeHint }),
      field('CPUs per task', cpus),
      field('Time limit', time, { hint: 'minutes, H:MM:SS or D-HH:MM:SS' }),
      field('Memory per node', memory, { hint: 'e.g. 16G, 500M' }),
    ),
    field('Command', command, { hint: 'run with bash in the work directory' }),
    h(
      'div',
      { class: 'form-grid' },
      field('Environment', envKind),
      field('Name, path or image', envValue),
      field('Work directory', workDir),
    ),
    field('Environment variables', envVars, {
      hint: configuredVars.length
        ? `KEY=value per line. Your configuration also names ${configuredVars.join(', ')}: ` +
          'values are not shown here, so add them to this job if it needs them.'
        : 'KEY=value per line; names must be shell identifiers',
    }),
  );
  const scriptOnly = h(
    'div',
    null,
    field('Batch script', script, { hint: 'its own #SBATCH lines win over the resource fields' }),
  );

  function drawMode() {
    for (const b of modeButtons) {
      b.classList.toggle('active', b.dataset.mode === mode.value);
      b.setAttribute('aria-pressed', String(b.dataset.mode === mode.value));
    }
    formOnly.hidden = mode.value !== 'form';
    scriptOnly.hidden = mode.value !== 'script';
  }

  function parseEnvVars() {
    const out = {};
    for (const line of envVars.value.split('\n')) {
      const t = line.trim();
      if (!t || t.startsWith('#')) continue;
      const i = t.indexOf('=');
      if (i < 1) throw new Error(`environment variable line "${t}" is not KEY=value`);
      out[t.slice(0, i).trim()] = t.slice(i + 1);
    }
    return out;
  }

  function definition() {
    const def = { name: name.value.trim() || 'job' };
    if (mode.value === 'script') {
      def.script = script.value;
      return def;
    }
    def.command = command.value.trim();
    def.resources = {
      nodes: Number(nodes.value) || 1,
      gpus_per_node: Number(gpus.value) || 0,
      gpu_type: gpuType.value || null,
      cpus_per_task: Number(cpus.value) || 1,
      partition: partition.value || null,
      time_limit: time.value.trim() || null,
      memory_per_node: memory.value.trim() || null,
    };
    const environment = { env_vars: parseEnvVars() };
    if (envKind.value && envValue.value.trim()) environment[envKind.value] = envValue.value.trim();
    def.environment = environment;
    if (workDir.value.trim()) def.work_dir = workDir.value.trim();
    if (config?.log_dir) def.log_dir = config.log_dir;
    return def;
  }

  async function renderPreview() {
    const def = definition();
    if ((mode.value === 'form' && !def.command) || (mode.value === 'script' && !def.script.trim())) {
      throw new Error(mode.value === 'form' ? 'Enter the command to run.' : 'Paste a batch script.');
    }
    return api('/api/scripts/preview', { method: 'POST', body: def });
  }

  let previewTimer = null;
  let previewSeq = 0;
  function schedulePreview() {
    clearTimeout(previewTimer);
    previewTimer = setTimeout(async () => {
      const seq = ++previewSeq;
      if (mode.value === 'form' ? !command.value.trim() : !script.value.trim()) {
        preview.textContent =
          mode.value === 'form'
            ? '# The batch script appears here as you type the command.'
            : '# Paste a batch script on the left.';
        showFormError(form, previewError, null);
        return;
      }
      try {
        const rendered = await renderPreview();
        if (seq !== previewSeq) return;
        preview.textContent = rendered.script;
        showFormError(form, previewError, null);
      } catch (err) {
        if (seq !== previewSeq) return;
        showFormError(form, previewError, err, { focus: false }); // the API's checks, next to their fields as one types
      }
    }, 350);
  }

  const form = h(
    'form',
    {
      class: 'submit-form',
      novalidate: true,
      onInput: schedulePreview,
      onChange: schedulePreview,
      onSubmit: async (event) => {
        event.preventDefault();
        showError(formError, null);
        submitBtn.disabled = true;
        submitBtn.textContent = 'Submitting…';
        try {
          const rendered = await renderPreview();
          const target = cluster.value();
          const job = await api('/api/jobs', {
            method: 'POST',
            query: { transport: target },
            body: { name: name.value.trim() || 'job', script_content: rendered.script },
          });
          navigate(jobHref(target, job.job_id));
        } catch (err) {
          showFormError(form, formError, err);
          if (!formError.hidden) formError.scrollIntoView({ block: 'nearest' });
        } finally {
          submitBtn.disabled = false;
          drawSubmitLabel();
        }
      },
    },
    h(
      'div',
      { class: 'toolbar' },
      h('div', { class: 'segmented', role: 'group', 'aria-label': 'How to give the job' }, modeButtons),
    ),
    h('div', { class: 'form-grid' }, field('Job name', name), cluster.element),
    formOnly,
    scriptOnly,
    formError,
    fit.element,
    h(
      'div',
      { class: 'form-actions' },
      submitBtn,
      fitBtn,
      h('span', { class: 'muted' }, 'The script on the right is exactly what is submitted.'),
    ),
  );

  replace(
    root,
    h(
      'div',
      { class: 'grid grid-2' },
      card('Job', form),
      card('Rendered script', [previewError, preview], { cls: 'sticky-card' }),
    ),
  );
  drawMode();
  if (!partitions.length) showError(formError, null);
  schedulePreview();
  name.focus();
  return () => clearTimeout(previewTimer);
}
