// The chrome.debugger executor: every wire method, acting on the user's
// tabs through CDP 1.3 with the semantics of the Go CDP backend
// (executor/cdp). One debugger session per tab, attached on first use.
//
// Nothing here is authoritative in memory: the per-tab cache (attachment,
// main frame, lifecycle, the isolated world's context) is rebuilt from the
// browser after a service-worker restart; what must survive one (the
// element script, the world's context per document, the document-token
// counter, the attached tabs for status) is in chrome.storage.session.

import { fail, WireError } from './errors.js';
import { parseCombo, keyEvents, keyDefinition, keyTypes, modifierEvents, modifierMask } from './keys.js';
import * as tabs from './tabs.js';
import { NetLogs, textBody } from './netlog.js';
import { boundEvent } from './webmcp.js';

const CDP_VERSION = '1.3';
const WORLD_NAME = 'chromegate';
const DEFAULT_MAX_SCREENSHOT_HEIGHT = 8000; // the CDP backend's default cap
const POLL_MS = 100;

// ---------------------------------------------------------------------------
// Per-tab state (a cache).

class TabState {
  constructor(tabId) {
    this.tabId = tabId;
    this.attached = false;
    this.attaching = null; // the single attach in flight
    this.mainFrameId = '';
    this.loaderId = ''; // the main frame's current document
    this.webmcpMax = 0; // the server's bound on a page tool's result (webmcp.js)
    this.lifecycle = new Map(); // loaderId -> Set of lifecycle event names
    this.waiters = new Set(); // functions called on every navigation event
    this.dialogs = [];
    this.world = null; // {id, doc, loaderId}
    this.worldPending = null;
    this.drag = null; // Input.dragIntercepted data
    this.lastTitle = '';
    this.commitSeq = 0; // main-frame commits seen
    this.commits = new Map(); // loaderId -> its commit's sequence number
    this.navRequests = 0; // main-frame navigations the page or an input started
    this.stopsSinceRequest = 0; // main-frame loads that stopped since the last request
    this.url = ''; // the main frame's URL as its last navigation event said
    this.urlSeq = 0;
  }

  notify() {
    for (const w of [...this.waiters]) w();
  }
}

const states = new Map();

function state(tabId) {
  let st = states.get(tabId);
  if (!st) {
    st = new TabState(tabId);
    states.set(tabId, st);
  }
  return st;
}

let emit = () => {};

// The network log of every attached tab (netlog.js), fed by onEvent.
const netlogs = new NetLogs();

// setEmitter sets where events (tabClosed, detached) go: the connection.
export function setEmitter(fn) {
  emit = fn;
}

let hook = async () => {
  throw new Error('no request boundary is set');
};

// setHook sets what puts a tab under the request boundary (egress.js) the
// moment the debugger attaches, before the tab is used.
export function setHook(fn) {
  hook = fn;
}

// ---------------------------------------------------------------------------
// Storage-backed pieces.

const SCRIPTS_KEY = 'scripts';
const ATTACHED_KEY = 'attachedTabs';
const WORLDS_KEY = 'worlds';
const DOCS_KEY = 'docTokens';

// setScripts keeps the server's page scripts (welcome.scripts).
export async function setScripts(scripts) {
  const all = scripts && typeof scripts === 'object' ? scripts : {};
  composed = null;
  await chrome.storage.session.set({ [SCRIPTS_KEY]: all });
}

let composed = null; // {element, selector} sources built from the element script

async function scripts() {
  if (composed) return composed;
  const got = await chrome.storage.session.get(SCRIPTS_KEY);
  const element = got[SCRIPTS_KEY] && got[SCRIPTS_KEY].element;
  if (typeof element !== 'string' || !element.trim()) {
    throw fail('INTERNAL', 'the server sent no element script in welcome', 'reconnect the extension (update chromegate and the extension together)');
  }
  composed = { element, selector: selectorScript(element) };
  return composed;
}

// serverScript is one of the page scripts the server sent in welcome
// (scrollsettle, clipboard): the server's own source, so both backends run
// the same code.
async function serverScript(name) {
  const got = await chrome.storage.session.get(SCRIPTS_KEY);
  const src = got[SCRIPTS_KEY] && got[SCRIPTS_KEY][name];
  if (typeof src !== 'string' || !src.trim()) {
    throw fail('INTERNAL', `the server sent no ${name} script in welcome`, 'update chromegate and the extension together, then reconnect');
  }
  return src;
}

async function setAttachedList(tabId, on) {
  const got = await chrome.storage.session.get(ATTACHED_KEY);
  const list = new Set(Array.isArray(got[ATTACHED_KEY]) ? got[ATTACHED_KEY] : []);
  if (on) list.add(tabId);
  else list.delete(tabId);
  await chrome.storage.session.set({ [ATTACHED_KEY]: [...list] });
}

// attachedTabs lists the tabs this extension's debugger is attached to.
export async function attachedTabs() {
  const got = await chrome.storage.session.get(ATTACHED_KEY);
  const list = Array.isArray(got[ATTACHED_KEY]) ? got[ATTACHED_KEY] : [];
  let targets = [];
  try {
    targets = await chrome.debugger.getTargets();
  } catch {
    return list;
  }
  const live = new Set(targets.filter((t) => t.attached && t.tabId !== undefined).map((t) => t.tabId));
  return list.filter((id) => live.has(id));
}

// Document tokens: lowercase letters, unique within the extension's
// lifetime (the counter is in storage.session), from a random start so
// tokens of an earlier run seldom repeat.
let docChain = Promise.resolve();
let docCache = null;

async function loadDocs() {
  if (docCache) return docCache;
  const got = await chrome.storage.session.get(DOCS_KEY);
  docCache = got[DOCS_KEY];
  if (!docCache || typeof docCache.start !== 'number') {
    const start = 26 * 26 + Math.floor(Math.random() * 26 * 26 * 26);
    docCache = { start, next: start };
    await chrome.storage.session.set({ [DOCS_KEY]: docCache });
  }
  return docCache;
}

export function docToken(n) {
  let s = '';
  while (n > 0 || s.length < 2) {
    s = String.fromCharCode(97 + (n % 26)) + s;
    n = Math.floor(n / 26);
  }
  return s;
}

function nextDocToken() {
  const p = docChain.then(async () => {
    const d = await loadDocs();
    d.next += 1;
    await chrome.storage.session.set({ [DOCS_KEY]: d });
    return docToken(d.next);
  });
  docChain = p.catch(() => {});
  return p;
}

// issuedToken reports whether tok is a document token this extension handed
// out: a ref carrying one is from an earlier document, any other ref was
// never issued at all.
async function issuedToken(tok) {
  if (!/^[a-z]{2,12}$/.test(tok)) return false;
  const d = await loadDocs();
  let n = 0;
  for (const ch of tok) n = n * 26 + (ch.charCodeAt(0) - 97);
  return n > d.start && n <= d.next;
}

// ---------------------------------------------------------------------------
// Deadlines.

// budget is how long (ms) an operation may still take: what is left of the
// call less a margin, so a precise error beats the server's own timeout.
function budget(ctx) {
  const left = ctx.deadline - Date.now();
  const margin = Math.min(Math.max(left / 5, Math.min(left / 2, 500)), 1000);
  return Math.max(Math.floor(left - margin), 1);
}

function timeoutError(what, start) {
  return fail('TIMEOUT', `${what} did not finish within ${Date.now() - start} ms`, 'retry with a larger timeout_ms, or wait_for the condition first');
}

// bounded races p against the call's deadline.
function bounded(ctx, what, p, start = Date.now()) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(timeoutError(what, start)), Math.max(ctx.deadline - Date.now() - 150, 1));
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function aborted(ctx) {
  if (ctx.signal && ctx.signal.aborted) throw fail('TIMEOUT', 'the server cancelled the call');
}

// ---------------------------------------------------------------------------
// chrome.debugger.

function contextGone(msg) {
  return /Cannot find context|Execution context was destroyed|Cannot find default execution context|Inspected target navigated or closed|Cannot find execution context/.test(msg);
}

// send runs one CDP command on a tab. Errors keep the protocol's message;
// a lost attachment is DETACHED and a closed tab TAB_NOT_FOUND.
//
// Right after a cross-document commit Chrome may answer "Not attached to
// an active page" while it moves the session to the new document (no
// onDetach follows): that answer is retried for up to a second.
async function send(tabId, method, params = {}) {
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

// MUTATING are the commands after whose success a call must not be run
// again: input, navigation, state the page can see.
const MUTATING = /^(Input\.|Page\.(navigate|reload|navigateToHistoryEntry)|DOM\.setFileInputFiles|Network\.setCookies)/;

// csend is send for a call: it remembers when the call changed the page.
async function csend(c, method, params = {}) {
  const r = await send(c.tabId, method, params);
  if (MUTATING.test(method)) c.acted = true;
  if (method.startsWith('Input.')) c.input = true;
  return r;
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
  const tree = await send(tabId, 'Page.getFrameTree');
  const frame = tree && tree.frameTree && tree.frameTree.frame;
  if (frame) {
    st.mainFrameId = frame.id;
    st.loaderId = frame.loaderId;
  }
  st.attached = true;
  await setAttachedList(tabId, true);
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
  await chrome.storage.session.set({ [ATTACHED_KEY]: [], [WORLDS_KEY]: {} });
}

// onEvent is chrome.debugger.onEvent's listener (registered by sw.js).
export function onEvent(source, method, params) {
  const tabId = source && source.tabId;
  // a child session's events (out-of-process frames, workers) are egress.js's
  if (tabId === undefined || source.sessionId) return;
  const st = state(tabId);
  netlogs.onEvent(tabId, method, params, st.mainFrameId);
  // The server follows the page's WebMCP tools (issue 6): the domain's
  // events as they come, and every main-frame navigation.
  if (method.startsWith('WebMCP.')) {
    // Bounded here, before it is relayed: a page sends what it likes.
    emit('webmcp', { tabId: String(tabId), method, params: boundEvent(method, params, st.webmcpMax) });
  } else if (method === 'Page.frameNavigated' && params.frame && !params.frame.parentId) {
    emit('webmcp', { tabId: String(tabId), method, params: {} });
  }
  switch (method) {
    case 'Page.javascriptDialogOpening': {
      // Answered at once so no call hangs on it, and reported with the
      // call's result: alert/confirm/beforeunload accepted, prompt
      // answered with its default.
      // url is the page that opened it: the server tells the model of a
      // dialog of a page outside the policy without its words.
      const rec = { type: params.type, message: params.message || '', action: 'accepted', url: params.url || '' };
      if (params.type === 'prompt' && params.defaultPrompt) rec.answer = params.defaultPrompt;
      if (st.dialogs.length >= 50) st.dialogs.shift();
      st.dialogs.push(rec);
      const args = { accept: true };
      if (params.type === 'prompt') args.promptText = params.defaultPrompt || '';
      chrome.debugger.sendCommand({ tabId }, 'Page.handleJavaScriptDialog', args).catch(() => {});
      break;
    }
    case 'Page.frameNavigated': {
      const f = params.frame;
      if (f && !f.parentId) {
        st.mainFrameId = f.id;
        st.loaderId = f.loaderId;
        st.world = null;
        st.commitSeq += 1;
        st.commits.set(f.loaderId, st.commitSeq);
        if (st.commits.size > 20) st.commits.delete(st.commits.keys().next().value);
        st.lastNav = { loaderId: f.loaderId, type: params.type || 'Navigation' };
        st.url = f.url + (f.urlFragment || '');
        st.urlSeq += 1;
        st.notify();
      }
      break;
    }
    case 'Page.frameRequestedNavigation':
    case 'Page.frameStartedNavigating':
      if (params.frameId === st.mainFrameId && (!params.disposition || params.disposition === 'currentTab')) {
        st.navRequests += 1;
        st.stopsSinceRequest = 0;
        st.notify();
      }
      break;
    case 'Page.frameStoppedLoading':
      if (params.frameId === st.mainFrameId) st.stopsSinceRequest += 1;
      st.notify();
      break;
    case 'Page.navigatedWithinDocument':
      if (params.frameId === st.mainFrameId) {
        st.sameDoc = (st.sameDoc || 0) + 1;
        st.url = params.url;
        st.urlSeq += 1;
        st.notify();
      }
      break;
    case 'Page.lifecycleEvent':
      if (params.frameId === st.mainFrameId || !st.mainFrameId) {
        if (params.name === 'init') st.lifecycle.set(params.loaderId, new Set());
        let set = st.lifecycle.get(params.loaderId);
        if (!set) {
          set = new Set();
          st.lifecycle.set(params.loaderId, set);
        }
        set.add(params.name);
        if (st.lifecycle.size > 20) st.lifecycle.delete(st.lifecycle.keys().next().value);
        st.notify();
      }
      break;
    case 'Page.loadEventFired':
      st.notify();
      break;
    case 'Input.dragIntercepted':
      st.drag = params.data;
      break;
    default:
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
  setAttachedList(tabId, false).catch(() => {});
  forgetWorld(tabId).catch(() => {});
  emit('detached', { tabId: String(tabId), reason: String(reason || '') });
}

// onTabRemoved is chrome.tabs.onRemoved's listener.
export function onTabRemoved(tabId) {
  states.delete(tabId);
  netlogs.forget(tabId);
  tabs.forget(tabId).catch(() => {});
  setAttachedList(tabId, false).catch(() => {});
  forgetWorld(tabId).catch(() => {});
  emit('tabClosed', { tabId: String(tabId) });
}

// ---------------------------------------------------------------------------
// The isolated world "chromegate" of the main frame, one context per
// document, kept in storage.session so a restarted worker reuses it (the
// refs registry lives on its globalThis).

async function savedWorld(tabId) {
  const got = await chrome.storage.session.get(WORLDS_KEY);
  return (got[WORLDS_KEY] || {})[tabId] || null;
}

async function saveWorld(tabId, w) {
  const got = await chrome.storage.session.get(WORLDS_KEY);
  const all = got[WORLDS_KEY] || {};
  if (w) all[tabId] = w;
  else delete all[tabId];
  await chrome.storage.session.set({ [WORLDS_KEY]: all });
}

async function forgetWorld(tabId) {
  await saveWorld(tabId, null);
}

async function worldContext(st) {
  if (st.world && st.world.loaderId === st.loaderId) return st.world;
  if (!st.worldPending) {
    st.worldPending = (async () => {
      const saved = await savedWorld(st.tabId);
      if (saved && saved.loaderId && saved.loaderId === st.loaderId) {
        st.world = saved;
        return saved;
      }
      if (!st.mainFrameId) {
        const tree = await send(st.tabId, 'Page.getFrameTree');
        st.mainFrameId = tree.frameTree.frame.id;
        st.loaderId = tree.frameTree.frame.loaderId;
      }
      const loaderId = st.loaderId;
      const r = await send(st.tabId, 'Page.createIsolatedWorld', { frameId: st.mainFrameId, worldName: WORLD_NAME });
      if (!r || typeof r.executionContextId !== 'number') throw fail('INTERNAL', 'Page.createIsolatedWorld gave no context');
      const w = { id: r.executionContextId, doc: await nextDocToken(), loaderId };
      // A navigation that committed meanwhile made this context stale.
      if (st.loaderId === loaderId) {
        st.world = w;
        await saveWorld(st.tabId, w);
      }
      return w;
    })().finally(() => {
      st.worldPending = null;
    });
  }
  return st.worldPending;
}

function exceptionText(ex) {
  const d = ex && ex.exception && ex.exception.description;
  if (typeof d === 'string' && d) return d.split('\n')[0];
  if (ex && ex.exception && 'value' in ex.exception) return String(ex.exception.value);
  return (ex && ex.text) || 'an exception';
}

// inWorld calls fnDecl (a function declaration) with args and the
// document's env in the isolated world. byValue returns the JSON value,
// else the RemoteObject. A context that vanished under the call (a
// navigation) is recreated once.
async function inWorld(st, fnDecl, args, { byValue = true, userGesture = false } = {}) {
  for (let attempt = 0; ; attempt++) {
    const w = await worldContext(st);
    let r;
    try {
      r = await send(st.tabId, 'Runtime.callFunctionOn', {
        functionDeclaration: fnDecl,
        executionContextId: w.id,
        arguments: [...args.map((a) => (a === undefined ? {} : { value: a })), { value: { doc: w.doc } }],
        returnByValue: byValue,
        awaitPromise: true,
        userGesture,
      });
    } catch (e) {
      if (e.cdp && contextGone(e.message) && attempt === 0) {
        if (st.world === w) st.world = null;
        await forgetWorld(st.tabId);
        continue;
      }
      throw e;
    }
    if (r.exceptionDetails) {
      if (attempt === 0 && contextGone(exceptionText(r.exceptionDetails))) {
        st.world = null;
        continue;
      }
      throw fail('EVAL_FAILED', 'a chromegate page script failed: ' + exceptionText(r.exceptionDetails));
    }
    if (!byValue) return r.result;
    return r.result && 'value' in r.result ? r.result.value : null;
  }
}

// Script sources (the element script, the selector engine, the server's
// scripts) are tens of kilobytes: each is sent and compiled once per
// document, kept in a Map on the isolated world's globalThis (which the
// page cannot reach) and called by a short stub afterwards.
const MISSING = '__chromegateMissing__';
const installed = new WeakMap(); // world -> Set of source ids defined in it

function sourceId(source) {
  let h = 0x811c9dc5;
  for (let i = 0; i < source.length; i++) {
    h ^= source.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16) + '-' + source.length;
}

function stubDecl(id) {
  return `function (arg, env) {
  const m = globalThis[Symbol.for('chromegate.scripts')];
  const f = m && m.get(${JSON.stringify(id)});
  if (!f) return { ${MISSING}: true };
  return f(arg, env);
}`;
}

function installDecl(id, source) {
  return `function (arg, env) {
  const key = Symbol.for('chromegate.scripts');
  if (!globalThis[key]) Object.defineProperty(globalThis, key, { value: new Map() });
  const f = (
${source}
  );
  globalThis[key].set(${JSON.stringify(id)}, f);
  return f(arg, env);
}`;
}

// runSource runs a script source (an expression whose value is a
// function) as fn(arg, env) in the isolated world.
async function runSource(st, source, args, opts = {}) {
  const id = sourceId(source);
  const w = st.world;
  if (opts.byValue !== false && w && installed.has(w) && installed.get(w).has(id)) {
    const v = await inWorld(st, stubDecl(id), args, opts);
    if (!(v && typeof v === 'object' && v[MISSING] === true)) return v;
  }
  const v = await inWorld(st, installDecl(id, source), args, opts);
  const now = st.world;
  if (now) {
    if (!installed.has(now)) installed.set(now, new Set());
    installed.get(now).add(id);
  }
  return v;
}

// ---------------------------------------------------------------------------
// Page functions (run in the isolated world; self-contained).

function pageContent() {
  let s = '';
  if (document.doctype) s = new XMLSerializer().serializeToString(document.doctype);
  if (document.documentElement) s += document.documentElement.outerHTML;
  return s;
}

function pageFrames() {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, 100);
    requestAnimationFrame(() => requestAnimationFrame(() => {
      clearTimeout(t);
      resolve();
    }));
  });
}

function pageNavStatus() {
  const e = performance.getEntriesByType('navigation')[0];
  return e && typeof e.responseStatus === 'number' ? e.responseStatus : 0;
}


const fnDecl = (f) => f.toString();

// The selector engine: CSS through open shadow roots (light DOM first), and
// Playwright's text=, role=, id=, data-testid=, xpath= and css= forms.
function selectorEngine() {
  function roots(root) {
    const out = [root];
    for (let i = 0; i < out.length; i++) {
      const walker = document.createTreeWalker(out[i], NodeFilter.SHOW_ELEMENT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        if (n.shadowRoot) out.push(n.shadowRoot);
      }
    }
    return out;
  }
  function all(root) {
    const out = [];
    for (const r of roots(root)) out.push(...r.querySelectorAll('*'));
    return out;
  }
  const norm = (s) => String(s || '').replace(/\s+/g, ' ').trim();
  function unquote(v) {
    const m = /^(["'])(.*)\1([si]?)$/.exec(v);
    return m ? { text: m[2], exact: m[3] === 's' || m[3] === '' } : { text: v, exact: false };
  }
  function textOf(el) {
    if (el.tagName === 'INPUT' && ['button', 'submit', 'reset'].includes((el.type || '').toLowerCase())) return el.value;
    return el.innerText !== undefined ? el.innerText : el.textContent;
  }
  function byText(q) {
    const { text, exact } = unquote(q);
    const want = exact ? norm(text) : norm(text).toLowerCase();
    const match = (el) => {
      if (['SCRIPT', 'STYLE', 'HEAD', 'TEMPLATE', 'NOSCRIPT'].includes(el.tagName)) return false;
      const t = norm(textOf(el));
      return exact ? t === want : t.toLowerCase().includes(want);
    };
    // the deepest elements that match, in document order
    return all(document).find((el) => match(el) && ![...el.children].some(match)) || null;
  }
  const IMPLICIT = {
    A: (e) => (e.hasAttribute('href') ? 'link' : ''), BUTTON: () => 'button', MAIN: () => 'main', NAV: () => 'navigation',
    ASIDE: () => 'complementary', HEADER: () => 'banner', FOOTER: () => 'contentinfo', FORM: () => 'form',
    H1: () => 'heading', H2: () => 'heading', H3: () => 'heading', H4: () => 'heading', H5: () => 'heading', H6: () => 'heading',
    UL: () => 'list', OL: () => 'list', LI: () => 'listitem', IMG: () => 'img', TABLE: () => 'table', TR: () => 'row',
    TD: () => 'cell', TH: () => 'columnheader', TEXTAREA: () => 'textbox', SELECT: (e) => (e.multiple || e.size > 1 ? 'listbox' : 'combobox'),
    DIALOG: () => 'dialog', ARTICLE: () => 'article', SECTION: () => 'region', OPTION: () => 'option',
    INPUT: (e) => ({ button: 'button', submit: 'button', reset: 'button', checkbox: 'checkbox', radio: 'radio', range: 'slider',
      search: 'searchbox', number: 'spinbutton' })[(e.type || 'text').toLowerCase()] || 'textbox',
  };
  function roleOf(el) {
    const r = el.getAttribute('role');
    if (r) return r.split(/\s+/)[0];
    const f = IMPLICIT[el.tagName];
    return f ? f(el) : '';
  }
  function nameOf(el) {
    const l = el.getAttribute('aria-label');
    if (l) return l;
    const by = el.getAttribute('aria-labelledby');
    if (by) return by.split(/\s+/).map((id) => norm((document.getElementById(id) || {}).textContent)).join(' ');
    if (el.labels && el.labels.length) return norm(el.labels[0].textContent);
    if (el.tagName === 'IMG') return el.alt || '';
    return norm(textOf(el)) || el.title || el.placeholder || '';
  }
  function byRole(q) {
    const m = /^([a-z]+)\s*(.*)$/i.exec(q.trim());
    if (!m) throw new Error('invalid role selector ' + q);
    const role = m[1].toLowerCase();
    let name = null;
    const attrs = m[2].match(/\[[^\]]*\]/g) || [];
    for (const a of attrs) {
      const am = /^\[\s*name\s*=\s*(.*)\]$/.exec(a);
      if (am) name = unquote(am[1].trim());
    }
    return all(document).find((el) => {
      if (roleOf(el) !== role) return false;
      if (!name) return true;
      const n = norm(nameOf(el));
      return name.exact ? n === name.text : n.toLowerCase().includes(name.text.toLowerCase());
    }) || null;
  }
  function byCSS(sel) {
    for (const r of roots(document)) {
      const el = r.querySelector(sel);
      if (el) return el;
    }
    return null;
  }
  return function query(selector) {
    const s = String(selector);
    const m = /^(css|text|role|id|data-testid|xpath)=(.*)$/s.exec(s);
    if (s.startsWith('//') || s.startsWith('(//')) return query('xpath=' + s);
    if (!m) {
      document.createDocumentFragment().querySelector(s); // throws on a bad selector
      return byCSS(s);
    }
    const v = m[2];
    switch (m[1]) {
      case 'css': document.createDocumentFragment().querySelector(v); return byCSS(v);
      case 'text': return byText(v);
      case 'role': return byRole(v);
      case 'id': return byCSS('[id=' + JSON.stringify(unquote(v).text) + ']');
      case 'data-testid': return byCSS('[data-testid=' + JSON.stringify(unquote(v).text) + ']');
      case 'xpath': {
        const r = document.evaluate(v, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null);
        const n = r.singleNodeValue;
        return n && n.nodeType === 1 ? n : null;
      }
    }
    return null;
  };
}

// selectorScript composes the server's element script with the selector
// engine: it waits (in the page, until arg.waitMs) for the selector to
// match, gives the element a ref in the document's registry and runs the
// element script's op on it. op "probe" only reports {attached, visible}.
function selectorScript(elementSource) {
  return `(() => {
const element = (${elementSource});
const query = (${selectorEngine.toString()})();
return async (arg, env) => {
  element({ op: 'state', ref: '_' }, env); // creates the registry
  const reg = globalThis.chromegateRefRegistry;
  const start = Date.now();
  let el = null;
  for (;;) {
    try {
      el = query(arg.selector);
    } catch (e) {
      return { error: 'badselector', why: String((e && e.message) || e) };
    }
    if (el || arg.op === 'probe' || Date.now() - start >= (arg.waitMs || 0)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (arg.op === 'probe') {
    if (!el) return { attached: false, visible: false };
    return element({ op: 'state', ref: reg.refFor(el) }, env);
  }
  if (!el) return { error: 'notfound' };
  const opArg = Object.assign({}, arg.opArg, { ref: reg.refFor(el) });
  if (typeof opArg.timeoutMs === 'number') opArg.timeoutMs = Math.max(1, opArg.timeoutMs - (Date.now() - start));
  return element(opArg, env);
};
})()`;
}

// ---------------------------------------------------------------------------
// Targets.

function validateTarget(t, label = '') {
  const pre = label ? label + ': ' : '';
  const sel = t && typeof t.selector === 'string' ? t.selector : '';
  const ref = t && typeof t.ref === 'string' ? t.ref : '';
  if (sel && ref) throw fail('BAD_ARGS', pre + 'both selector and ref are set', 'pass exactly one of selector or ref');
  if (!sel && !ref) throw fail('BAD_ARGS', pre + 'neither selector nor ref is set', 'pass exactly one of selector or ref');
  // The engine below only queries the main frame's document; a selector
  // naming Playwright's frame step is refused here as the server refuses
  // it (executor.CheckSelector), should one ever get this far.
  if (/internal:control/i.test(sel)) {
    throw fail('BAD_ARGS', pre + `selectors cannot enter frames; ${JSON.stringify(sel)} steps into a frame`,
      "act on the page's own elements; for a same-origin frame take a snapshot and use its refs");
  }
  return { selector: sel, ref };
}

function isZero(t) {
  return !t || (!t.selector && !t.ref);
}

function describeTarget(t) {
  return t.ref ? 'ref ' + t.ref : 'selector ' + t.selector;
}

// refError is a ref the page's registry refused ("malformed", "expired"
// with why "navigated" or "removed", "unknown"). The server words it
// (executor.RefError, from the error's ref field); the code and message
// here are only what an older server would show.
function refError(ref, failure, why) {
  return fail(failure === 'expired' ? 'REF_EXPIRED' : 'BAD_ARGS', `ref ${JSON.stringify(ref)}: ${failure}${why ? ' (' + why + ')' : ''}`, '', '',
    { ref: String(ref), failure: String(failure), why: String(why || '') });
}

// targetOp runs an op of the element script on a target: a ref directly, a
// selector after waiting for it to match. It maps the script's failures to
// the contract's errors and returns its result.
async function targetOp(c, what, target, op, extra = {}, { byValue = true } = {}) {
  const t = validateTarget(target);
  const s = await scripts();
  let r;
  if (t.ref) {
    if (!/^[a-z]+[0-9]+$/.test(t.ref)) throw refError(t.ref, 'malformed', '');
    r = await runSource(c.st, s.element, [{ op, ref: t.ref, ...extra }], { byValue });
  } else {
    const waitMs = Math.max(budget(c.ctx) - 50, 0);
    r = await runSource(c.st, s.selector, [{ selector: t.selector, waitMs, op, opArg: { op, ...extra } }], { byValue });
  }
  if (!byValue) {
    if (r && r.subtype === 'node' && r.objectId) return r;
    // not an element: the script's {error, why}
    await targetOp(c, what, target, 'state');
    throw fail('INTERNAL', `${what} on ${describeTarget(t)}: the element script gave no element`);
  }
  const err = r && typeof r === 'object' ? r.error : '';
  if (!err) return r;
  const why = r.why || '';
  const took = Date.now() - c.start;
  switch (err) {
    case 'timeout':
      throw fail('TIMEOUT', `${what}: the element of ${describeTarget(t)} did not become actionable within ${took} ms (${why})`,
        'it may be hidden, disabled or covered; scroll to it, close what covers it, or wait_for it', r.page || '');
    case 'notfillable':
    case 'notselect':
      throw fail('BAD_ARGS', `${what} on ${describeTarget(t)}: ${why}`, '', r.page || '');
    case 'notfound':
      throw fail('SELECTOR_NOT_FOUND', `${what}: nothing matches ${describeTarget(t)} (waited ${took} ms)`, 'check the selector, or wait_for it to appear first');
    case 'badselector':
      throw fail('BAD_ARGS', `${what}: invalid selector: ${why}`,
        'use a CSS selector, or a Playwright selector such as text=Sign in or role=button[name="OK"]');
    case 'expired':
      if (why === 'navigated' && t.ref && !(await issuedToken(t.ref.replace(/[0-9]+$/, '')))) throw refError(t.ref, 'unknown', '');
      throw refError(t.ref || t.selector, err, why);
    case 'malformed':
    case 'unknown':
      throw refError(t.ref, err, why);
    default:
      throw fail('INTERNAL', `${what} on ${describeTarget(t)}: the element script failed: ${err} ${why}`);
  }
}

async function targetPoint(c, what, target, click) {
  const p = await targetOp(c, what, target, 'point', { button: !!click, timeoutMs: budget(c.ctx) });
  return { x: p.x, y: p.y };
}

// ---------------------------------------------------------------------------
// Trusted input.

const BUTTONS = { left: 1, right: 2, middle: 4 };

// mouse dispatches one mouse event and remembers where the pointer is: a
// wheel turns where the pointer last was, as Playwright's does.
async function mouse(c, type, x, y, extra = {}) {
  await csend(c, 'Input.dispatchMouseEvent', { type, x, y, ...extra });
  c.st.pointer = { x, y };
}

async function click(c, p, button = 'left', count = 1) {
  await mouse(c, 'mouseMoved', p.x, p.y);
  for (let i = 1; i <= count; i++) {
    await mouse(c, 'mousePressed', p.x, p.y, { button, buttons: BUTTONS[button], clickCount: i });
    await mouse(c, 'mouseReleased', p.x, p.y, { button, buttons: 0, clickCount: i });
  }
}

async function dispatchKeys(c, events) {
  for (const e of events) {
    if (e.insertText !== undefined) await csend(c, 'Input.insertText', { text: e.insertText });
    else await csend(c, 'Input.dispatchKeyEvent', e);
  }
}

async function typeText(c, text) {
  for (const ch of text) {
    aborted(c.ctx);
    await dispatchKeys(c, keyDefinition(ch) ? keyEvents(ch) : [{ insertText: ch }]);
  }
}

async function pressCombo(c, combo) {
  await dispatchKeys(c, modifierEvents(combo.modifiers, true));
  const evs = keyEvents(combo.key, combo.modifiers);
  await dispatchKeys(c, evs);
  await dispatchKeys(c, modifierEvents(combo.modifiers, false));
}

// fill replaces an element's value: set directly by the script for inputs
// whose value is not typed, else inserted over the selected content as one
// trusted input event (Delete for an empty value), as Playwright's fill.
async function fillTarget(c, what, target, value) {
  const r = await targetOp(c, what, target, 'fill', { value });
  if (r.done) return;
  if (value === '') await pressCombo(c, { modifiers: [], key: 'Delete' });
  else await csend(c, 'Input.insertText', { text: value });
}

// ---------------------------------------------------------------------------
// Calls on a tab.

// onTab resolves the call's tab ("" = selected), attaches, runs fn and
// returns the page state with the dialogs the page opened meanwhile.
//
// A tab the debugger was detached from without notice (Chrome detaches an
// extension from a tab that shows an error page) fails the first command
// with DETACHED: the call attaches again and runs once more, unless it
// already acted on the page.
async function onTab(ctx, what, fn) {
  const tabId = await tabs.resolve(ctx.tabId);
  const start = Date.now();
  for (let attempt = 0; ; attempt++) {
    const st = await bounded(ctx, what, attach(tabId), start);
    const c = { tabId, st, ctx, what, start, title: undefined, acted: false, input: false, urlSeq: st.urlSeq };
    const before = { navRequests: st.navRequests, commitSeq: st.commitSeq };
    try {
      await bounded(ctx, what, fn(c), start);
      if (c.input) await bounded(ctx, what, settle(c, before), start);
    } catch (e) {
      if (attempt === 0 && e instanceof WireError && e.code === 'DETACHED' && !c.acted) continue;
      throw e;
    }
    return pageState(c);
  }
}

// pageState reads the tab's committed URL and title from the browser (no
// page script: a busy page cannot hold it) and drains its dialogs.
async function pageState(c) {
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
      if (c.title === undefined) out.title = await boundedTitle(c);
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

// ---------------------------------------------------------------------------
// Navigation.

const MILESTONES = { '': 'load', load: 'load', domcontentloaded: 'DOMContentLoaded', networkidle: 'networkIdle' };

function checkWaitUntil(w) {
  if (w !== undefined && w !== '' && !(w in MILESTONES)) {
    throw fail('BAD_ARGS', `waitUntil ${JSON.stringify(w)} is not one of load, domcontentloaded, networkidle`);
  }
}

function checkURL(raw) {
  let u;
  try {
    u = new URL(raw);
  } catch {
    u = null;
  }
  if (!u || typeof raw !== 'string' || !/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(raw)) {
    throw fail('BAD_ARGS', `${JSON.stringify(raw)} is not an absolute URL`, 'pass a full URL such as https://example.com/');
  }
}

// waitFor resolves when check() is true, re-checking on every navigation
// event of the tab, or rejects with err() at the deadline.
function waitEvent(c, check, err) {
  return new Promise((resolve, reject) => {
    let timer;
    const done = (fn, v) => {
      c.st.waiters.delete(poke);
      clearTimeout(timer);
      fn(v);
    };
    const poke = () => {
      let v;
      try {
        v = check();
      } catch (e) {
        done(reject, e);
        return;
      }
      if (v) done(resolve, v);
    };
    c.st.waiters.add(poke);
    timer = setTimeout(() => done(reject, err()), budget(c.ctx));
    if (c.ctx.signal) c.ctx.signal.addEventListener('abort', () => done(reject, fail('TIMEOUT', 'the server cancelled the call')), { once: true });
    poke();
  });
}

function navTimeout(c, what, target, w) {
  return () => fail('TIMEOUT', `${what} ${target} did not reach "${w || 'load'}" in time`,
    'the page may be usable anyway: try get_text or wait_for; or retry with waitUntil domcontentloaded');
}

// waitLoader waits for the milestone of a document (loaderId), or of a
// later one that replaced it.
// The document that was current when the wait began never counts: its
// milestones are long past.
function waitLoader(c, loaderId, w, what, target, since = c.st.commitSeq) {
  const name = MILESTONES[w || ''];
  return waitEvent(c, () => {
    if (!c.st.attached) throw fail('DETACHED', `the debugger was detached from tab ${c.tabId} during ${what}`, 'retry the call');
    const seen = c.st.lifecycle.get(loaderId);
    if (seen && seen.has(name)) return true;
    if (c.st.loaderId === loaderId) return false;
    const curSeq = c.st.commits.get(c.st.loaderId) || 0;
    const targetSeq = c.st.commits.get(loaderId) || since;
    const cur = c.st.lifecycle.get(c.st.loaderId);
    return curSeq > Math.max(since, targetSeq) && !!cur && cur.has(name);
  }, navTimeout(c, what, target, w));
}

// settle waits, after input, for a navigation of the tab the input started
// to commit (as Playwright's actions do), so the call reports the page it
// led to and the server's policy decides on the page the tab landed on (a
// click that leaves the allowlist must be seen to have left). It never
// fails the call: a navigation that does not commit within SETTLE_MS (a
// slow server) is left to the next call's landing check.
const SETTLE_MS = 5000;

async function settle(c, before) {
  c = { ...c, ctx: { ...c.ctx, deadline: Math.min(c.ctx.deadline, Date.now() + SETTLE_MS) } };
  if (c.st.navRequests === before.navRequests) {
    // one round trip delivers the events the input caused
    await send(c.tabId, 'Page.getNavigationHistory').catch(() => {});
  }
  if (c.st.navRequests === before.navRequests || c.st.commitSeq !== before.commitSeq) return;
  // A navigation that commits nothing (a download, a 204) only stops
  // loading; but a stop may also come just before the commit.
  await waitEvent(c, () => c.st.commitSeq !== before.commitSeq || c.st.stopsSinceRequest > 0, () => null).catch(() => {});
  if (c.st.commitSeq !== before.commitSeq) return;
  const grace = { ...c, ctx: { ...c.ctx, deadline: Math.min(c.ctx.deadline, Date.now() + 400) } };
  await waitEvent(grace, () => c.st.commitSeq !== before.commitSeq, () => null).catch(() => {});
}

// navStatus is the HTTP status of the tab's document (0 when none).
async function navStatus(c) {
  try {
    return Number(await inWorld(c.st, fnDecl(pageNavStatus), [])) || 0;
  } catch {
    return 0;
  }
}

async function gotoURL(c, url, w) {
  c.title = undefined;
  const since = c.st.commitSeq;
  const r = await csend(c, 'Page.navigate', { url });
  if (r.errorText) {
    const code = /net::ERR_[A-Z_]+/.exec(r.errorText);
    if (code && code[0] === 'net::ERR_ABORTED' && !r.loaderId) {
      throw fail('BAD_ARGS', `navigation to ${url} failed: ${code[0]} (it may have started a download)`, 'use download_file with this URL');
    }
    throw fail('BAD_ARGS', `navigation to ${url} failed: ${code ? code[0] : r.errorText}`, 'check the URL; is the server up?');
  }
  if (!r.loaderId) return 0; // same-document
  await waitLoader(c, r.loaderId, w, 'navigation to', url, since);
  return navStatus(c);
}

// leaveRestricted navigates a tab the debugger may not attach to with
// chrome.tabs, and waits until the new page has committed.
const RESTRICTED = /^(chrome|chrome-untrusted|devtools|edge|chrome-extension|chrome-search):/i;

async function leaveRestricted(ctx, id, url) {
  await chrome.tabs.update(id, { url });
  const until = Date.now() + budget(ctx);
  for (;;) {
    aborted(ctx);
    const t = await tabs.get(id);
    if (!t.pendingUrl && t.url && (RESTRICTED.test(url) ? t.status === 'complete' : !RESTRICTED.test(t.url))) return;
    if (Date.now() >= until) {
      throw fail('TIMEOUT', `navigation to ${url} did not commit in time`, 'retry with a larger timeout_ms');
    }
    await sleep(50);
  }
}

// historyNav triggers a navigation whose document is not known up front
// (back, forward, reload) and waits for it: the next main-frame commit,
// then its milestone. A same-document step or a page restored from the
// back/forward cache needs no wait.
async function historyNav(c, what, w, trigger) {
  const before = { sameDoc: c.st.sameDoc || 0, lastNav: c.st.lastNav, commitSeq: c.st.commitSeq };
  let target = '';
  try {
    const h = await csend(c, 'Page.getNavigationHistory');
    target = 'of ' + h.entries[h.currentIndex].url;
  } catch {
    // only for the message
  }
  await trigger();
  const committed = await waitEvent(c, () => {
    if (c.st.lastNav !== before.lastNav) return { nav: c.st.lastNav };
    if ((c.st.sameDoc || 0) !== before.sameDoc) return { same: true };
    return null;
  }, navTimeout(c, what, target, w));
  if (committed.same) return 0;
  if (committed.nav.type === 'BackForwardCacheRestore') return navStatus(c);
  await waitLoader(c, committed.nav.loaderId, w, what, target, before.commitSeq);
  return navStatus(c);
}

async function history(params, ctx, what, delta) {
  checkWaitUntil(params.waitUntil);
  let status = 0;
  const st = await onTab(ctx, what, async (c) => {
    if (delta === 0) {
      status = await historyNav(c, what, params.waitUntil, () => csend(c, 'Page.reload', {}));
      return;
    }
    const h = await csend(c, 'Page.getNavigationHistory');
    const entry = h.entries[h.currentIndex + delta];
    if (!entry) return; // no history that way: the current page
    status = await historyNav(c, what, params.waitUntil, () => csend(c, 'Page.navigateToHistoryEntry', { entryId: entry.id }));
  });
  return withStatus(st, status);
}

function withStatus(st, status) {
  if (status) st.status = status;
  return st;
}

// ---------------------------------------------------------------------------
// Eval in the main world, with the server's eval.js and jsonsafe.js (as the
// CDP backend runs them): the value comes back JSON-safe (NaN and the
// infinities as strings, cycles "[Circular]", dates as ISO strings).

// evalSource is executor.EvalSource: eval.js called with opts, the
// expression (on lines of its own) and jsonsafe.js.
export function evalSource(evalScript, jsonSafeScript, expression, opts) {
  return `(${evalScript})(${JSON.stringify(opts)}, () => (\n${expression}\n), ${jsonSafeScript})`;
}

// bareValue makes the value of a bare evaluation (a RemoteObject)
// JSON-safe with jsonsafe.js, in the page: an object through its handle, a
// primitive (NaN, a BigInt) as an argument of a call on the global object.
async function bareValue(c, o, safe) {
  let objectId = o.objectId;
  let args = [];
  if (!objectId) {
    if (!('unserializableValue' in o)) return o.value ?? null;
    args = [{ unserializableValue: o.unserializableValue }];
    const g = await csend(c, 'Runtime.evaluate', { expression: 'globalThis' });
    objectId = g.result && g.result.objectId;
    if (!objectId) return null;
  }
  try {
    const s = await csend(c, 'Runtime.callFunctionOn', {
      objectId, arguments: args, returnByValue: true,
      functionDeclaration: `function (...v) { return (${safe})(v.length ? v[0] : this); }`,
    });
    return s.result ? s.result.value ?? null : null;
  } finally {
    csend(c, 'Runtime.releaseObject', { objectId }).catch(() => {});
  }
}

// pageError is the exception as the page would print it; an Error's plain
// "Error: " prefix is dropped, as the CDP backend does.
function pageError(ex) {
  let msg = exceptionText(ex);
  if (msg.startsWith('Uncaught ')) msg = msg.slice(9);
  if (msg.startsWith('Error: ')) msg = msg.slice(7);
  return msg.trim();
}

function isSyntaxError(ex) {
  const e = ex && ex.exception;
  return !!e && (e.className === 'SyntaxError' || /^SyntaxError/.test(e.description || ''));
}

// ---------------------------------------------------------------------------
// Screenshot helpers.

function b64bytes(b64, max) {
  const bin = atob(b64.slice(0, Math.ceil(max / 3) * 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// imageSize reads a PNG's or a JPEG's pixel size from its header.
export function imageSize(b64) {
  const b = b64bytes(b64, 65536);
  if (b[0] === 0x89 && b[1] === 0x50) {
    const dv = new DataView(b.buffer);
    return { width: dv.getUint32(16), height: dv.getUint32(20) };
  }
  if (b[0] === 0xff && b[1] === 0xd8) {
    let i = 2;
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) {
        i++;
        continue;
      }
      const marker = b[i + 1];
      const len = (b[i + 2] << 8) | b[i + 3];
      if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
        return { width: (b[i + 7] << 8) | b[i + 8], height: (b[i + 5] << 8) | b[i + 6] };
      }
      i += 2 + len;
    }
  }
  throw fail('INTERNAL', 'the browser returned an image that does not decode');
}

// ---------------------------------------------------------------------------
// Downloads: a click's download is caught by chrome.downloads, cancelled
// and erased there; the server fetches the URL itself.

const downloadWaiters = new Set();

// onDownloadCreated is chrome.downloads.onCreated's listener.
export function onDownloadCreated(item) {
  for (const w of [...downloadWaiters]) w(item);
}

function nextDownload(ctx, since) {
  let cancel;
  const p = new Promise((resolve, reject) => {
    const w = (item) => {
      const started = Date.parse(item.startTime || '') || Date.now();
      if (started + 1000 < since) return;
      cleanup();
      resolve(item);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(fail('DOWNLOAD_FAILED', 'the click started no download before the deadline', 'check that the target is a download link or button'));
    }, budget(ctx));
    const cleanup = () => {
      clearTimeout(timer);
      downloadWaiters.delete(w);
    };
    cancel = cleanup;
    downloadWaiters.add(w);
  });
  return { promise: p, cancel };
}

// ---------------------------------------------------------------------------
// The handlers, one per wire method.

function checkButton(b) {
  const name = String(b || 'left').toLowerCase();
  if (!(name in BUTTONS)) throw fail('BAD_ARGS', `button ${JSON.stringify(b)} is not one of left, right, middle`);
  return name;
}

async function userAgentInfo() {
  const ua = navigator.userAgent;
  let full = [];
  try {
    // the reduced user agent says 156.0.0.0; the full version is asked for
    full = (await navigator.userAgentData.getHighEntropyValues(['fullVersionList'])).fullVersionList || [];
  } catch {
    // not offered: the user agent's version stands
  }
  const edge = /Edg\/([0-9.]+)/.exec(ua);
  const chrome = /Chrom(?:e|ium)\/([0-9.]+)/.exec(ua);
  const brands = (navigator.userAgentData && navigator.userAgentData.brands) || [];
  let browser = 'chromium';
  if (edge) browser = 'edge';
  else if (brands.some((b) => b.brand === 'Google Chrome')) browser = 'chrome';
  let version = edge ? edge[1] : chrome ? chrome[1] : '';
  const brand = full.find((b) => b.brand === (browser === 'edge' ? 'Microsoft Edge' : browser === 'chrome' ? 'Google Chrome' : 'Chromium'));
  if (brand && brand.version) version = brand.version;
  return { browser, version, userAgent: ua };
}

async function tabInfo(id, { origin = false } = {}) {
  const t = await tabs.get(id);
  const sel = await tabs.selectedId();
  const out = tabs.wire(t, sel);
  const st = states.get(id);
  if (st && st.attached) {
    // the committed URL, as the browser has it now
    try {
      const h = await send(id, 'Page.getNavigationHistory');
      const e = h.entries[h.currentIndex];
      out.url = e.url;
      out.title = tabs.displayTitle(e.title, e.url);
    } catch {
      // the tab's own view stands
    }
  }
  if (origin && originHidden(out.url)) out.origin = await documentOrigin(id);
  return out;
}

// originHidden is executor.OriginHidden: the URL does not carry the
// document's security origin.
function originHidden(url) {
  const m = /^([a-z][a-z0-9+.-]*):/i.exec(String(url || ''));
  return !m || ['about', 'data', 'javascript', 'blob', 'filesystem'].includes(m[1].toLowerCase());
}

// documentOrigin is executor.Tab.Origin: the origin the browser gave the
// tab's document, read in the isolated world (where no page script can
// replace self.origin); for an opaque one, 'null' if a page could have
// written into it (the tab has an opener), else '' (about:blank as the
// browser made it). An about:blank this extension navigated to or opened
// has the extension's own origin, which no page shares: also ''.
async function documentOrigin(id) {
  const st = await attach(id);
  const origin = await inWorld(st, fnDecl(() => self.origin), []);
  if (typeof origin !== 'string' || !origin) return 'null';
  if (origin === self.location.origin) return '';
  if (origin !== 'null') return origin;
  let opener;
  try {
    const info = await send(id, 'Target.getTargetInfo');
    opener = !!(info && info.targetInfo && info.targetInfo.openerId);
  } catch {
    const t = await tabs.get(id);
    opener = t.openerTabId !== undefined;
  }
  return opener ? 'null' : '';
}

async function cookieTab() {
  const id = await tabs.resolve('');
  try {
    await attach(id);
    return id;
  } catch (e) {
    // the selected tab may be chrome:// or held by DevTools: any other one
    for (const t of await tabs.all()) {
      if (t.id === id) continue;
      try {
        await attach(t.id);
        return t.id;
      } catch {
        // next
      }
    }
    throw e;
  }
}

function toCDPCookie(c, i) {
  const pre = `cookie ${i} (${JSON.stringify(c && c.name)}): `;
  if (!c || typeof c !== 'object') throw fail('BAD_ARGS', `cookie ${i} is not an object`);
  if (!c.name) throw fail('BAD_ARGS', pre + 'the name is empty');
  const out = { name: String(c.name), value: String(c.value ?? '') };
  if (c.url && (c.domain || c.path)) throw fail('BAD_ARGS', pre + 'url and domain/path exclude each other', 'scope the cookie by url, or by domain and path');
  if (c.url) {
    try {
      const u = new URL(c.url);
      if (!u.host) throw new Error();
    } catch {
      throw fail('BAD_ARGS', pre + `url ${JSON.stringify(c.url)} is not an absolute URL`);
    }
    out.url = c.url;
  } else if (c.domain && c.path) {
    out.domain = c.domain;
    out.path = c.path;
  } else {
    throw fail('BAD_ARGS', pre + 'it needs a url, or a domain and a path', 'for example {"name":"a","value":"1","url":"https://example.com/"}');
  }
  if (c.expires > 0) out.expires = c.expires;
  if (c.httpOnly) out.httpOnly = true;
  if (c.secure) out.secure = true;
  if (c.sameSite) {
    const s = { strict: 'Strict', lax: 'Lax', none: 'None' }[String(c.sameSite).toLowerCase()];
    if (!s) throw fail('BAD_ARGS', pre + `sameSite ${JSON.stringify(c.sameSite)} is not Strict, Lax or None`);
    out.sameSite = s;
  }
  return out;
}

function fromCDPCookie(c) {
  const out = { name: c.name, value: c.value, domain: c.domain, path: c.path, expires: c.expires };
  if (c.httpOnly) out.httpOnly = true;
  if (c.secure) out.secure = true;
  if (c.sameSite) out.sameSite = c.sameSite;
  return out;
}

const WEBMCP_COMMANDS = new Set(['WebMCP.enable', 'WebMCP.disable', 'WebMCP.invokeTool', 'WebMCP.cancelInvocation',
  'Page.getFrameTree', 'Runtime.evaluate']);

export const handlers = {
  async tabs() {
    return tabs.list();
  },

  async tabInfo(p, ctx) {
    return tabInfo(await tabs.resolve(ctx.tabId), { origin: true });
  },

  async selectTab(p, ctx) {
    const id = await tabs.resolve(ctx.tabId);
    await tabs.select(id);
    return tabInfo(id);
  },

  async newTab(p, ctx) {
    checkWaitUntil(p.waitUntil);
    if (p.url) checkURL(p.url);
    const id = await tabs.open();
    if (p.url) await handlers.navigate({ url: p.url, waitUntil: p.waitUntil }, { ...ctx, tabId: String(id) });
    return tabInfo(id);
  },

  async closeTab(p, ctx) {
    let id;
    if (!ctx.tabId) {
      id = await tabs.selectedId();
      if (id === null) throw fail('TAB_NOT_FOUND', 'there is no open tab to close');
    } else {
      id = tabs.parseId(ctx.tabId);
    }
    await tabs.close(id);
    states.delete(id);
    return {};
  },

  async navigate(p, ctx) {
    checkWaitUntil(p.waitUntil);
    checkURL(p.url);
    let status = 0;
    try {
      const st = await onTab(ctx, 'navigate', async (c) => {
        status = await gotoURL(c, p.url, p.waitUntil);
      });
      return withStatus(st, status);
    } catch (e) {
      if (!e.restricted && !(e.code === 'DETACHED' && RESTRICTED.test(p.url))) throw e;
    }
    // The tab shows a page no debugger may attach to (the New Tab page,
    // chrome://settings), or is to show one: chrome.tabs navigates it, then
    // the debugger takes over on the new page, if it may.
    const id = await tabs.resolve(ctx.tabId);
    await leaveRestricted(ctx, id, p.url);
    if (RESTRICTED.test(p.url)) {
      const t = await tabs.get(id);
      return { tabId: String(id), url: t.url || p.url, title: tabs.displayTitle(t.title, t.url || '') };
    }
    const st = await onTab({ ...ctx, tabId: String(id) }, 'navigate', async (c) => {
      await waitLoader(c, c.st.loaderId, p.waitUntil, 'navigation to', p.url, -1);
      status = await navStatus(c);
    });
    return withStatus(st, status);
  },

  back: (p, ctx) => history(p, ctx, 'back', -1),
  forward: (p, ctx) => history(p, ctx, 'forward', 1),
  reload: (p, ctx) => history(p, ctx, 'reload', 0),

  async click(p, ctx) {
    const button = checkButton(p.button);
    const count = p.count || 1;
    if (!Number.isInteger(count) || count < 1 || count > 3) throw fail('BAD_ARGS', `count ${p.count} is not 1, 2 or 3`);
    validateTarget(p);
    return onTab(ctx, 'click', async (c) => {
      const pt = await targetPoint(c, 'click', p, true);
      await click(c, pt, button, count);
    });
  },

  async type(p, ctx) {
    validateTarget(p);
    const text = typeof p.text === 'string' ? p.text : '';
    return onTab(ctx, 'type', async (c) => {
      if (p.clear) await fillTarget(c, 'type', p, '');
      else await targetOp(c, 'type', p, 'focus', { edit: 'text' });
      if (text) await typeText(c, text);
      if (p.pressEnter) await pressCombo(c, { modifiers: [], key: 'Enter' });
    });
  },

  async fill(p, ctx) {
    validateTarget(p);
    return onTab(ctx, 'fill', (c) => fillTarget(c, 'fill', p, typeof p.value === 'string' ? p.value : ''));
  },

  async press(p, ctx) {
    const combo = parseCombo(p.key, p.modifiers || [], /Mac/.test(navigator.platform));
    if (!isZero(p.target)) validateTarget(p.target);
    return onTab(ctx, 'press', async (c) => {
      if (!isZero(p.target)) await targetOp(c, 'press', p.target, 'focus', { edit: keyTypes(combo) ? 'text' : 'key' });
      await pressCombo(c, combo);
    });
  },

  async hover(p, ctx) {
    validateTarget(p);
    return onTab(ctx, 'hover', async (c) => {
      const pt = await targetPoint(c, 'hover', p, false);
      await mouse(c, 'mouseMoved', pt.x, pt.y);
    });
  },

  async scroll(p, ctx) {
    if (!isZero(p.target)) {
      validateTarget(p.target);
      return onTab(ctx, 'scroll', (c) => targetOp(c, 'scroll', p.target, 'scroll'));
    }
    if (!p.dx && !p.dy) throw fail('BAD_ARGS', 'scroll needs a target or a non-zero dx/dy');
    return onTab(ctx, 'scroll', async (c) => {
      const start = await inWorld(c.st, await serverScript('scrollpos'), []);
      const at = c.st.pointer || { x: 0, y: 0 };
      await mouse(c, 'mouseWheel', at.x, at.y, { deltaX: p.dx || 0, deltaY: p.dy || 0 });
      await inWorld(c.st, await serverScript('scrollsettle'), [start]);
    });
  },

  async selectOption(p, ctx) {
    validateTarget(p);
    if (!Array.isArray(p.values) || p.values.length === 0) {
      throw fail('BAD_ARGS', 'values is empty', 'pass the value or label of at least one option');
    }
    let selected = [];
    const st = await onTab(ctx, 'select_option', async (c) => {
      const r = await targetOp(c, 'select_option', p, 'select', { values: p.values.map(String) });
      if (r.missing && r.missing.length) {
        let avail = (r.available || []).join(', ');
        if (r.more) avail += ', …';
        // The options are the page's words: fenced by the server (page),
        // never in the hint.
        throw fail('BAD_ARGS', `select_option: no option has the value or label "${r.missing.join('", "')}"`,
          "pass the value or label of one of the options; the page's options are listed below", 'the options are: ' + avail);
      }
      selected = Array.isArray(r.selected) ? r.selected : [];
    });
    st.selected = selected;
    return st;
  },

  async setFiles(p, ctx) {
    validateTarget(p);
    const files = Array.isArray(p.paths) ? p.paths.map(String) : [];
    return onTab(ctx, 'set_files', async (c) => {
      const obj = await targetOp(c, 'set_files', p, 'element', {}, { byValue: false });
      try {
        await csend(c, 'DOM.setFileInputFiles', { files, objectId: obj.objectId });
      } catch (e) {
        if (e instanceof WireError) throw e;
        throw fail('BAD_ARGS', `set_files on ${describeTarget(validateTarget(p))}: ${e.message}`,
          /not allowed/i.test(e.message) ? 'allow the extension "Allow access to file URLs" in chrome://extensions' : 'the target must be an <input type=file>');
      } finally {
        csend(c, 'Runtime.releaseObject', { objectId: obj.objectId }).catch(() => {});
      }
    });
  },

  async drag(p, ctx) {
    try {
      validateTarget(p.from);
    } catch (e) {
      throw fail('BAD_ARGS', 'from: ' + e.message, e.hint);
    }
    try {
      validateTarget(p.to);
    } catch (e) {
      throw fail('BAD_ARGS', 'to: ' + e.message, e.hint);
    }
    return onTab(ctx, 'drag', async (c) => {
      const from = await targetPoint(c, 'drag (from)', p.from, false);
      const to = await targetPoint(c, 'drag (to)', p.to, false);
      await dragPoints(c, from, to);
    });
  },

  async text(p, ctx) {
    let text = '';
    if (!isZero(p.target)) validateTarget(p.target);
    const st = await onTab(ctx, 'get_text', async (c) => {
      if (isZero(p.target)) {
        const [t, title] = await inWorld(c.st, await serverScript('text'), []);
        text = t;
        c.title = title;
        return;
      }
      text = (await targetOp(c, 'get_text', p.target, 'text')).text;
    });
    st.text = text ?? '';
    return st;
  },

  async html(p, ctx) {
    let text = '';
    if (!isZero(p.target)) validateTarget(p.target);
    const st = await onTab(ctx, 'get_html', async (c) => {
      if (isZero(p.target)) text = await inWorld(c.st, fnDecl(pageContent), []);
      else text = (await targetOp(c, 'get_html', p.target, 'html', { outer: !!p.outer })).text;
    });
    st.text = text ?? '';
    return st;
  },

  async screenshot(p, ctx) {
    let format = 'png';
    let quality;
    switch (String(p.format || '').toLowerCase()) {
      case '':
      case 'png':
        break;
      case 'jpeg':
      case 'jpg':
        format = 'jpeg';
        quality = p.quality || 80;
        if (quality < 1 || quality > 100) throw fail('BAD_ARGS', `quality ${p.quality} is not between 1 and 100`);
        break;
      default:
        throw fail('BAD_ARGS', `format ${JSON.stringify(p.format)} is not png or jpeg`);
    }
    const hasTarget = !isZero(p.target);
    if (hasTarget) {
      validateTarget(p.target);
      if (p.fullPage) throw fail('BAD_ARGS', 'fullPage and target exclude each other', 'pass a target for one element, or fullPage for the whole page');
    }
    if (p.maxHeight < 0) throw fail('BAD_ARGS', 'maxHeight must not be negative');
    const limit = p.maxHeight || DEFAULT_MAX_SCREENSHOT_HEIGHT;
    let data = '';
    let truncated = false;
    let fullHeight = 0;
    const st = await onTab(ctx, 'screenshot', async (c) => {
      const args = { format };
      if (quality !== undefined) args.quality = quality;
      if (hasTarget) {
        const r = await targetOp(c, 'screenshot', p.target, 'rect');
        if (!(r.width > 0 && r.height > 0)) {
          throw fail('TIMEOUT', `screenshot: the element of ${describeTarget(p.target)} has no size (it is not visible)`, 'wait_for it to be visible, or take a new snapshot');
        }
        const m = await csend(c, 'Page.getLayoutMetrics');
        const vp = m.cssLayoutViewport || m.layoutViewport;
        const x = Math.floor(r.x);
        const y = Math.floor(r.y);
        args.clip = { x: x + vp.pageX, y: y + vp.pageY, width: Math.ceil(r.width + r.x - x), height: Math.ceil(r.height + r.y - y), scale: 1 };
        args.captureBeyondViewport = true;
      } else if (p.fullPage) {
        const [w, h] = await inWorld(c.st, await serverScript('dims'), []);
        if (h > limit) {
          truncated = true;
          fullHeight = Math.ceil(h);
        }
        args.clip = { x: 0, y: 0, width: Math.ceil(w), height: Math.min(Math.ceil(h), limit), scale: 1 };
        args.captureBeyondViewport = true;
      } else {
        // The viewport the page lays out in (innerWidth x innerHeight),
        // which a device-metrics override may make differ from the
        // window's surface that a bare capture would return.
        const m = await csend(c, 'Page.getLayoutMetrics');
        const vv = m.cssVisualViewport || m.visualViewport;
        args.clip = { x: vv.pageX, y: vv.pageY, width: Math.floor(vv.clientWidth), height: Math.floor(vv.clientHeight), scale: 1 };
        args.captureBeyondViewport = true;
      }
      const r = await csend(c, 'Page.captureScreenshot', args);
      data = r.data;
    });
    const size = imageSize(data);
    const out = { ...st, data, mimeType: format === 'png' ? 'image/png' : 'image/jpeg', width: size.width, height: size.height };
    if (truncated) {
      out.truncated = true;
      out.fullHeight = fullHeight;
    }
    return out;
  },

  async eval(p, ctx) {
    if (typeof p.expression !== 'string' || !p.expression.trim()) throw fail('BAD_ARGS', 'expression is empty');
    let res = { ok: false };
    const st = await onTab(ctx, 'eval', async (c) => {
      const opts = { awaitPromise: !!p.awaitPromise, timeoutMs: budget(ctx) };
      const safe = await serverScript('jsonsafe');
      let r = await csend(c, 'Runtime.evaluate', {
        expression: evalSource(await serverScript('eval'), safe, p.expression, opts), returnByValue: true, awaitPromise: true, userGesture: true,
      });
      if (r.exceptionDetails && isSyntaxError(r.exceptionDetails)) {
        // Statements, not an expression: evaluate them bare (a promise they
        // produce is awaited), then make the value JSON-safe.
        r = await csend(c, 'Runtime.evaluate', { expression: p.expression, awaitPromise: true, userGesture: true, replMode: true });
        if (!r.exceptionDetails) {
          res = { ok: true, value: await bareValue(c, r.result || {}, safe) };
          return;
        }
      }
      if (r.exceptionDetails) {
        const msg = pageError(r.exceptionDetails);
        if (msg.includes('the promise did not settle within')) {
          throw fail('TIMEOUT', 'eval: the promise did not settle before the deadline', 'retry with a larger timeout_ms, or evaluate without awaitPromise');
        }
        res = { ok: false, error: msg };
        return;
      }
      const v = (r.result && r.result.value) || {};
      if (typeof v.t === 'string') c.title = v.t;
      res = { ok: true, value: v.v ?? null };
    });
    return { ...st, ...res };
  },

  async waitFor(p, ctx) {
    const hasTarget = !isZero(p.target);
    const hasText = typeof p.text === 'string' && p.text !== '';
    if (hasTarget === hasText) throw fail('BAD_ARGS', 'pass exactly one of target or text');
    if (hasTarget) validateTarget(p.target);
    let desc;
    if (hasText) desc = `the text ${JSON.stringify(p.text)} to ${p.gone ? 'disappear' : 'appear'}`;
    else if (p.gone) desc = describeTarget(p.target) + ' to disappear or be hidden';
    else if (p.visible) desc = describeTarget(p.target) + ' to be visible';
    else desc = describeTarget(p.target) + ' to appear';
    const start = Date.now();
    const st = await onTab(ctx, 'wait_for ' + desc, async (c) => {
      const s = hasTarget ? await scripts() : null;
      const hasTextSrc = hasText ? await serverScript('hastext') : '';
      const check = async () => {
        if (hasText) return (await inWorld(c.st, hasTextSrc, [p.text])) !== !!p.gone;
        let r;
        if (p.target.ref) {
          if (!/^[a-z]+[0-9]+$/.test(p.target.ref)) throw refError(p.target.ref, 'malformed', '');
          r = await runSource(c.st, s.element, [{ op: 'state', ref: p.target.ref }]);
          if (r && r.error) {
            if (r.why === 'navigated' && !(await issuedToken(p.target.ref.replace(/[0-9]+$/, '')))) throw refError(p.target.ref, 'unknown', '');
            throw refError(p.target.ref, r.error, r.why);
          }
        } else {
          r = await runSource(c.st, s.selector, [{ selector: p.target.selector, op: 'probe' }]);
          if (r && r.error === 'badselector') {
            throw fail('BAD_ARGS', `wait_for: invalid selector: ${r.why}`, 'use a CSS selector, or a Playwright selector such as text=Sign in or role=button[name="OK"]');
          }
        }
        if (p.gone) return !r.visible;
        if (p.visible) return !!r.visible;
        return !!r.attached;
      };
      const until = Date.now() + budget(ctx);
      let lastErr;
      for (;;) {
        aborted(ctx);
        let ok = false;
        try {
          ok = await check();
        } catch (e) {
          if (e instanceof WireError) throw e;
          lastErr = e; // a navigation replaced the document mid-check
        }
        if (ok) return;
        if (Date.now() >= until) {
          const why = lastErr ? ` (last check failed: ${String(lastErr.message || lastErr).split('\n')[0]})` : '';
          throw fail('TIMEOUT', `waited ${Date.now() - start} ms for ${desc}${why}`,
            'retry with a larger timeout_ms, or check the condition with get_text or screenshot');
        }
        await sleep(Math.min(POLL_MS, Math.max(until - Date.now(), 1)));
      }
    });
    st.elapsedMs = Date.now() - start;
    return st;
  },

  // webmcp runs one command of the WebMCP domain (or what following page
  // tools needs) on a tab, for the server's page-tool tracking. Only these
  // commands pass; Runtime.evaluate only of the server's own page-tools
  // script (welcome.scripts.webmcp), in the page's main world, where
  // polyfills live. Its answer comes back as the command's reply, which
  // the page cannot forge or see.
  async webmcp(p, ctx) {
    const method = String(p.method || '');
    const params = p.params && typeof p.params === 'object' ? p.params : {};
    if (!WEBMCP_COMMANDS.has(method)) throw fail('BAD_ARGS', `webmcp does not run ${method}`);
    if (method === 'Runtime.evaluate') {
      const got = await chrome.storage.session.get(SCRIPTS_KEY);
      const src = got[SCRIPTS_KEY] && got[SCRIPTS_KEY].webmcp;
      if (typeof src !== 'string' || !src || typeof params.expression !== 'string' || !params.expression.startsWith('(' + src + ')(')) {
        throw fail('BAD_ARGS', 'webmcp evaluates only the server\'s page-tools script', 'update chromegate and the extension together');
      }
    }
    const tabId = await tabs.resolve(ctx.tabId);
    // The server's bound on what a tool of this tab returns (onEvent).
    if (method === 'WebMCP.invokeTool' && Number(p.maxOutput) > 0) state(tabId).webmcpMax = Number(p.maxOutput);
    await bounded(ctx, 'webmcp', attach(tabId), Date.now());
    return await send(tabId, method, params);
  },

  async network(p, ctx) {
    let out;
    const st = await onTab(ctx, 'network_requests', async (c) => {
      out = netlogs.tab(c.tabId).list(p.navigations);
    });
    return { ...st, ...out };
  },

  async networkEntry(p, ctx) {
    const out = {};
    const st = await onTab(ctx, 'network_request', async (c) => {
      const e = netlogs.tab(c.tabId).find(p.id);
      if (!e) {
        throw fail('BAD_ARGS', `no request ${JSON.stringify(String(p.id))} in the tab's network log`,
          'call network_requests for the ids; the log keeps the last navigations only');
      }
      out.request = e.request;
      if (!p.body) return;
      if (e.request.outcome !== 'allowed') {
        out.bodyNote = 'no body: the request was ' + e.request.outcome;
        return;
      }
      let b;
      try {
        b = await csend(c, 'Network.getResponseBody', { requestId: e.requestId });
      } catch (err) {
        out.bodyNote = 'the body is not available: ' + String((err && err.message) || err).split('\n')[0];
        return;
      }
      const t = textBody(e.request.mimeType, b.body || '', b.base64Encoded, p.maxBody);
      out.bodySize = t.size;
      if (t.note) {
        out.bodyNote = t.note;
      } else {
        out.body = t.text;
        if (t.truncated) out.bodyTruncated = true;
      }
    });
    return { ...st, ...out };
  },

  async runScript(p, ctx) {
    if (typeof p.source !== 'string' || !p.source.trim()) throw fail('BAD_ARGS', 'the script source is empty');
    let value = null;
    const st = await onTab(ctx, 'run_script', async (c) => {
      value = await runSource(c.st, p.source, [p.arg === undefined ? null : p.arg]);
    });
    st.value = value ?? null;
    return st;
  },

  async cookies(p) {
    const urls = Array.isArray(p.urls) ? p.urls : [];
    for (const u of urls) {
      let ok = false;
      try {
        ok = !!new URL(u).host;
      } catch {
        ok = false;
      }
      if (!ok) throw fail('BAD_ARGS', `${JSON.stringify(u)} is not an absolute URL`);
    }
    const id = await cookieTab();
    let list;
    if (urls.length) {
      list = (await send(id, 'Network.getCookies', { urls })).cookies;
    } else {
      try {
        list = (await send(id, 'Network.getAllCookies')).cookies;
      } catch (e) {
        if (e instanceof WireError) throw e;
        list = (await send(id, 'Storage.getCookies', {})).cookies;
      }
    }
    return (list || []).map(fromCDPCookie);
  },

  async setCookies(p) {
    if (!Array.isArray(p.cookies) || p.cookies.length === 0) throw fail('BAD_ARGS', 'cookies is empty');
    const cookies = p.cookies.map(toCDPCookie);
    const id = await cookieTab();
    try {
      await send(id, 'Network.setCookies', { cookies });
    } catch (e) {
      if (e instanceof WireError) throw e;
      throw fail('BAD_ARGS', `cookies_set failed: ${e.message}`, 'check the cookies\' domain, path and secure flags');
    }
    return {};
  },

  async clipboardWrite(p, ctx) {
    const text = typeof p.text === 'string' ? p.text : '';
    await onTab(ctx, 'clipboard_write', async (c) => {
      try {
        await inWorld(c.st, await serverScript('clipboard'), [text], { userGesture: true });
      } catch (e) {
        if (e instanceof WireError && e.code === 'EVAL_FAILED') {
          throw fail('EVAL_FAILED', 'clipboard_write: ' + e.message.replace(/^a chromegate page script failed: (Error: )?/, ''), 'focus the page (click it) and retry');
        }
        throw e;
      }
    });
    return {};
  },

  async downloadTarget(p, ctx) {
    const target = p.target || {};
    validateTarget(target);
    let item;
    await onTab(ctx, 'download_file', async (c) => {
      const since = Date.now();
      const wait = nextDownload(ctx, since);
      try {
        const pt = await targetPoint(c, 'download_file', target, true);
        await click(c, pt, 'left', 1);
      } catch (e) {
        wait.cancel();
        throw e;
      }
      item = await wait.promise;
      // Chrome names the file a moment later; wait briefly for it.
      for (let i = 0; i < 10 && !item.filename; i++) {
        await sleep(50);
        const [now] = await chrome.downloads.search({ id: item.id });
        if (now) item = now;
      }
      try {
        await chrome.downloads.cancel(item.id);
      } catch {
        // already complete
      }
      try {
        await chrome.downloads.erase({ id: item.id });
      } catch {
        // gone
      }
    });
    const url = item.finalUrl || item.url || '';
    if (/^(blob|data):/i.test(url)) {
      throw fail('DOWNLOAD_FAILED', `the download is a ${url.split(':')[0]}: URL, which only the page can read`, 'the server cannot fetch it; download a real URL instead');
    }
    const name = (item.filename || '').split(/[\\/]/).pop();
    return { url, filename: name, mimeType: item.mime || '' };
  },

  async status() {
    const all = await tabs.all();
    const sel = all.length ? await tabs.selectedId() : null;
    const info = await userAgentInfo();
    return {
      browser: info.browser,
      version: info.version,
      tabs: all.length,
      selectedTab: sel === null ? '' : String(sel),
      attachedTabs: (await attachedTabs()).map(String),
      extVersion: chrome.runtime.getManifest().version,
      userAgent: info.userAgent,
    };
  },
};

// dragPoints drags with trusted mouse events from one point to another in
// steps; when the page starts an HTML drag, Chrome hands it over
// (Input.dragIntercepted) and the drag is finished with drag events.
async function dragPoints(c, from, to) {
  c.st.drag = null;
  await csend(c, 'Input.setInterceptDrags', { enabled: true });
  try {
    await mouse(c, 'mouseMoved', from.x, from.y);
    await mouse(c, 'mousePressed', from.x, from.y, { button: 'left', buttons: 1, clickCount: 1 });
    for (let i = 1; i <= 2; i++) {
      await mouse(c, 'mouseMoved', from.x + (5 * i) / 2, from.y + (5 * i) / 2, { button: 'left', buttons: 1 });
    }
    await inWorld(c.st, fnDecl(pageFrames), []);
    const sx = from.x + 5;
    const sy = from.y + 5;
    const data = c.st.drag;
    for (let i = 1; i <= 5; i++) {
      const x = sx + ((to.x - sx) * i) / 5;
      const y = sy + ((to.y - sy) * i) / 5;
      if (data) await csend(c, 'Input.dispatchDragEvent', { type: i === 1 ? 'dragEnter' : 'dragOver', x, y, data });
      else await mouse(c, 'mouseMoved', x, y, { button: 'left', buttons: 1 });
    }
    if (data) {
      await csend(c, 'Input.dispatchDragEvent', { type: 'drop', x: to.x, y: to.y, data });
    }
    await mouse(c, 'mouseReleased', to.x, to.y, { button: 'left', buttons: 0, clickCount: 1 });
  } finally {
    c.st.drag = null;
    await csend(c, 'Input.setInterceptDrags', { enabled: false }).catch(() => {});
  }
}

export { modifierMask };
