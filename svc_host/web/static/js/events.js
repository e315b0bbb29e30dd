// The dashboard's one live feed: a single EventSource on /api/events shared by every page, and by every tab of
// the browser: one tab (the holder of a Web Lock) keeps the stream and passes its events to the other tabs over
// a BroadcastChannel, so ten open tabs hold one connection (browsers allow six per server over HTTP/1.1; a
// stream per tab would leave the seventh tab waiting forever). When that tab closes another one takes over.
// The server only relays what its monitor tick, workflow engine, sweep orchestrator and resource sampler emit,
// so an open page costs the scheduler nothing. Pages subscribe by event name; callbacks get
// {type, payload, at, id}. A `resync` event (type 'resync', delivered to every subscriber) means events were
// missed (the tab fell behind or reconnected too late): reload what the page shows from the REST API.

const KNOWN_TYPES = [
  'job.status_changed',
  'workflow_run.status_changed',
  'sweep_run.status_changed',
  'resources.sampled',
  'session.status_changed',
  'session.idle_warning',
];
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
let heardLive = false;
let role = null; // 'leader' (holds the stream for every tab), 'follower' (hears the leader) or 'solo'
const channel = typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel('svc-events') : null;

/** An event from the stream: to this tab's pages and, from the leader, to the other tabs. */
function publish(event) {
  if (role === 'leader') channel.postMessage({ kind: 'event', event });
  deliver(event);
}

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
  if (role === 'leader') channel.postMessage({ kind: 'status', live: value });
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
  publish({ type: message.type, payload: body.payload || {}, at: body.at || null, id: message.lastEventId || null });
}

function listen(type) {
  if (!source || listening.has(type)) return;
  source.addEventListener(type, type === 'resync' ? () => publish({ type: 'resync', payload: {} }) : onMessage);
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
    if (resync) publish({ type: 'resync', payload: {} });
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
        if (subscribers.size || role === 'leader') connect();
      }, retryMs);
      retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
    }
  });
}

function onChannel(message) {
  const msg = message.data || {};
  if (role === 'leader') {
    if (msg.kind === 'hello') channel.postMessage({ kind: 'status', live });
    else if (msg.kind === 'reconnect') reconnect();
  } else if (msg.kind === 'event') {
    deliver(msg.event);
  } else if (msg.kind === 'status') {
    // The first "live" this tab hears: its pages loaded before it joined, so they reload once.
    const first = msg.live && !heardLive;
    if (msg.live) heardLive = true;
    setLive(msg.live);
    if (first) deliver({ type: 'resync', payload: {} });
  }
}

/** Join the browser's shared stream (or open one of this tab's own where tabs cannot coordinate). */
function start() {
  if (role) return;
  if (!channel || !navigator.locks?.request) {
    role = 'solo';
    connect();
    return;
  }
  role = 'follower';
  channel.addEventListener('message', onChannel);
  channel.postMessage({ kind: 'hello' });
  navigator.locks.request('svc-events-stream', () => {
    role = 'leader';
    setLive(false);
    connect();
    return new Promise(() => {}); // held while this tab lives; closing it hands the stream to another tab
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
  start();
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
  if (role === 'follower') {
    channel.postMessage({ kind: 'reconnect' });
    return;
  }
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
  if (subscribers.size || role === 'leader') connect();
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
