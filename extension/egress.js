// The request boundary in the tabs the extension drives: every request of
// a driven tab, of its out-of-process frames and of their workers is
// paused (CDP Fetch), described, decided by the server (a decide frame,
// answered by a decision frame) and only then continued or failed. What
// Fetch cannot pause is closed with declarativeNetRequest session rules
// limited to tab ids: WebSocket handshakes (blocked in driven tabs except
// to the page's own origin when the server allows it) and the first
// navigation of a popup a driven page opens (blocked until the popup is
// hooked and its URL decided). Nothing here acts on a tab the extension
// does not drive.
//
// Fail closed: no answer within DECIDE_TIMEOUT_MS, a socket that is down,
// a malformed answer — the request fails (net::ERR_BLOCKED_BY_CLIENT), the
// page never hangs on it.
//
// chrome.* is injected (see sw.js), so the logic runs under node --test.

// DECIDE_TIMEOUT_MS bounds the wait for the server's decision (the server
// bounds its own decision at 2 s).
export const DECIDE_TIMEOUT_MS = 5000;

// MAX_WS_ORIGINS bounds the WebSocket origins allowed at once.
export const MAX_WS_ORIGINS = 100;

// POPUP_URL_MS is how long a new popup's URL is waited for.
export const POPUP_URL_MS = 1500;

// Rule ids of the session rules this module owns.
export const RULE_POPUP = 1;
export const RULE_WS_BLOCK = 2;
export const RULE_WS_ALLOW = 100; // .. RULE_WS_ALLOW + MAX_WS_ORIGINS - 1

export const FETCH_PATTERNS = Object.freeze([{ urlPattern: '*', requestStage: 'Request' }]);
export const AUTO_ATTACH = Object.freeze({ autoAttach: true, waitForDebuggerOnStart: true, flatten: true });

// Playwright's lower-case names for CDP's Network.ResourceType.
const TYPES = {
  Document: 'document', Stylesheet: 'stylesheet', Image: 'image', Media: 'media', Font: 'font',
  Script: 'script', TextTrack: 'texttrack', XHR: 'xhr', Fetch: 'fetch', EventSource: 'eventsource',
  WebSocket: 'websocket', Manifest: 'manifest', Ping: 'ping', Other: 'other',
};

// resourceType maps a CDP resource type to Playwright's name; anything
// else (Prefetch, Preflight, CSPViolationReport, SignedExchange, FedCM...)
// is "other".
export function resourceType(cdpType) {
  return Object.prototype.hasOwnProperty.call(TYPES, cdpType) ? TYPES[cdpType] : 'other';
}

// originOf is "scheme://host[:port]" of an http(s)/ws(s) URL, "" for any
// other or an unparsable one.
export function originOf(raw) {
  let u;
  try {
    u = new URL(raw);
  } catch {
    return '';
  }
  if (!/^(https?|wss?):$/.test(u.protocol)) return '';
  return u.origin;
}

// hostOf is the host of an http(s) URL without port or brackets, "".
export function hostOf(raw) {
  try {
    const u = new URL(raw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return '';
    return u.hostname.replace(/^\[|\]$/g, '');
  } catch {
    return '';
  }
}

// wsOrigin is the WebSocket origin of a page ("ws://host:port/" for an
// http page, "wss://host/" for https), "" for other pages.
export function wsOrigin(pageURL) {
  const o = originOf(pageURL);
  if (!o.startsWith('http')) return '';
  return o.replace(/^http/, 'ws') + '/';
}

// describe turns a paused request into the decide frame's request.
// frame is what is known of the tab: {topLevel, frameOrigin, pageOrigin}.
export function describe(params, { topLevel = false, frameOrigin = '', pageOrigin = '' } = {}) {
  const type = resourceType(params.resourceType);
  const req = params.request || {};
  return {
    url: String(req.url || '') + (req.urlFragment || ''),
    method: String(req.method || 'GET'),
    resourceType: type,
    navigation: type === 'document',
    topLevel: type === 'document' && topLevel,
    frameOrigin,
    pageOrigin,
  };
}

// sessionRules are the declarativeNetRequest session rules for a state:
// driven (tab ids hooked or being hooked), known (every tab that is not a
// popup waiting for its decision), initiators (hosts of the documents
// shown in driven tabs), ws (WebSocket origins the server allowed).
//
// - RULE_POPUP blocks a top-level load in a tab that is not known, started
//   by a page of a driven host: the first navigation of a popup a driven
//   page opens, before the extension has hooked the popup. The extension
//   then decides the popup's URL and loads it itself.
// - RULE_WS_BLOCK blocks WebSocket handshakes of driven tabs, which Fetch
//   does not pause; RULE_WS_ALLOW+i let through those to allowed origins.
export function sessionRules({ driven = [], known = [], initiators = [], ws = [] }) {
  const rules = [];
  const tabs = [...new Set(driven)].sort((a, b) => a - b);
  if (!tabs.length) return rules;
  const hosts = [...new Set(initiators)].filter(Boolean).sort();
  if (hosts.length) {
    rules.push({
      id: RULE_POPUP, priority: 1, action: { type: 'block' },
      condition: { resourceTypes: ['main_frame'], initiatorDomains: hosts, excludedTabIds: [...new Set(known)].sort((a, b) => a - b) },
    });
  }
  rules.push({ id: RULE_WS_BLOCK, priority: 1, action: { type: 'block' }, condition: { resourceTypes: ['websocket'], tabIds: tabs } });
  [...new Set(ws)].slice(-MAX_WS_ORIGINS).forEach((o, i) => {
    rules.push({ id: RULE_WS_ALLOW + i, priority: 2, action: { type: 'allow' }, condition: { urlFilter: '|' + o, resourceTypes: ['websocket'], tabIds: tabs } });
  });
  return rules;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Egress owns the hooks. deps:
//   send(frame)                  writes a frame to the server; throws when not connected
//   cdp(target, method, params)  chrome.debugger.sendCommand
//   dnr: {update(opts), ids()}   chrome.declarativeNetRequest session rules
//   attach(tabId)                attaches the executor to a tab (which calls hook)
//   tab(tabId)                   chrome.tabs.get
//   tabs()                       chrome.tabs.query({})
//   driven()                     tab ids attached before a worker restart
//   close(tabId)                 chrome.tabs.remove
//   announce(tabId)              tells the server of a popup let through (cdp.js
//                                keeps a hidden tab's attach to itself)
//   log(level, msg, fields)
export class Egress {
  constructor(deps) {
    this.d = { log: () => {}, announce: () => {}, timeoutMs: DECIDE_TIMEOUT_MS, popupURLMs: POPUP_URL_MS, driven: async () => [], ...deps };
    this.seq = 0;
    this.pending = new Map(); // decide id -> resolve
    this.tabs = new Map(); // driven tab id -> {mainFrame, frames: Map frameId -> origin, pageOrigin}
    this.popups = new Set(); // popups of driven tabs waiting for their decision
    this.known = new Set(); // every tab that is not such a popup
    this.initiators = new Set();
    this.ws = new Map(); // ws origin -> true (allowed) | false (denied), in insertion order
    this.applied = '';
    this.chain = Promise.resolve();
    this.ready = null;
  }

  // start learns the open tabs and the tabs still attached from before a
  // worker restart; rules are only rewritten after it.
  start() {
    if (!this.ready) {
      this.ready = (async () => {
        for (const t of await this.d.tabs()) if (typeof t.id === 'number') this.known.add(t.id);
        for (const id of await this.d.driven()) this.#tab(id);
      })().catch((e) => this.d.log('warn', 'egress: start: ' + e.message));
    }
    return this.ready;
  }

  #tab(tabId) {
    let t = this.tabs.get(tabId);
    if (!t) {
      t = { mainFrame: '', frames: new Map(), pageOrigin: '' };
      this.tabs.set(tabId, t);
    }
    return t;
  }

  // drives reports whether the extension hooks tabId's requests.
  drives(tabId) {
    return this.tabs.has(tabId) || this.popups.has(tabId);
  }

  // hidden reports whether a tab is kept out of tab listings: a popup whose
  // URL is being decided (and closed if denied).
  hidden(tabId) {
    return this.popups.has(tabId);
  }

  // ---- decisions

  // ask asks the server to decide a request; it resolves {allow, reason},
  // never rejects, and denies when the server cannot answer in time.
  ask(request) {
    const id = 'd' + ++this.seq;
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish({ allow: false, reason: 'the server did not decide in time' }), this.d.timeoutMs);
      const finish = (v) => {
        if (!this.pending.has(id)) return;
        this.pending.delete(id);
        clearTimeout(timer);
        resolve(v);
      };
      this.pending.set(id, finish);
      try {
        this.d.send({ v: 1, type: 'decide', id, request });
      } catch (e) {
        finish({ allow: false, reason: 'not connected to the server' });
      }
    });
  }

  // onDecision takes a decision frame; an allow that is not exactly true
  // denies.
  onDecision(f) {
    const finish = f && this.pending.get(f.id);
    if (finish) finish({ allow: f.allow === true, reason: typeof f.reason === 'string' ? f.reason : '' });
  }

  // abortAll denies every request waiting for a decision (the socket closed).
  abortAll() {
    for (const finish of [...this.pending.values()]) finish({ allow: false, reason: 'the connection to the server closed' });
  }

  // ---- hooks

  // hook puts a tab under the boundary: children attached and paused on
  // start, every request of the tab paused. The executor calls it right
  // after chrome.debugger.attach and before anything else, so nothing the
  // tab loads while driven goes unpaused. It throws when the hook could not
  // be set: the tab must then not be driven.
  async hook(tabId) {
    await this.start();
    const target = { tabId };
    try {
      await this.#retry(() => this.d.cdp(target, 'Fetch.enable', { patterns: FETCH_PATTERNS }));
      await this.#retry(() => this.d.cdp(target, 'Target.setAutoAttach', AUTO_ATTACH));
    } catch (e) {
      this.release(tabId);
      throw e;
    }
    const t = this.#tab(tabId);
    try {
      const tree = await this.d.cdp(target, 'Page.getFrameTree', {});
      const f = tree && tree.frameTree && tree.frameTree.frame;
      if (f) {
        t.mainFrame = f.id;
        t.frames.set(f.id, originOf(f.url));
        t.pageOrigin = originOf(f.url);
        this.#shown(f.url, true);
      }
    } catch {
      // learnt from the first top-level document instead
    }
    await this.#sync();
  }

  // Chrome answers "Not attached to an active page" for a moment after a
  // commit; the hook is retried for up to half a second.
  async #retry(fn) {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        if (!/Not attached to an active page/i.test(String(e && e.message)) || attempt >= 10) throw e;
        await sleep(10 * (attempt + 1));
      }
    }
  }

  // release forgets a tab the debugger left (detach, close).
  release(tabId) {
    const had = this.tabs.delete(tabId) || this.popups.delete(tabId);
    if (had) this.#sync().catch(() => {});
  }

  onTabRemoved(tabId) {
    this.known.delete(tabId);
    this.popups.delete(tabId);
    this.tabs.delete(tabId);
    this.#sync().catch(() => {});
  }

  // onEvent is a chrome.debugger.onEvent listener.
  onEvent(source, method, params) {
    if (!source || source.tabId === undefined || !this.drives(source.tabId)) return;
    switch (method) {
      case 'Fetch.requestPaused':
        this.#paused(source, params).catch((e) => this.d.log('warn', 'egress: paused request: ' + e.message));
        break;
      case 'Target.attachedToTarget':
        this.#child(source, params).catch((e) => this.d.log('warn', 'egress: child target: ' + e.message));
        break;
      case 'Page.frameNavigated':
        if (!source.sessionId && params.frame && !params.frame.parentId) this.#tab(source.tabId).mainFrame = params.frame.id;
        break;
      default:
    }
  }

  async #paused(source, params) {
    const tabId = source.tabId;
    const target = source.sessionId ? { tabId, sessionId: source.sessionId } : { tabId };
    const t = this.#tab(tabId);
    if (!t.mainFrame && !source.sessionId) {
      try {
        const tree = await this.d.cdp({ tabId }, 'Page.getFrameTree', {});
        t.mainFrame = tree.frameTree.frame.id;
      } catch {
        // decided as a frame's load then
      }
    }
    const topLevel = !source.sessionId && params.frameId === t.mainFrame;
    const req = describe(params, { topLevel, frameOrigin: t.frames.get(params.frameId) || '', pageOrigin: t.pageOrigin });
    let v;
    if (topLevel && req.navigation && this.popups.has(tabId)) {
      // A popup's own first load: the extension loads the popup's URL
      // itself once decided (onTabCreated).
      v = { allow: false, reason: 'the popup is being decided' };
    } else {
      v = await this.ask(req);
    }
    if (v.allow && req.navigation) {
      const origin = originOf(req.url);
      t.frames.set(params.frameId, origin);
      if (t.frames.size > 200) t.frames.delete(t.frames.keys().next().value);
      if (topLevel) t.pageOrigin = origin;
      await this.#shown(req.url, topLevel);
    }
    try {
      if (v.allow) await this.d.cdp(target, 'Fetch.continueRequest', { requestId: params.requestId });
      else await this.d.cdp(target, 'Fetch.failRequest', { requestId: params.requestId, errorReason: 'BlockedByClient' });
    } catch {
      // the request is gone (the tab navigated away, the frame closed)
    }
  }

  // #shown records a document a driven tab is about to show: its host as an
  // initiator whose popups are held, and, for a top-level one, whether
  // WebSockets to its own origin are allowed. The rules are in place
  // before the document loads.
  async #shown(url, topLevel) {
    const host = hostOf(url);
    if (host) this.initiators.add(host);
    const o = topLevel ? wsOrigin(url) : '';
    if (o && !this.ws.has(o)) {
      const v = await this.ask({ url: o, method: 'GET', resourceType: 'websocket', navigation: false, topLevel: false, frameOrigin: originOf(url), pageOrigin: originOf(url) });
      // a denial is not remembered: the policy may change
      if (v.allow) {
        this.ws.set(o, true);
        if (this.ws.size > MAX_WS_ORIGINS) this.ws.delete(this.ws.keys().next().value);
      }
    }
    try {
      await this.#sync();
    } catch (e) {
      this.d.log('warn', 'egress: rules: ' + e.message);
    }
  }

  // #child hooks an out-of-process frame or a worker before it runs. A
  // worker has no Fetch domain: its requests pause in its frame's session.
  // A frame whose hook fails stays paused (fail closed).
  async #child(source, params) {
    const child = { tabId: source.tabId, sessionId: params.sessionId };
    const type = (params.targetInfo && params.targetInfo.type) || '';
    try {
      await this.d.cdp(child, 'Fetch.enable', { patterns: FETCH_PATTERNS });
    } catch (e) {
      if (type === 'iframe' || type === 'page') {
        this.d.log('warn', `egress: a ${type} of tab ${source.tabId} could not be hooked; it stays paused`, { error: String(e.message) });
        return;
      }
    }
    await this.d.cdp(child, 'Target.setAutoAttach', AUTO_ATTACH).catch(() => {});
    await this.d.cdp(child, 'Runtime.runIfWaitingForDebugger', {}).catch(() => {});
  }

  // ---- popups and other new tabs

  // onTabCreated is a chrome.tabs.onCreated listener. A tab opened by a
  // driven tab (a popup) is hooked and its URL decided: denied, it is
  // closed; allowed, the extension loads it. Any other tab is the user's:
  // it is only remembered, so the popup rule never holds it.
  async onTabCreated(tab) {
    if (!tab || typeof tab.id !== 'number') return;
    // hidden from listings at once, before anything is awaited
    if (this.drives(tab.openerTabId)) this.popups.add(tab.id);
    await this.start();
    if (!this.drives(tab.openerTabId)) {
      this.popups.delete(tab.id);
      this.known.add(tab.id);
      await this.#sync().catch(() => {});
      return;
    }
    const opener = this.tabs.get(tab.openerTabId);
    this.popups.add(tab.id);
    try {
      await this.d.attach(tab.id);
      const url = await this.#popupURL(tab.id, tab);
      let load = '';
      if (url && url !== 'about:blank') {
        const v = await this.ask({ url, method: 'GET', resourceType: 'document', navigation: true, topLevel: true,
          frameOrigin: opener ? opener.pageOrigin : '', pageOrigin: opener ? opener.pageOrigin : '' });
        if (!v.allow) {
          this.d.log('info', `egress: a popup to ${url} was denied: ${v.reason}`);
          await this.#close(tab.id);
          return;
        }
        load = url;
      }
      this.popups.delete(tab.id);
      this.known.add(tab.id);
      await this.#sync();
      if (load) await this.d.cdp({ tabId: tab.id }, 'Page.navigate', { url: load });
      // The server follows the tab from here (its page tools), on the
      // decided page rather than the held first load.
      this.d.announce(tab.id);
    } catch (e) {
      this.d.log('warn', 'egress: a popup could not be hooked; closing it', { error: String(e && e.message) });
      await this.#close(tab.id);
    }
  }

  async #close(tabId) {
    try {
      await this.d.close(tabId);
    } catch {
      // already closed
    }
    this.onTabRemoved(tabId);
  }

  // #popupURL waits for the URL a popup was opened with: its first load is
  // held (the popup rule, or failed in #paused), which leaves the URL on
  // the tab.
  async #popupURL(tabId, created) {
    const useful = (u) => u && u !== 'about:blank' && !u.startsWith('chrome://');
    if (useful(created.pendingUrl)) return created.pendingUrl;
    const until = Date.now() + this.d.popupURLMs;
    for (;;) {
      let t;
      try {
        t = await this.d.tab(tabId);
      } catch {
        throw new Error('the popup closed');
      }
      if (useful(t.pendingUrl)) return t.pendingUrl;
      if (useful(t.url)) return t.url;
      if (Date.now() >= until) return t.url || '';
      await sleep(50);
    }
  }

  // ---- rules

  // #sync rewrites the session rules when they changed; updates run one
  // at a time, in order.
  #sync() {
    const p = this.chain.then(async () => {
      await this.start();
      const rules = sessionRules({
        driven: [...this.tabs.keys(), ...this.popups],
        known: [...this.known],
        initiators: [...this.initiators],
        ws: [...this.ws.keys()],
      });
      const text = JSON.stringify(rules);
      if (text === this.applied) return;
      const old = this.applied === '' ? await this.d.dnr.ids() : JSON.parse(this.applied).map((r) => r.id);
      await this.d.dnr.update({ removeRuleIds: old, addRules: rules });
      this.applied = text;
    });
    this.chain = p.catch(() => {});
    return p;
  }
}
