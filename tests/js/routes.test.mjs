// The dashboard's routes (router.js): which page a path opens, with its parameters decoded. The router reads the
// address of the page on screen when it loads, so the test gives it one first.
import assert from 'node:assert/strict';
import { test } from 'node:test';

globalThis.location ??= { pathname: '/', search: '' };
const { ROUTES, match } = await import('../../svc_host/web/static/js/router.js');

const opened = (path) => {
  const found = match(path);
  return found && { page: found.route.page, title: found.route.title, params: found.params };
};

test('every listed path opens its page, with or without a trailing slash', () => {
  for (const route of ROUTES.filter((r) => !r.path.includes(':'))) {
    assert.equal(opened(route.path).title, route.title, route.path);
    if (route.path !== '/') assert.equal(opened(`${route.path}/`).title, route.title, `${route.path}/`);
  }
});

test('a job, run or sweep path carries its id; a workflow its decoded name', () => {
  assert.deepEqual(opened('/jobs/109'), { page: 'job', title: 'Job', params: { id: '109' } });
  assert.deepEqual(opened('/runs/59b0ed31'), { page: 'run', title: 'Workflow run', params: { id: '59b0ed31' } });
  assert.deepEqual(opened('/sweeps/7').params, { id: '7' });
  assert.deepEqual(opened('/workflows/my%20flow').params, { name: 'my flow' });
});

test('"new" is the new-workflow page, not a workflow named new', () => {
  assert.equal(opened('/workflows/new').title, 'New workflow');
  assert.deepEqual(opened('/workflows/new').params, {});
});

test('unknown paths and deeper paths open nothing', () => {
  assert.equal(opened('/nope'), null);
  assert.equal(opened('/jobs/109/extra'), null);
  assert.equal(opened('/jobs//'), null);
});
