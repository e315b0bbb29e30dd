// The workflow document the visual builder edits (the JSON the server parsed from the YAML), and the pure rules
// for changing it: adding, connecting, renaming and removing jobs, reading arguments and sweep axes as typed.
// No DOM here: tests/js covers it under node.
import { parseDependency } from '../components/dag-layout.js';

export const SAMPLE = `name: diamond
args:
  message: hello
jobs:
  - name: prepare
    command: "echo {{ message }} from prepare; sleep 2"
  - name: left
    command: [bash, -c, "echo left branch; sleep 3"]
    depends_on: [prepare]
  - name: right
    command: "echo right branch; sleep 3"
    depends_on: [prepare]
  - name: join
    command: "echo both branches done"
    depends_on: [left, right]
`;

export const BLANK = `name: my-workflow
jobs:
  - name: first
    command: "echo hello"
`;

/** A new workflow's file is named after the workflow: what the upload route accepts as a file name. */
export const FILE_NAME = /^[A-Za-z0-9_-]{1,100}$/;

/** The line number a validation message points at ("line 12: ..." / "line 3, column 5: ..."), else null. */
export function errorLine(message) {
  const m = /^line (\d+)/.exec(message);
  return m ? Number(m[1]) : null;
}

/** line -> its messages joined by newlines, for the editor's gutter (messages without a line are left out). */
export function errorsByLine(messages) {
  const lines = new Map();
  for (const msg of messages) {
    const line = errorLine(msg);
    if (line) lines.set(line, lines.has(line) ? `${lines.get(line)}\n${msg}` : msg);
  }
  return lines;
}

/** The graph's jobs: every named job of the document with its dependencies as strings (others are skipped). */
export function jobsOf(doc) {
  if (!doc || !Array.isArray(doc.jobs)) return [];
  return doc.jobs
    .filter((j) => j && typeof j === 'object' && typeof j.name === 'string' && j.name)
    .map((j) => ({ name: j.name, depends_on: Array.isArray(j.depends_on) ? j.depends_on.map(String) : [] }));
}

/** The line under a job's name in the graph: its command (or script), cut to `max` characters. */
export function commandSummary(job, max = 22) {
  const command = job.script_path
    ? `script ${job.script_path}`
    : Array.isArray(job.command)
      ? job.command.join(' ')
      : String(job.command ?? '');
  return command.length > max ? `${command.slice(0, max - 1)}…` : command;
}

/** A matrix or argument value typed as the user meant it: numbers and booleans stay typed, the rest are strings. */
export function typed(text) {
  const t = text.trim();
  if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(t)) return Number(t);
  if (t === 'true' || t === 'false') return t === 'true';
  return t;
}

/** An argument's default as its input field shows it (objects as JSON). */
export function shownDefault(value) {
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** The arguments the user changed from the document's defaults, typed; undefined when none changed. */
export function changedArgs(entered, defaults = {}) {
  const out = {};
  for (const [name, value] of Object.entries(entered)) {
    if (value === undefined) continue;
    if (value !== shownDefault(defaults[name])) out[name] = typed(value);
  }
  return Object.keys(out).length ? out : undefined;
}

/** Sweep axes [{name, values: 'a, b'}] as a matrix {name: [typed values]}; axes without a name are skipped. */
export function matrixOf(axes) {
  const matrix = {};
  for (const axis of axes) {
    if (!axis.name.trim()) continue;
    matrix[axis.name.trim()] = axis.values
      .split(',')
      .filter((v) => v.trim())
      .map(typed);
  }
  return matrix;
}

/** How many runs a sweep of these axes starts (the product of their value counts); 0 without a named axis. */
export function cellCount(axes) {
  const sizes = axes.filter((a) => a.name.trim()).map((a) => a.values.split(',').filter((v) => v.trim()).length);
  return sizes.length ? sizes.reduce((p, n) => p * n, 1) : 0;
}

/** The document's job list, made when missing (the builder can start from an empty or broken document). */
export function docJobs(doc) {
  if (!Array.isArray(doc.jobs)) doc.jobs = [];
  return doc.jobs;
}

/** Does `from` wait for `to`, directly or through others? (Unknown names reach nothing.) */
export function reaches(jobs, from, to) {
  const parents = new Map(jobs.map((j) => [j.name, (j.depends_on || []).map((d) => parseDependency(d).job)]));
  const stack = [from];
  const seen = new Set();
  while (stack.length) {
    const cur = stack.pop();
    if (cur === to) return true;
    if (seen.has(cur)) continue;
    seen.add(cur);
    stack.push(...(parents.get(cur) || []));
  }
  return false;
}

/** Add an independent job named job<n> (the first free n from the count of jobs); returns its name. */
export function addJob(doc) {
  const jobs = docJobs(doc);
  let n = jobs.length + 1;
  while (jobs.some((j) => j.name === `job${n}`)) n += 1;
  jobs.push({ name: `job${n}`, command: 'echo hello' });
  return `job${n}`;
}

/**
 * Make `child` wait for `parent` (afterok). Returns 'added', 'exists' (it waits already, any type), 'unknown'
 * (no such child) or 'cycle' (the parent waits for the child already: refused, the document is unchanged).
 */
export function connect(doc, parent, child) {
  const jobs = docJobs(doc);
  const job = jobs.find((j) => j.name === child);
  if (!job) return 'unknown';
  const deps = (job.depends_on || []).map(String);
  if (deps.some((d) => parseDependency(d).job === parent)) return 'exists';
  if (reaches(jobs, parent, child)) return 'cycle';
  job.depends_on = [...deps, parent];
  return 'added';
}

/** Drop the dependency of `to` on `from` (an empty list goes away); false when `to` is unknown. */
export function disconnect(doc, from, to) {
  const job = docJobs(doc).find((j) => j.name === to);
  if (!job) return false;
  job.depends_on = (job.depends_on || []).filter((d) => parseDependency(d).job !== from);
  if (!job.depends_on.length) delete job.depends_on;
  return true;
}

/** Put `next` in the place of `job`; a new name is followed by every dependency on it (its type kept). */
export function replaceJob(doc, job, next) {
  const jobs = docJobs(doc);
  jobs[jobs.indexOf(job)] = next;
  if (next.name === job.name) return;
  for (const other of jobs) {
    if (!Array.isArray(other.depends_on)) continue;
    other.depends_on = other.depends_on.map((d) => {
      const dep = parseDependency(d);
      if (dep.job !== job.name) return d;
      return String(d).includes(':') ? `${dep.type}:${next.name}` : next.name;
    });
  }
}

/** Remove `job` and every dependency on it (empty lists go away). */
export function removeJob(doc, job) {
  const jobs = docJobs(doc);
  jobs.splice(jobs.indexOf(job), 1);
  for (const other of jobs) {
    if (!Array.isArray(other.depends_on)) continue;
    other.depends_on = other.depends_on.filter((d) => parseDependency(d).job !== job.name);
    if (!other.depends_on.length) delete other.depends_on;
  }
}
