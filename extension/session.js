// The chrome.debugger side of the executor: one debugger session per tab,
// attached on first use and put under the request boundary (egress.js)
// before it is used; the tab's state fed by the debugger's events; the
// real CDP sender every TabState is given; and running a call on a tab
// (onTab), which the handlers (cdp.js) are written in.
//
// Nothing here is authoritative in memory: the per-tab cache (attachment,
// main frame, lifecycle, the isolated world's context) is rebuilt from the
// browser after a service-worker restart; what must survive one is in the
// store (store.js), on chrome.storage.session.

import { fail, WireError } from './errors.js';
import * as tabs from './tabs.js';
import { NetLogs } from './netlog.js';
import { ConsoleLogs } from './consolelog.js';
import { boundEvent } from './webmcp.js';
import { TabState, csend } from './tabstate.js';
import { onTargetEvent, restoreFrames } from './frames.js';
import { Store } from './store.js';
import { bounded, sleep } from './deadline.js';
import { settle } from './navigation.js';
import { inWorld, fnDecl } from './world.js';
import * as dialogs from './dialogs.js';

// store is the extension's storage, on chrome.storage.session.
export const store = new Store({
  get: (key) => chrome.storage.session.get(key),
  set: (items) => chrome.storage.session.set(items),
});

// setScripts keeps the server's page scripts (welcome.scripts).
export function setScripts(scripts) {
  return store.setScripts(scripts);
}

const CDP_VERSION = '1.3';

export const states = new Map();

export function state(tabId) {
  let st = states.get(tabId);
  if (!st) {
    st = new TabState(tabId, {
      send: (method, params) => send(tabId, method, params),
      sendSession: (sessionId, method, params) => sendSession(tabId, sessionId, method, params),
      store,
    });
    states.set(tabId, st);
  }
  return st;
}

let emit = () => {};

// The network log of every attached tab (netlog.js), fed by onEvent.
export const netlogs = new NetLogs();

// The console log of every attached tab (consolelog.js), fed by onEvent.
export const consolelogs = new ConsoleLogs();

// setEmitter sets where events (tabClosed, detached) go: the connection.
export function setEmitter(fn) {
  emit = fn;
}

// attachedHooks run once the debugger attached to a tab, before any call
// uses it (emulate.js sends the session's emulation).
const attachedHooks = [];

// onAttached adds fn(tabId) to what runs as the debugger attaches.
export function onAttached(fn) {
  attachedHooks.push(fn);
}

// leftBlankHooks run when a driven tab's first page commits after its
// initial empty document (a new tab's or a popup's about:blank).
const leftBlankHooks = [];

// onLeftBlank adds fn(tabId) to what runs as that first page commits.
export function onLeftBlank(fn) {
  leftBlankHooks.push(fn);
}

let hook = async () => {
  throw new Error('no request boundary is set');
};

// setHook sets what puts a tab under the request boundary (egress.js) the
// moment the debugger attaches, before the tab is used.
export function setHook(fn) {
  hook = fn;
}

// attachedTabs lists the tabs this extension's debugger is attached to.
export async function attachedTabs() {
  const list = await store.attached();
  let targets = [];
  try {
    targets = await chrome.debugger.getTargets();
  } catch {
    return list;
  }
  const live = new Set(targets.filter((t) => t.attached && t.tabId !== undefined).map((t) => t.tabId));
  return list.filter((id) => live.has(id));
}

// send runs one CDP command on a tab. Errors keep the protocol's message;
// a lost attachment is DETACHED and a closed tab TAB_NOT_FOUND.
//
// Right after a cross-document commit Chrome may answer "Not attached to
// an active page" while it moves the session to the new document (no
// onDetach follows): that answer is retried for up to a second.
export async function send(tabId, method, params = {}) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await chrome.debugger.sendCommand({ tabId }, method, params);
    } catch (e) {
      const msg = String((e && e.message) || e);
      if (/Not attached to an active page/i.test(msg) && attempt < 10) {
        await sleep(10 * (attempt + 1));
        continue;
      }
      throw sendError(tabId, msg);
    }
  }
}

// sendSession runs one CDP command on a child session of a tab (an
// out-of-process frame). Its errors are the protocol's: the caller
// (frames.js) reads a gone session as a gone document.
export async function sendSession(tabId, sessionId, method, params = {}) {
  try {
    return await chrome.debugger.sendCommand({ tabId, sessionId }, method, params);
  } catch (e) {
    const err = new Error(String((e && e.message) || e));
    err.cdp = true;
    throw err;
  }
}

function sendError(tabId, msg) {
  if (/Debugger is not attached|not attached to the tab/i.test(msg)) {
    state(tabId).attached = false;
    return fail('DETACHED', `the debugger is no longer attached to tab ${tabId}`, 'retry the call: the extension attaches again');
  }
  if (/Detached while handling command/i.test(msg)) {
    state(tabId).attached = false;
    return fail('DETACHED', `the debugger was detached from tab ${tabId} during the call`, 'retry the call');
  }
  if (/Not attached to an active page/i.test(msg)) {
    return fail('DETACHED', `tab ${tabId} is between two documents`, 'retry the call');
  }
  if (/No tab with given id|No target with given id/i.test(msg)) {
    return fail('TAB_NOT_FOUND', `tab ${tabId} was closed`, 'call tabs_list to see the open tabs');
  }
  const err = new Error(msg);
  err.cdp = true;
  return err;
}

// attach makes sure the extension's debugger is attached to a tab, once:
// concurrent calls share one attach. Another debugger (DevTools, another
// extension) holding the tab is DEVTOOLS_OPEN, terminal for the call.
export async function attach(tabId) {
  const st = state(tabId);
  if (st.attached) return st;
  if (!st.attaching) {
    st.attaching = doAttach(st).finally(() => {
      st.attaching = null;
    });
  }
  await st.attaching;
  return st;
}

async function doAttach(st) {
  const tabId = st.tabId;
  try {
    await chrome.debugger.attach({ tabId }, CDP_VERSION);
  } catch (e) {
    const msg = String((e && e.message) || e);
    if (/already attached/i.test(msg)) {
      // Ours, from before this service worker restarted? Only then does a
      // command go through.
      try {
        await chrome.debugger.sendCommand({ tabId }, 'Page.getFrameTree', {});
      } catch {
        throw fail('DEVTOOLS_OPEN', `another debugger (DevTools or another extension) is attached to tab ${tabId}`,
          'close DevTools on that tab, or use another tab');
      }
    } else if (/No tab with given id/i.test(msg)) {
      throw fail('TAB_NOT_FOUND', `there is no open tab ${tabId}`, 'call tabs_list to see the open tabs');
    } else if (/Cannot access|Cannot attach|chrome-extension:|chrome:\/\//i.test(msg)) {
      const err = fail('BAD_ARGS', `tab ${tabId} shows a page the extension may not drive (${msg})`,
        'navigate the tab to an http(s) page first, or use another tab');
      err.restricted = true;
      throw err;
    } else {
      throw fail('INTERNAL', `attaching to tab ${tabId} failed: ${msg}`);
    }
  }
  // Frames of other origins reached before this service worker
  // restarted, before the hook's auto-attach reports child sessions.
  await restoreFrames(st).catch(() => {});
  // Every request of the tab is decided by the server from here on; a tab
  // whose hook fails is let go, never driven unhooked.
  try {
    await hook(tabId);
  } catch (e) {
    if (e instanceof WireError) throw e;
    await chrome.debugger.detach({ tabId }).catch(() => {});
    throw fail('INTERNAL', `tab ${tabId}: the request boundary could not be set: ${String((e && e.message) || e)}`, 'retry the call');
  }
  await send(tabId, 'Page.enable');
  await send(tabId, 'Page.setLifecycleEventsEnabled', { enabled: true });
  // The network log (network_requests). Bodies stay in Chrome's buffer
  // until asked for; a failure here costs the log, not the tab.
  await send(tabId, 'Network.enable').catch(() => {});
  // The console log (console_messages): Runtime.enable also replays the
  // messages the page logged before the debugger came.
  await send(tabId, 'Runtime.enable').catch(() => {});
  const tree = await send(tabId, 'Page.getFrameTree');
  const frame = tree && tree.frameTree && tree.frameTree.frame;
  if (frame) {
    st.mainFrameId = frame.id;
    st.loaderId = frame.loaderId;
  }
  st.attached = true;
  for (const fn of attachedHooks) await fn(tabId);
  await store.setAttached(tabId, true);
  // A popup whose first page the boundary is still deciding is not listed
  // (tabs.js): the server learns of it once it is (announce), or never, if
  // it is denied and closed. Told now, it would follow a tab every call
  // still refuses as not found.
  if (!tabs.isHidden(tabId)) emit('attached', { tabId: String(tabId) });
}

// announce tells the server of a driven tab that was hidden when the
// debugger attached (a popup the boundary has just let through).
export function announce(tabId) {
  const st = states.get(tabId);
  if (st && st.attached && !tabs.isHidden(tabId)) emit('attached', { tabId: String(tabId) });
}

// detachAll lets go of every tab (unpairing).
export async function detachAll() {
  for (const id of await attachedTabs()) {
    try {
      await chrome.debugger.detach({ tabId: id });
    } catch {
      // already gone
    }
  }
  states.clear();
  await store.forgetAll();
}

// onEvent is chrome.debugger.onEvent's listener (registered by sw.js).
export function onEvent(source, method, params) {
  const tabId = source && source.tabId;
  // Out-of-process frames: their child sessions, for frames.js.
  if (tabId !== undefined && (method === 'Target.attachedToTarget' || method === 'Target.detachedFromTarget')) {
    onTargetEvent(state(tabId), method, params);
  }
  // a child session's events (out-of-process frames, workers) are egress.js's
  if (tabId === undefined || source.sessionId) return;
  const st = state(tabId);
  netlogs.onEvent(tabId, method, params, st.mainFrameId, st.url);
  if (method.startsWith('Runtime.')) {
    consolelogs.onEvent(tabId, method, params, netlogs.tab(tabId).nav, st.url, st.mainFrameId);
  }
  // The server follows the page's WebMCP tools (issue 6): the domain's
  // events as they come, and every main-frame navigation.
  if (method.startsWith('WebMCP.')) {
    // Bounded here, before it is relayed: a page sends what it likes.
    emit('webmcp', { tabId: String(tabId), method, params: boundEvent(method, params, st.webmcpMax) });
  } else if (method === 'Page.frameNavigated' && params.frame && !params.frame.parentId) {
    emit('webmcp', { tabId: String(tabId), method, params: {} });
  }
  if (method === 'Page.javascriptDialogOpening') {
    // Never answered for the caller: left open, the page waiting, and
    // reported with the call's result (dialogs.js). url is the page that
    // opened it: the server tells the model of a dialog of a page outside
    // the policy without its words, and dismisses it. A tab the server
    // does not drive yet (a popup the boundary still decides) has its
    // dialog dismissed at once.
    const rec = dialogs.record(params);
    // The document that opened it, by its frame id: the server withholds
    // the words of a denied frame's dialog.
    const doc = netlogs.tab(tabId).frameDoc(params.frameId, st.mainFrameId, st.url);
    if (doc) rec.docs = [doc];
    else if (params.frameId) rec.docs = [{ url: rec.url, origin: 'null' }];
    if (tabs.isHidden(tabId) || !dialogs.opened(st, rec)) {
      dialogs.answer(st, (args) => chrome.debugger.sendCommand({ tabId }, 'Page.handleJavaScriptDialog', args), { accept: false }).catch(() => {});
      return;
    }
    for (const fn of [...dialogWatchers]) fn();
    return;
  }
  if (method === 'Page.javascriptDialogClosed') {
    dialogs.closed(st);
    return;
  }
  const blank = !st.url || st.url.startsWith('about:blank');
  st.onEvent(method, params);
  if (method === 'Page.frameNavigated' && blank && st.url && !st.url.startsWith('about:blank')) {
    for (const fn of leftBlankHooks) fn(tabId).catch(() => {});
  }
}

// onDetach is chrome.debugger.onDetach's listener: the next call attaches
// again (a detach by the user, "canceled_by_user", is reported to the
// server as an event).
export function onDetach(source, reason) {
  const tabId = source && source.tabId;
  if (tabId === undefined) return;
  const st = states.get(tabId);
  if (st) {
    st.attached = false;
    st.world = null;
    st.notify();
  }
  states.delete(tabId);
  store.setAttached(tabId, false).catch(() => {});
  store.forgetWorld(tabId).catch(() => {});
  emit('detached', { tabId: String(tabId), reason: String(reason || '') });
}

// onTabRemoved is chrome.tabs.onRemoved's listener.
export function onTabRemoved(tabId) {
  states.delete(tabId);
  netlogs.forget(tabId);
  consolelogs.forget(tabId);
  tabs.forget(tabId).catch(() => {});
  store.setAttached(tabId, false).catch(() => {});
  store.forgetWorld(tabId).catch(() => {});
  emit('tabClosed', { tabId: String(tabId) });
}

// dialogWatchers are called when a dialog opens on any tab (dialogs.race).
const dialogWatchers = new Set();

function watchDialogs(fn) {
  dialogWatchers.add(fn);
  return () => dialogWatchers.delete(fn);
}

// responsive says whether a tab's page answers a script within
// dialogs.PROBE_MS: one that shares a renderer with a tab holding a
// dialog does not. A probe left unanswered returns when the dialog is.
async function responsive(tabId) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(false), dialogs.PROBE_MS);
  });
  const probe = send(tabId, 'Runtime.evaluate', { expression: '1' }).then(() => true, () => false);
  try {
    return await Promise.race([probe, late]);
  } finally {
    clearTimeout(timer);
  }
}

// dialogElsewhere returns [tabId, dialog] of a driven tab other than
// tabId with an open dialog, or null.
function dialogElsewhere(tabId) {
  for (const [id, st] of states) {
    if (id !== tabId && st.dialog) return [String(id), st.dialog];
  }
  return null;
}

// onTab resolves the call's tab ("" = selected), attaches, runs fn and
// returns the page state with the dialogs the page opened meanwhile.
//
// kind says what a dialog the call raises means to it (dialogs.js): a
// READ fails with DIALOG_OPEN, an ACT reports it open, an ANSWER runs on
// the open dialog. A tab whose page waits on a dialog fails every call but
// an ANSWER at once with DIALOG_OPEN.
//
// A tab the debugger was detached from without notice (Chrome detaches an
// extension from a tab that shows an error page) fails the first command
// with DETACHED: the call attaches again and runs once more, unless it
// already acted on the page.
export async function onTab(ctx, what, fn, kind = dialogs.READ) {
  const tabId = await tabs.resolve(ctx.tabId);
  const start = Date.now();
  const opts = { elsewhere: () => dialogElsewhere(tabId), watch: watchDialogs, responsive: () => responsive(tabId) };
  for (let attempt = 0; ; attempt++) {
    const st = await bounded(ctx, what, attach(tabId), start);
    if (st.dialog && kind !== dialogs.ANSWER) {
      const d = st.dialog;
      st.dialogs = []; // told by the error
      throw dialogs.openError(what, String(tabId), d, false);
    }
    const c = { tabId, st, ctx, what, start, title: undefined, acted: false, input: false, urlSeq: st.urlSeq };
    const before = { navRequests: st.navRequests, commitSeq: st.commitSeq };
    try {
      await bounded(ctx, what, dialogs.race(c, kind, what, fn(c), opts), start);
      if (c.input && !st.dialog) await bounded(ctx, what, dialogs.race(c, kind, what, settle(c, before), opts), start);
    } catch (e) {
      if (attempt === 0 && e instanceof WireError && e.code === 'DETACHED' && !c.acted) continue;
      throw e;
    }
    return pageState(c);
  }
}

// pageState reads the tab's committed URL and title from the browser (no
// page script: a busy page cannot hold it) and drains its dialogs.
export async function pageState(c) {
  const out = { tabId: String(c.tabId), url: '', title: '' };
  try {
    const h = await csend(c, 'Page.getNavigationHistory');
    const e = h.entries[h.currentIndex];
    out.url = e.url;
    out.title = c.title !== undefined ? c.title : e.title;
    // The history may lag a commit the call just waited for: the commit's
    // own event has the URL, and the new document the title.
    if (c.st.url && c.st.url !== e.url && c.st.urlSeq > (c.urlSeq || 0)) {
      out.url = c.st.url;
      // (a page that waits on a dialog answers nothing)
      if (c.title === undefined && !c.st.dialog) out.title = await boundedTitle(c);
    }
  } catch {
    try {
      const t = await chrome.tabs.get(c.tabId);
      out.url = t.url || '';
      out.title = t.title || '';
    } catch {
      // the call closed its tab
    }
  }
  out.title = tabs.displayTitle(out.title, out.url);
  if (c.st.dialogs.length) {
    out.dialogs = c.st.dialogs;
    c.st.dialogs = [];
  }
  return out;
}

function pageTitle() {
  return document.title;
}

// boundedTitle reads the document's title, giving up after a second: the
// title is a nicety, never a reason for a call to hang or fail.
async function boundedTitle(c) {
  let timer;
  const t = new Promise((resolve) => {
    timer = setTimeout(() => resolve(''), 1000);
  });
  try {
    return String(await Promise.race([inWorld(c.st, fnDecl(pageTitle), []).catch(() => ''), t]));
  } finally {
    clearTimeout(timer);
  }
}
