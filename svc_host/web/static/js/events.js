// The dashboard's one live feed: a single EventSource on /api/events shared by every page of the tab.
// The server only relays what its monitor tick, workflow engine, sweep orchestrator and resource sampler emit,
// so an open page costs the scheduler nothing. Pages subscribe by event name; callbacks get
// {type, payload, at, id}. A `resync` event (type 'resync', delivered to every subscriber) means events were
// missed (the tab fell behind or reconnected too late): reload what the page shows from the REST API.

const KNOWN_TYPES = ['job.status_changed', 'workflow_run.status_changed', 'sweep_run.status_changed', 'resources.sampled'];
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30000;

const subscribers = new Set(); // {types: Set|null, callback}
const statusListeners = new Set();
const listening = new Set(); // event names the current EventSource has a listener for
let source = null;
let live = false;
let everOpened = false;
let missedWhileDown = false; // a new EventSource cannot send Last-Event-ID: the page must reload once it opens
let retryMs = RETRY_MIN_MS;
let retryTimer = null;

function deliver(event) {
  for (const sub of [...subscribers]) {
    if (event.type !== 'resync' && sub.types && !sub.types.has(event.type)) continue;
    try {
      sub.callback(event);
    } catch (err) {
      console.error('event subscriber failed', err);
    }
  }
}

function setLive(value) {
  if (live === value) return;
  live = value;
  document.documentElement.dataset.live = value ? 'on' : 'off';
  for (const listener of [...statusListeners]) listener(value);
}

function onMessage(message) {
  let body;
  try {
    body = JSON.parse(message.data);
  } catch {
    return;
  }
  deliver({ type: message.type, payload: body.payload || {}, at: body.at || null, id: message.lastEventId || null });
}

function listen(type) {
  if (!source || listening.has(type)) return;
  source.addEventListener(type, type === 'resync' ? () => deliver({ type: 'resync', payload: {} }) : onMessage);
  listening.add(type);
}

function connect() {
  if (source || retryTimer) return;
  source = new EventSource('/api/events');
  listening.clear();
  listen('resync');
  for (const type of KNOWN_TYPES) listen(type);
  for (const sub of subscribers) for (const type of sub.types || []) listen(type);
  source.addEventListener('open', () => {
    retryMs = RETRY_MIN_MS;
    // Pages draw from the REST API before the stream is open: what changed meanwhile (or while it was down,
    // since a new EventSource cannot send Last-Event-ID) is only known by reloading.
    const resync = !everOpened || missedWhileDown;
    everOpened = true;
    missedWhileDown = false;
    setLive(true);
    if (resync) deliver({ type: 'resync', payload: {} });
  });
  source.addEventListener('error', () => {
    setLive(false);
    // CONNECTING: the browser retries by itself (with Last-Event-ID, so the server replays or says resync).
    // CLOSED (a non-stream answer such as 401, or the server gone): start over after a growing pause.
    if (source && source.readyState === EventSource.CLOSED) {
      source.close();
      source = null;
      missedWhileDown = everOpened;
      retryTimer = setTimeout(() => {
        retryTimer = null;
        if (subscribers.size) connect();
      }, retryMs);
      retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
    }
  });
}

/**
 * subscribe(types, callback) -> unsubscribe. `types`: an array of event names, a single name, or null/'*' for
 * every event. `callback({type, payload, at, id})` is also called with {type: 'resync'} whenever the page should
 * reload its data. Opens the shared stream on first use.
 */
export function subscribe(types, callback) {
  const names = types === null || types === undefined || types === '*' ? null : new Set([types].flat());
  const sub = { types: names, callback };
  subscribers.add(sub);
  connect();
  for (const type of names || []) listen(type);
  return () => subscribers.delete(sub);
}

/** Whether the stream is open right now (pages may say "live" or "reconnecting…"). */
export function isLive() {
  return live;
}

/** onStatus(callback) -> unsubscribe: `callback(isLive)` now and on every change. */
export function onStatus(callback) {
  statusListeners.add(callback);
  callback(live);
  return () => statusListeners.delete(callback);
}

/** Reconnect at once (e.g. after logging in again) instead of waiting for the next retry. */
export function reconnect() {
  if (retryTimer) {
    clearTimeout(retryTimer);
    retryTimer = null;
  }
  if (source) {
    source.close();
    source = null;
  }
  missedWhileDown = everOpened;
  setLive(false);
  retryMs = RETRY_MIN_MS;
  if (subscribers.size) connect();
}

/** A small element that says whether the page is live: "● live" or "○ reconnecting…". Call its remove()
 * (or the returned element's `stop()`) when the page goes. */
export function liveIndicator() {
  const el = document.createElement('span');
  el.className = 'live-indicator';
  el.setAttribute('role', 'status');
  const stop = onStatus((on) => {
    el.classList.toggle('is-live', on);
    el.textContent = on ? 'live' : 'reconnecting…';
    el.title = on ? 'Updates arrive as they happen (server-sent events)' : 'The event stream is down; retrying';
  });
  el.stop = stop;
  return el;
}
