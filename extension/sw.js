// The service worker: wires the connection, the router and the
// chrome.debugger executor together. Every listener is registered here,
// synchronously at top level, so Chrome can wake the worker for any of
// them; nothing authoritative lives in memory (see connection.js, cdp.js).

import { Router } from './router.js';
import { Connection, connectionState, setBadge, validPort, validToken } from './connection.js';
import * as cdp from './cdp.js';
import * as tabs from './tabs.js';
import { Egress } from './egress.js';
import { CLOSE } from './frame.js';

const ALARM = 'chromegate-redial';

function log(level, msg, fields) {
  const line = '[chromegate] ' + msg;
  if (level === 'error') console.error(line, fields || '');
  else if (level === 'warn') console.warn(line, fields || '');
  else console.log(line, fields || '');
}

// The request boundary of driven tabs (egress.js): its decide frames go
// to the server, and fail closed when they cannot.
const egress = new Egress({
  send: (frame) => conn.sendFrame(frame),
  cdp: (target, method, params) => chrome.debugger.sendCommand(target, method, params),
  dnr: {
    update: (opts) => chrome.declarativeNetRequest.updateSessionRules(opts),
    ids: async () => (await chrome.declarativeNetRequest.getSessionRules()).map((r) => r.id),
  },
  attach: (tabId) => cdp.attach(tabId),
  tab: (tabId) => chrome.tabs.get(tabId),
  tabs: () => chrome.tabs.query({}),
  driven: () => cdp.attachedTabs(),
  close: (tabId) => chrome.tabs.remove(tabId),
  announce: (tabId) => cdp.announce(tabId),
  log,
});
cdp.setHook((tabId) => egress.hook(tabId));
tabs.setHidden((tabId) => egress.hidden(tabId));

const conn = new Connection({
  router: null,
  log,
  onDecision: (f) => egress.onDecision(f),
  // Requests waiting for a decision fail. A connection that ended for
  // good (refused, superseded, token rotated) lets go of its tabs: they
  // are the user's again, no longer driven (nor held by the boundary).
  onDown: (code) => {
    egress.abortAll();
    if (code === CLOSE.UNAUTHORIZED || code === CLOSE.SUPERSEDED || code === CLOSE.ROTATED) releaseAll().catch(() => {});
  },
  onWelcome: (w) => cdp.setScripts(w.scripts),
  // the server learns which tabs are already attached (chrome_status)
  onConnected: async () => {
    for (const id of await cdp.attachedTabs()) if (!egress.hidden(id)) conn.event('attached', { tabId: String(id) });
  },
});
const router = new Router(cdp.handlers, { send: (text) => conn.sendText(text), log });
conn.router = router;
if (router.missing.length) {
  // Loud on purpose: a server calling one of these gets BAD_ARGS.
  console.error('[chromegate] START-UP CHECK FAILED: no handler for ' + router.missing.join(', '));
}
cdp.setEmitter((event, data) => conn.event(event, data));

chrome.debugger.onEvent.addListener((source, method, params) => egress.onEvent(source, method, params));
chrome.debugger.onEvent.addListener(cdp.onEvent);
chrome.debugger.onDetach.addListener((source) => egress.release(source && source.tabId));
chrome.debugger.onDetach.addListener(cdp.onDetach);
chrome.tabs.onCreated.addListener((tab) => {
  egress.onTabCreated(tab).catch((e) => log('warn', 'egress: new tab: ' + e.message));
});
chrome.tabs.onRemoved.addListener((tabId) => egress.onTabRemoved(tabId));
chrome.tabs.onRemoved.addListener((tabId) => cdp.onTabRemoved(tabId));
chrome.downloads.onCreated.addListener(cdp.onDownloadCreated);

chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === ALARM) conn.ensure();
});
chrome.runtime.onStartup.addListener(() => conn.ensure());
chrome.runtime.onInstalled.addListener(() => conn.ensure());

// The popup/options page talks to the worker with messages; only this
// extension's own pages are listened to.
chrome.runtime.onMessage.addListener((msg, sender, reply) => {
  if (sender.id !== chrome.runtime.id || !String(sender.url || '').startsWith(`chrome-extension://${chrome.runtime.id}/`)) return false;
  handleMessage(msg).then(reply, (e) => reply({ error: String((e && e.message) || e) }));
  return true;
});

async function handleMessage(msg) {
  switch (msg && msg.type) {
    case 'state':
      return { ...(await connectionState()), attachedTabs: await cdp.attachedTabs(), missing: router.missing };
    case 'unpair': {
      await releaseAll();
      await conn.unpair();
      return { ok: true };
    }
    case 'reconnect':
      conn.reconnect('asked in the popup');
      return { ok: true };
    case 'pairCode':
      await conn.pair({ port: Number(msg.port), code: String(msg.code || '') }, 'code');
      return { ok: true };
    default:
      return { error: 'unknown message' };
  }
}

// releaseAll detaches from every driven tab.
async function releaseAll() {
  const driven = await cdp.attachedTabs();
  await cdp.detachAll();
  for (const id of driven) egress.release(id);
}

// chromegatePair is how the server pairs over CDP: it evaluates
// chromegatePair({port, token}) in this worker. The promise resolves once
// the pairing is stored (not once connected).
globalThis.chromegatePair = async ({ port, token } = {}) => {
  if (!validPort(port) || !validToken(token)) throw new Error('chromegatePair: want {port: 1..65535, token: 64 hex characters}');
  await conn.pair({ port, token }, 'cdp');
  return true;
};

// chrome.alarms re-dials every 30 s while disconnected (the worker may have
// been stopped in between); created here so a restarted worker has it.
chrome.alarms.create(ALARM, { periodInMinutes: 0.5 }).catch(() => {});
setBadge('idle');
egress.start();
conn.ensure();
