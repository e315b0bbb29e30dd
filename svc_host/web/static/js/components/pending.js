// Why a pending job waits (GET /api/jobs/{id}/pending) and whether a job not yet submitted would fit
// (POST /api/jobs/test): Slurm's answers as the sentences the API writes, with the start estimate.
import { h, replace, fmtTime } from '../dom.js';
import { api, errorText } from '../api.js';

function estimateLine(estimate, { none }) {
  if (!estimate?.at) return h('div', { class: 'muted' }, none);
  const where = estimate.nodes ? ` on ${estimate.nodes}` : '';
  return h('div', null, 'Expected start: ', h('strong', { title: estimate.at }, fmtTime(estimate.at)), where);
}

/** The "Why pending" box of a job page (`where`: the job's `{transport}`): `load()` (re)reads it; hidden while the
 * job is not pending. */
export function pendingBox(jobId, where) {
  const element = h('div', { class: 'alert alert-warn pending-why', id: 'job-pending', role: 'status', hidden: true });
  async function load() {
    let answer;
    try {
      answer = await api(`/api/jobs/${jobId}/pending`, { query: where });
    } catch (err) {
      element.hidden = false;
      element.className = 'alert alert-error pending-why';
      element.textContent = `Why it waits is unknown: ${errorText(err)}`;
      return;
    }
    element.hidden = !answer.pending;
    if (!answer.pending) return;
    element.className = `alert ${answer.needs_action ? 'alert-error' : 'alert-warn'} pending-why`;
    replace(
      element,
      h(
        'div',
        { class: 'pending-title' },
        answer.needs_action ? 'Pending — it will not start as it is' : 'Pending',
        answer.reason ? h('span', { class: 'mono pending-reason' }, answer.reason) : null,
      ),
      h('p', { id: 'job-pending-text' }, answer.explanation),
      answer.needs_action && !answer.start_estimate
        ? null
        : estimateLine(answer.start_estimate, { none: 'Slurm has no start estimate for it yet.' }),
    );
  }
  return { element, load };
}

/** The submit form's "Will it fit?" answer box: `show(script, name, where)` asks sbatch --test-only on the
 * cluster `where` (`{transport}`) through the API. */
export function fitBox() {
  const element = h('div', { class: 'alert fit-answer', id: 'fit-answer', role: 'status', hidden: true });
  async function show(script, name, where) {
    element.hidden = false;
    element.className = 'alert alert-info fit-answer';
    element.textContent = 'Asking Slurm…';
    try {
      const answer = await api('/api/jobs/test', {
        method: 'POST',
        query: where,
        body: { name, script_content: script },
      });
      element.className = `alert ${answer.fits ? 'alert-ok' : 'alert-error'} fit-answer`;
      replace(
        element,
        h('p', { id: 'fit-answer-text' }, answer.explanation),
        answer.fits
          ? estimateLine(answer.start_estimate, { none: 'Nothing was submitted.' })
          : h('div', { class: 'muted' }, 'Nothing was submitted.'),
      );
    } catch (err) {
      element.className = 'alert alert-error fit-answer';
      element.textContent = errorText(err);
    }
  }
  return { element, show };
}
