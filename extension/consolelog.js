// The console log of the tabs the extension drives: the Runtime domain's
// consoleAPICalled and exceptionThrown events of a tab's debugger session,
// recorded per tab in a ring, each message in the network log's generation
// (netlog.js), so that console and network listings with the same number
// of navigations cover the same pages. Pure: events come in through
// onEvent, the clock is injected. Mirrors executor/console.go; the Go side
// (executor/ext/console.go) applies the bounds once more.
//
// Bounded in count and per message: a page that logs in a loop, or logs
// ten megabytes at once, costs at most MAX_ENTRIES messages of MAX_TEXT +
// MAX_STACK bytes, and the cutting happens before anything is kept.

import { redactURL, MAX_NAVIGATIONS } from './netlog.js';

export const MAX_ENTRIES = 1000;
export const MAX_TEXT = 4 * 1024;
export const MAX_STACK = 4 * 1024;
const MAX_URL = 2048;
// MAX_CONTEXTS bounds the execution contexts a tab's log remembers.
const MAX_CONTEXTS = 512;
// A message's arguments read: at most this many, each this long.
const MAX_ARGS = 32;

// level maps a console API call's type to a level.
export function level(type) {
  switch (type) {
    case 'debug': case 'verbose': return 'debug';
    case 'info': return 'info';
    case 'warning': case 'warn': return 'warn';
    case 'error': case 'assert': return 'error';
    default: return 'log';
  }
}

// cut returns s cut at max UTF-8 bytes on a character boundary, and its
// whole length in bytes (0 when it was not cut).
export function cut(s, max) {
  s = String(s);
  // A string of max/3 UTF-16 units or fewer is max bytes or fewer.
  if (s.length * 3 <= max) return { text: s, bytes: 0 };
  const enc = new TextEncoder();
  // Encode no more than the cap can use: a 10 MB message is not copied.
  const head = s.slice(0, max + 1);
  const b = enc.encode(head);
  if (b.length <= max && head.length === s.length) return { text: s, bytes: 0 };
  let n = Math.min(max, b.length);
  while (n > 0 && (b[n] & 0xc0) === 0x80) n--;
  const text = new TextDecoder().decode(b.subarray(0, n));
  const bytes = head.length === s.length ? b.length : enc.encode(s).length;
  return bytes > max ? { text, bytes } : { text: s, bytes: 0 };
}

// argText is how DevTools prints one argument of a console call.
function argText(a) {
  if (!a || typeof a !== 'object') return String(a);
  if (a.type === 'string') return String(a.value);
  if ('unserializableValue' in a) return String(a.unserializableValue);
  if ('value' in a) return a.value === null ? 'null' : typeof a.value === 'object' ? JSON.stringify(a.value) : String(a.value);
  if (a.type === 'undefined') return 'undefined';
  return String(a.description || a.className || a.type || '');
}

// messageText joins a console call's arguments, as the cdp backend's
// Playwright does (space-separated), reading no more than max bytes' worth.
function messageText(args, max) {
  const parts = [];
  let len = 0;
  let total = 0;
  for (const a of (args || []).slice(0, MAX_ARGS)) {
    const t = argText(a);
    total += t.length + (parts.length ? 1 : 0);
    if (len <= max) {
      const piece = t.slice(0, max + 1 - len);
      parts.push(piece);
      len += piece.length + 1;
    }
  }
  return { text: parts.join(' '), total: total > max ? total : 0 };
}

function stackText(st) {
  if (!st || !Array.isArray(st.callFrames)) return '';
  return st.callFrames.slice(0, 50).map((f) =>
    `    at ${f.functionName || '<anonymous>'} (${f.url}:${(f.lineNumber | 0) + 1}:${(f.columnNumber | 0) + 1})`).join('\n');
}

function firstFrame(st) {
  const f = st && Array.isArray(st.callFrames) && st.callFrames[0];
  return f ? { url: f.url || '', line: (f.lineNumber | 0) + 1, column: (f.columnNumber | 0) + 1 } : null;
}

// TabConsole is one tab's log.
export class TabConsole {
  constructor({ now = () => Date.now(), max = MAX_ENTRIES } = {}) {
    this.now = now;
    this.max = max;
    this.next = 0;
    this.ring = []; // oldest first
    this.dropped = new Map(); // generation -> messages let go
    this.contexts = new Map(); // execution context id -> {frameId, origin}
  }

  // onEvent records one Runtime event; nav is the tab's generation, page
  // the URL of its document, mainFrameId its main frame. A message is the
  // document's whose execution context logged it (the context's frame and
  // security origin, as the browser created it): never the script URL a
  // page can write, nor the tab's page for a frame's message.
  onEvent(method, p, nav, page, mainFrameId) {
    let m;
    if (method === 'Runtime.executionContextCreated') {
      const c = p.context || {};
      const aux = c.auxData || {};
      this.contexts.set(c.id, { frameId: String(aux.frameId || ''), origin: !c.origin || c.origin === '://' ? 'null' : String(c.origin) });
      while (this.contexts.size > MAX_CONTEXTS) this.contexts.delete(this.contexts.keys().next().value);
      return;
    }
    if (method === 'Runtime.executionContextDestroyed') {
      this.contexts.delete(p.executionContextId);
      return;
    }
    if (method === 'Runtime.executionContextsCleared') {
      this.contexts.clear();
      return;
    }
    if (method === 'Runtime.consoleAPICalled') {
      const { text, total } = messageText(p.args, MAX_TEXT);
      m = { level: level(p.type), text };
      if (total) m.textBytes = total; // the whole text's length, before add cuts it
      const f = firstFrame(p.stackTrace);
      if (f) Object.assign(m, f);
      if (m.level === 'error' || p.type === 'trace' || p.type === 'assert') {
        const s = stackText(p.stackTrace);
        if (s) m.stack = s;
      }
    } else if (method === 'Runtime.exceptionThrown') {
      const d = p.exceptionDetails || {};
      const ex = d.exception || {};
      // An Error's description is "Name: message\n    at ...": its first
      // line is the text and the whole is the stack, as V8 wrote it.
      const desc = typeof ex.description === 'string' ? ex.description : ('value' in ex ? argText(ex) : String(d.text || 'exception'));
      const nl = desc.indexOf('\n');
      const head = nl >= 0 ? desc.slice(0, nl) : desc;
      const prefix = String(d.text || 'Uncaught').replace(/\s+$/, '');
      m = { level: 'error', exception: true, text: /^Uncaught/.test(head) ? head : `${prefix} ${head}` };
      const s = stackText(d.stackTrace) || (nl >= 0 ? desc : '');
      if (s) m.stack = s;
      const f = firstFrame(d.stackTrace);
      if (f) Object.assign(m, f);
      else if (d.url) Object.assign(m, { url: d.url, line: (d.lineNumber | 0) + 1, column: (d.columnNumber | 0) + 1 });
    } else {
      return;
    }
    const id = method === 'Runtime.consoleAPICalled' ? p.executionContextId : (p.exceptionDetails || {}).executionContextId;
    const c = this.contexts.get(id);
    if (c) {
      const main = !!c.frameId && c.frameId === mainFrameId;
      m.doc = main ? { url: redactURL(cut(page || '', MAX_URL).text), origin: c.origin, main: true } : { origin: c.origin };
      m.page = main ? page || '' : c.origin;
    }
    m.nav = nav | 0;
    this.add(m);
  }

  // add bounds m and records it, letting go of generations no listing can
  // reach and, at the cap, of the oldest message.
  add(m) {
    const t = cut(m.text || '', MAX_TEXT);
    m.text = t.text;
    if (t.bytes || m.textBytes) m.textBytes = Math.max(t.bytes, m.textBytes || 0);
    if (m.stack) m.stack = cut(m.stack, MAX_STACK).text;
    if (m.url) m.url = redactURL(cut(m.url, MAX_URL).text);
    if (m.page) m.page = redactURL(cut(m.page, MAX_URL).text);
    m.timeMs = this.now();
    const old = m.nav - MAX_NAVIGATIONS;
    let n = 0;
    while (n < this.ring.length && this.ring[n].nav <= old) n++;
    if (n) this.ring.splice(0, n);
    for (const g of [...this.dropped.keys()]) if (g <= old) this.dropped.delete(g);
    m.id = String(++this.next);
    if (this.ring.length >= this.max) {
      const gone = this.ring.shift();
      this.dropped.set(gone.nav, (this.dropped.get(gone.nav) || 0) + 1);
    }
    this.ring.push(m);
  }

  // list answers the wire method "console": the last n generations up to
  // nav, the tab's current one.
  list(nav, n) {
    n = Math.max(1, Math.min(Number(n) || 1, MAX_NAVIGATIONS));
    const from = nav - n + 1;
    let dropped = 0;
    for (let g = Math.max(from, 0); g <= nav; g++) dropped += this.dropped.get(g) || 0;
    const messages = this.ring.filter((m) => m.nav >= from && m.nav <= nav).map((m) => ({ ...m }));
    const out = { messages, nav };
    if (dropped) out.dropped = dropped;
    return out;
  }
}

// ConsoleLogs keeps a TabConsole per tab.
export class ConsoleLogs {
  constructor(opts = {}) {
    this.opts = opts;
    this.tabs = new Map();
  }

  tab(tabId) {
    let l = this.tabs.get(tabId);
    if (!l) {
      l = new TabConsole(this.opts);
      this.tabs.set(tabId, l);
    }
    return l;
  }

  onEvent(tabId, method, params, nav, page, mainFrameId) {
    if (!method.startsWith('Runtime.')) return;
    try {
      this.tab(tabId).onEvent(method, params || {}, nav, page, mainFrameId);
    } catch {
      // a malformed event is not worth a broken log
    }
  }

  forget(tabId) {
    this.tabs.delete(tabId);
  }
}
