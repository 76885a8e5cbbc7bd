// The network log of the tabs the extension drives: the Network domain's
// events of a tab's debugger session, recorded per tab in a ring, with a
// new generation at each main-frame document request (redirect hops
// excluded). Pure: events come in through onEvent, the clock is injected,
// and reading a body is the caller's (it needs the debugger). Mirrors
// executor/cdp/netlog.go; the Go side (executor/ext/network.go) applies
// the redaction and body rules once more.

export const MAX_ENTRIES = 1000;
export const MAX_NAVIGATIONS = 10;
export const MAX_BODY_BYTES = 64 * 1024;
// MAX_EARLY bounds the ExtraInfo headers kept for requests not yet seen,
// and the ended requests kept findable for ExtraInfo that comes late.
const MAX_EARLY = 200;
// MAX_FRAMES bounds the frame documents a tab's log remembers.
const MAX_FRAMES = 256;
export const REDACTED = '[redacted]';

const CREDENTIAL_HEADERS = new Set(['cookie', 'cookie2', 'set-cookie', 'set-cookie2', 'authorization', 'proxy-authorization']);

// redactHeaders turns a CDP headers object into a list of {name, value},
// credential values redacted, sorted by name. CDP joins repeated headers
// with "\n" (Set-Cookie); each line becomes an entry.
export function redactHeaders(headers) {
  const out = [];
  for (const [name, raw] of Object.entries(headers || {})) {
    const secret = CREDENTIAL_HEADERS.has(name.trim().toLowerCase());
    for (const value of String(raw).split('\n')) out.push({ name, value: secret ? REDACTED : value });
  }
  out.sort((a, b) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : a.name.toLowerCase() > b.name.toLowerCase() ? 1 : 0));
  return out;
}

// redactURL drops the userinfo of an absolute URL.
export function redactURL(raw) {
  const i = raw.indexOf('://');
  if (i < 0) return raw;
  const rest = raw.slice(i + 3);
  let end = rest.search(/[/?#]/);
  if (end < 0) end = rest.length;
  const at = rest.lastIndexOf('@', end - 1);
  return at >= 0 ? raw.slice(0, i + 3) + rest.slice(at + 1) : raw;
}

// resourceType names a CDP resource type as Playwright does.
export function resourceType(t) {
  const m = String(t || 'Other').toLowerCase();
  return ['document', 'stylesheet', 'image', 'media', 'font', 'script', 'texttrack', 'xhr', 'fetch',
    'eventsource', 'websocket', 'manifest', 'ping'].includes(m) ? m : 'other';
}

function textual(mime) {
  const m = String(mime || '').toLowerCase().split(';')[0].trim();
  return m.startsWith('text/') || m.endsWith('+json') || m.endsWith('+xml') ||
    ['application/json', 'application/javascript', 'application/xml', 'application/x-www-form-urlencoded', 'application/ecmascript'].includes(m);
}

// textBody decides what of a body (Network.getResponseBody's answer) may
// be returned: text only, cut at max UTF-8 bytes on a character boundary.
export function textBody(mime, body, base64Encoded, max = MAX_BODY_BYTES) {
  if (!(max > 0) || max > MAX_BODY_BYTES) max = MAX_BODY_BYTES;
  let bytes;
  if (base64Encoded) {
    if (mime && !textual(mime)) return { note: `the body is not text (${mime}); only text bodies are returned`, size: Math.floor((body.length * 3) / 4) };
    bytes = Uint8Array.from(atob(body), (ch) => ch.charCodeAt(0));
  } else {
    if (mime && !textual(mime)) return { note: `the body is not text (${mime}); only text bodies are returned`, size: new TextEncoder().encode(body).length };
    bytes = new TextEncoder().encode(body);
  }
  const size = bytes.length;
  let cut = bytes;
  let truncated = false;
  if (bytes.length > max) {
    let n = max;
    while (n > 0 && (bytes[n] & 0xc0) === 0x80) n--;
    cut = bytes.subarray(0, n);
    truncated = true;
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(cut), size, truncated };
  } catch {
    return { note: `the body is not UTF-8 text (${mime || 'no content type'}); only text bodies are returned`, size };
  }
}

// TabLog is one tab's log.
export class TabLog {
  constructor({ now = () => Date.now(), max = MAX_ENTRIES } = {}) {
    this.now = now;
    this.max = max;
    this.nav = 0;
    this.next = 0;
    this.ring = []; // oldest first
    this.live = new Map(); // CDP requestId -> entry in flight
    // Chrome sends a request's ExtraInfo events (the headers as sent and
    // received, cookies included) on their own path: they may come before
    // the request's first event or after its last. Those that come early
    // wait here; an entry that ended stays findable for late ones.
    this.early = new Map(); // CDP requestId -> {request, response} headers
    this.ended = new Map(); // CDP requestId -> entry that ended, newest last
    this.dropped = new Map(); // generation -> entries let go
    // The documents of the tab's frames, as the browser committed them:
    // frame id -> {url, origin}. An entry is the document's that made it
    // (its frame's), never a URL the page wrote.
    this.frames = new Map();
    this.docSeen = false; // a main-frame document request since the last commit
  }

  // frameDoc is the document frameId shows ({url, origin, main}), or
  // null when the log never saw it commit. page is the tab's URL, for its
  // main frame.
  frameDoc(frameId, mainFrameId, page) {
    const f = this.frames.get(frameId);
    const main = !!frameId && frameId === mainFrameId;
    if (f) return { url: f.url, origin: f.origin, main };
    if (main && page) return { url: redactURL(page), main: true };
    return null;
  }

  // #committed keeps a frame's document; a main-frame document that came
  // without a document request (about:blank after a refused load, a blank
  // the server sent the tab to) starts a new generation, as a document
  // request does: nothing of the page before stays in the listing.
  #committed(f) {
    if (!f || !f.id) return;
    this.frames.set(f.id, { url: redactURL(String(f.url || '') + (f.urlFragment || '')), origin: String(f.securityOrigin || '') });
    while (this.frames.size > MAX_FRAMES) this.frames.delete(this.frames.keys().next().value);
    if (f.parentId) return;
    const seen = this.docSeen;
    this.docSeen = false;
    if (!seen && /^(about|data|blob|javascript|filesystem):/i.test(String(f.url || ''))) this.#newGeneration();
  }

  // onEvent records one Network.* event. mainFrameId is the tab's top
  // frame, when known.
  onEvent(method, p, mainFrameId, page) {
    switch (method) {
      case 'Page.frameNavigated':
        this.#committed(p.frame);
        break;
      case 'Page.frameDetached':
        if (p.reason !== 'swap') this.frames.delete(p.frameId);
        break;
      case 'Network.requestWillBeSent': {
        const prev = this.live.get(p.requestId);
        if (prev && p.redirectResponse) {
          // The hop before ends with its redirect response.
          prev.r.status = p.redirectResponse.status || 0;
          prev.r.mimeType = p.redirectResponse.mimeType || '';
          prev.responseHeaders = p.redirectResponse.headers;
          this.#end(prev, 'allowed', '', p.timestamp);
        }
        const document = p.type === 'Document';
        const main = document && !p.redirectResponse && p.requestId === p.loaderId &&
          (!mainFrameId || !p.frameId || p.frameId === mainFrameId);
        if (main) {
          this.#newGeneration();
          this.docSeen = true;
        }
        this.#add(p, document, document
          ? { url: redactURL(String((p.request && p.request.url) || '')), main: !p.frameId || p.frameId === mainFrameId }
          : this.frameDoc(p.frameId, mainFrameId, page));
        break;
      }
      case 'Network.requestWillBeSentExtraInfo':
        this.#extra(p.requestId, 'request', p.headers);
        break;
      case 'Network.responseReceived': {
        const e = this.live.get(p.requestId);
        if (!e) break;
        e.r.status = p.response.status || 0;
        e.r.mimeType = p.response.mimeType || '';
        e.responseHeaders = { ...p.response.headers, ...e.responseHeaders };
        // The headers as received (Set-Cookie among them) come in an
        // ExtraInfo event, which Chrome says here it will send.
        if (p.hasExtraInfo) e.extraDue = true;
        break;
      }
      case 'Network.responseReceivedExtraInfo':
        this.#extra(p.requestId, 'response', p.headers);
        break;
      case 'Network.loadingFinished': {
        const e = this.live.get(p.requestId);
        if (!e) break;
        if (typeof p.encodedDataLength === 'number') e.r.size = p.encodedDataLength;
        this.#end(e, 'allowed', '', p.timestamp);
        break;
      }
      case 'Network.loadingFailed': {
        const e = this.live.get(p.requestId);
        if (!e) break;
        this.#end(e, 'failed', p.errorText || 'failed', p.timestamp);
        break;
      }
      default:
    }
  }

  // #extra merges an ExtraInfo event's headers (kind 'request' or
  // 'response') into the request in flight, or one that ended without
  // them; without either, they wait (early) for the request's first event.
  #extra(requestId, kind, headers) {
    const e = this.live.get(requestId) || this.ended.get(requestId);
    if (e) {
      if (kind === 'request') {
        e.requestHeaders = { ...e.requestHeaders, ...headers };
      } else {
        e.responseHeaders = { ...e.responseHeaders, ...headers };
        e.extraCame = true;
      }
      return;
    }
    const w = this.early.get(requestId) || { request: {}, response: {} };
    Object.assign(w[kind], headers);
    if (kind === 'response') w.came = true;
    this.early.delete(requestId);
    this.early.set(requestId, w);
    while (this.early.size > MAX_EARLY) this.early.delete(this.early.keys().next().value);
  }

  #newGeneration() {
    this.nav++;
    const old = this.nav - MAX_NAVIGATIONS;
    this.dropped.delete(old);
    let n = 0;
    while (n < this.ring.length && this.ring[n].r.nav <= old) {
      this.#forget(this.ring[n]);
      n++;
    }
    this.ring.splice(0, n);
  }

  #forget(e) {
    if (this.live.get(e.requestId) === e) this.live.delete(e.requestId);
    if (this.ended.get(e.requestId) === e) this.ended.delete(e.requestId);
  }

  #add(p, document, doc) {
    const e = {
      requestId: p.requestId,
      start: p.timestamp,
      requestHeaders: { ...(p.request && p.request.headers) },
      responseHeaders: null,
      r: {
        id: String(++this.next),
        method: (p.request && p.request.method) || 'GET',
        url: redactURL(String((p.request && p.request.url) || '')),
        resourceType: resourceType(p.type),
        navigation: document,
        size: -1,
        startMs: this.now(),
        durationMs: -1,
        outcome: 'pending',
        nav: this.nav,
      },
    };
    if (doc) e.r.doc = doc;
    if (this.ring.length >= this.max) {
      const gone = this.ring.shift();
      this.#forget(gone);
      this.dropped.set(gone.r.nav, (this.dropped.get(gone.r.nav) || 0) + 1);
    }
    const w = this.early.get(p.requestId);
    if (w) {
      this.early.delete(p.requestId);
      e.requestHeaders = { ...e.requestHeaders, ...w.request };
      if (w.came) {
        e.responseHeaders = { ...w.response };
        e.extraCame = true;
      }
    }
    this.ring.push(e);
    this.ended.delete(p.requestId);
    this.live.set(p.requestId, e);
  }

  #end(e, outcome, error, timestamp) {
    if (this.live.get(e.requestId) === e) this.live.delete(e.requestId);
    this.ended.delete(e.requestId);
    this.ended.set(e.requestId, e);
    while (this.ended.size > MAX_EARLY) this.ended.delete(this.ended.keys().next().value);
    e.r.outcome = outcome;
    if (error) e.r.error = error;
    e.r.durationMs = typeof timestamp === 'number' && typeof e.start === 'number'
      ? Math.max(0, Math.round((timestamp - e.start) * 1000))
      : this.now() - e.r.startMs;
  }

  // list answers the wire method "network": the last n generations.
  list(n) {
    n = Math.max(1, Math.min(Number(n) || 1, MAX_NAVIGATIONS));
    const from = this.nav - n + 1;
    let dropped = 0;
    for (let g = Math.max(from, 0); g <= this.nav; g++) dropped += this.dropped.get(g) || 0;
    const requests = this.ring.filter((e) => e.r.nav >= from).map((e) => ({ ...e.r }));
    const out = { requests, nav: this.nav };
    if (dropped) out.dropped = dropped;
    return out;
  }

  // extraDue says whether the entry with id ended with a response whose
  // ExtraInfo headers Chrome said it would send and has not yet: a reader
  // of its headers waits a moment for them (networkEntry).
  extraDue(id) {
    const e = this.ring.find((x) => x.r.id === String(id));
    return !!e && e.r.outcome !== 'pending' && !!e.extraDue && !e.extraCame;
  }

  // find returns an entry by its id: {request (headers redacted),
  // requestId, mimeType}, or null.
  find(id) {
    const e = this.ring.find((x) => x.r.id === String(id));
    if (!e) return null;
    const request = { ...e.r, requestHeaders: redactHeaders(e.requestHeaders) };
    if (e.responseHeaders) request.responseHeaders = redactHeaders(e.responseHeaders);
    return { request, requestId: e.requestId };
  }
}

// NetLogs keeps a TabLog per tab.
export class NetLogs {
  constructor(opts = {}) {
    this.opts = opts;
    this.tabs = new Map();
  }

  tab(tabId) {
    let l = this.tabs.get(tabId);
    if (!l) {
      l = new TabLog(this.opts);
      this.tabs.set(tabId, l);
    }
    return l;
  }

  onEvent(tabId, method, params, mainFrameId, page) {
    if (!method.startsWith('Network.') && method !== 'Page.frameNavigated' && method !== 'Page.frameDetached') return;
    try {
      this.tab(tabId).onEvent(method, params || {}, mainFrameId, page);
    } catch {
      // a malformed event is not worth a broken log
    }
  }

  forget(tabId) {
    this.tabs.delete(tabId);
  }
}
