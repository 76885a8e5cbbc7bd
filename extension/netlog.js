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
  }

  // onEvent records one Network.* event. mainFrameId is the tab's top
  // frame, when known.
  onEvent(method, p, mainFrameId) {
    switch (method) {
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
        if (main) this.#newGeneration();
        this.#add(p, document);
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

  #add(p, document) {
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

  onEvent(tabId, method, params, mainFrameId) {
    if (!method.startsWith('Network.')) return;
    try {
      this.tab(tabId).onEvent(method, params || {}, mainFrameId);
    } catch {
      // a malformed event is not worth a broken log
    }
  }

  forget(tabId) {
    this.tabs.delete(tabId);
  }
}
