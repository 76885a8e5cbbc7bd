// The WebSocket client of wire protocol v1: pairing sources, hello/welcome,
// heartbeat, reconnect with backoff, keepalive while connected.
//
// Pairing ({port, token}) is in chrome.storage.local; a pending manual code
// and the connection's state (for the popup and the badge) are in
// chrome.storage.session. The token is never logged, shown or put in a
// state record.

import { CLOSE, decode, encode, frames } from './frame.js';

export const NATIVE_HOST = 'com.chromegate.bridge';
const PAIRING_KEY = 'pairing'; // storage.local: {port, token, source}
const CODE_KEY = 'pendingCode'; // storage.session: {port, code}
const STATE_KEY = 'connection'; // storage.session: what the popup shows
const REFUSED_KEY = 'codeRefused'; // storage.session: why the last pairing code failed

const HELLO_TIMEOUT_MS = 5000;
const KEEPALIVE_MS = 25000;
const BACKOFF_MS = [500, 1000, 2000, 4000, 8000, 15000, 30000];

export function validPort(p) {
  return Number.isInteger(p) && p > 0 && p < 65536;
}

export function validToken(t) {
  return typeof t === 'string' && /^[0-9a-f]{64}$/.test(t);
}

export function validCode(c) {
  return typeof c === 'string' && /^[A-Z0-9]{4}-?[A-Z0-9]{4}$/i.test(c.trim());
}

export class Connection {
  // router: a Router (handle, cancel, abortAll); onWelcome(welcome) stores
  // the server's scripts; onDecision(frame) takes the server's request
  // decisions and onDown(closeCode) is told the socket closed (egress.js);
  // log(level, msg, fields).
  constructor({ router, onWelcome = async () => {}, onConnected = async () => {}, onDecision = () => {}, onDown = () => {}, log = () => {} }) {
    this.router = router;
    this.onDecision = onDecision;
    this.onDown = onDown;
    this.onWelcome = onWelcome;
    this.onConnected = onConnected;
    this.log = log;
    this.ws = null;
    this.connecting = null; // the single dial in flight
    this.redial = false; // the pairing changed during that dial
    this.attempt = 0;
    this.retryTimer = null;
    this.pingTimer = null;
    this.keepaliveTimer = null;
    this.pingSeq = 0;
    this.unanswered = 0;
    this.heartbeatMs = 20000;
    this.status = 'idle';
  }

  // ---- pairing storage

  async pairing() {
    const got = await chrome.storage.local.get(PAIRING_KEY);
    const p = got[PAIRING_KEY];
    return p && validPort(p.port) ? p : null;
  }

  async setPairing(p) {
    await chrome.storage.local.set({ [PAIRING_KEY]: p });
  }

  // pair stores a pairing handed over by the server (over CDP) or entered
  // by hand, and dials. It resolves once stored, not once connected.
  async pair({ port, token, code }, source) {
    if (!validPort(port)) throw new Error('pairing: port must be an integer between 1 and 65535');
    if (code !== undefined) {
      if (!validCode(code)) throw new Error('pairing: the code looks like ABCD-EFGH');
      await chrome.storage.session.set({ [CODE_KEY]: { port, code: code.trim().toUpperCase() } });
    } else {
      if (!validToken(token)) throw new Error('pairing: the token must be 64 hex characters');
      await this.setPairing({ port, token, source });
      await chrome.storage.session.remove(CODE_KEY);
    }
    this.reconnect('new pairing');
  }

  // unpair forgets the pairing and closes the connection.
  async unpair() {
    await chrome.storage.local.remove(PAIRING_KEY);
    await chrome.storage.session.remove(CODE_KEY);
    this.close(1000, 'unpaired');
    await this.setStatus('unpaired', {});
  }

  // askNative asks the native-messaging host for {port, token}; null when
  // there is none (not installed, or the server is not running).
  async askNative() {
    try {
      const r = await chrome.runtime.sendNativeMessage(NATIVE_HOST, { type: 'pairing' });
      if (r && validPort(r.port) && validToken(r.token)) return { port: r.port, token: r.token, source: 'native' };
      this.log('info', 'the native host has no pairing: ' + String((r && r.error) || 'no answer'));
    } catch (e) {
      this.log('info', 'no native host: ' + String((e && e.message) || e));
    }
    return null;
  }

  // refreshFromNative replaces the pairing with the native host's when it
  // differs; true when it did.
  async refreshFromNative(current) {
    const fresh = await this.askNative();
    if (!fresh) return false;
    if (current && fresh.port === current.port && fresh.token === current.token) return false;
    await this.setPairing(fresh);
    return true;
  }

  // ---- state for the popup and the badge

  async setStatus(status, extra = {}) {
    this.status = status;
    const rec = { status, since: Date.now(), ...extra };
    await chrome.storage.session.set({ [STATE_KEY]: rec });
    setBadge(status);
  }

  connected() {
    return !!this.ws && this.ws.readyState === WebSocket.OPEN && this.status === 'connected';
  }

  // ensure dials when nothing is connected or dialing, unless the last close
  // asked to wait for the user (a refused pairing, a superseded session).
  ensure() {
    if (this.connected() || this.connecting || this.status === 'connecting') return this.connecting;
    if (this.status === 'unauthorized' || this.status === 'superseded') return null;
    return this.connect();
  }

  // reconnect drops any connection and dials now (new pairing, the popup).
  // A dial in flight read the pairing before it changed (the start-up dial
  // may still be waiting on the native host): it is redone right after,
  // unless it turned out to use the newest pairing.
  reconnect(why) {
    this.log('info', 'reconnecting: ' + why);
    clearTimeout(this.retryTimer);
    this.attempt = 0;
    if (this.connecting) {
      this.redial = true;
      return this.connecting;
    }
    this.close(1000, why);
    this.status = 'idle';
    return this.connect();
  }

  connect() {
    if (this.connected()) return Promise.resolve();
    if (!this.connecting) {
      this.connecting = this.#dial().finally(async () => {
        if (this.redial) {
          this.redial = false;
          if (!(this.connected() && this.dialedWith === (await this.#pairingKey()))) {
            this.close(1000, 'the pairing changed');
            this.status = 'idle';
            this.connecting = null;
            this.connect();
            return;
          }
        }
        this.connecting = null;
      });
    }
    return this.connecting;
  }

  // #pairingKey names the pairing a dial would use now.
  async #pairingKey() {
    const session = await chrome.storage.session.get(CODE_KEY);
    if (session[CODE_KEY]) return 'code:' + session[CODE_KEY].port + ':' + session[CODE_KEY].code;
    const p = await this.pairing();
    return p && validToken(p.token) ? 'token:' + p.port + ':' + p.token : '';
  }

  async #dial() {
    const session = await chrome.storage.session.get(CODE_KEY);
    const pending = session[CODE_KEY];
    let p = await this.pairing();
    if (!pending && (!p || !validToken(p.token))) {
      if (await this.refreshFromNative(p)) p = await this.pairing();
      if (!p || !validToken(p.token)) {
        await this.setStatus('unpaired', {});
        return;
      }
    }
    const port = pending ? pending.port : p.port;
    const auth = pending ? { code: pending.code } : { token: p.token };
    this.dialedWith = await this.#pairingKey();
    await this.setStatus('connecting', { port });
    let outcome;
    try {
      outcome = await this.#open(port, auth, !!pending);
    } catch (e) {
      outcome = { closeCode: 1006, reason: String((e && e.message) || e) };
    }
    if (outcome.welcome) return;
    await this.#afterClose(outcome, p, !!pending);
  }

  // #open dials and says hello; it resolves {welcome} once welcomed (the
  // socket then lives on), or {closeCode, reason} when it closed first.
  #open(port, auth, withCode) {
    return new Promise((resolve) => {
      let ws;
      try {
        ws = new WebSocket(`ws://127.0.0.1:${port}/ext`);
      } catch (e) {
        resolve({ closeCode: 1006, reason: String(e.message || e) });
        return;
      }
      this.ws = ws;
      let welcomed = false;
      let unauthorized = '';
      // Frames that arrive before welcome is handled (the scripts stored)
      // wait for it, then run in order; they are dropped if no welcome comes.
      let queue = [];
      const helloTimer = setTimeout(() => {
        if (!welcomed) ws.close(CLOSE.UNAUTHORIZED, 'no welcome');
      }, HELLO_TIMEOUT_MS + 2000);
      ws.onopen = () => {
        const ext = { id: chrome.runtime.id, version: chrome.runtime.getManifest().version, browser: navigator.userAgent };
        ws.send(encode(frames.hello(auth, ext)));
      };
      ws.onmessage = (ev) => {
        const { frame, error, close } = decode(ev.data);
        if (error) {
          this.log('warn', 'protocol error from the server: ' + error);
          ws.close(close, 'protocol error');
          return;
        }
        if (!welcomed && frame.type === 'welcome') {
          welcomed = true;
          clearTimeout(helloTimer);
          this.#welcomed(ws, frame, port, withCode).then(() => {
            const early = queue;
            queue = null;
            for (const f of early) this.#onFrame(ws, f);
            resolve({ welcome: true });
          }, (e) => {
            this.log('error', 'handling welcome failed: ' + e.message);
            ws.close(1011, 'welcome failed');
          });
          return;
        }
        if (!welcomed && frame.type === 'unauthorized') {
          unauthorized = String(frame.reason || 'unauthorized');
          return;
        }
        if (queue) {
          if (queue.length < 1000) queue.push(frame);
          return;
        }
        this.#onFrame(ws, frame);
      };
      ws.onclose = (ev) => {
        clearTimeout(helloTimer);
        if (this.ws === ws) this.ws = null;
        if (!welcomed) {
          resolve({ closeCode: ev.code, reason: unauthorized || ev.reason || '' });
          return;
        }
        this.#stopTimers();
        this.router.abortAll();
        this.onDown(ev.code);
        this.#afterClose({ closeCode: ev.code, reason: ev.reason || '' }, null, false).catch((e) => this.log('error', String(e)));
      };
      ws.onerror = () => {
        // onclose follows with the code
      };
    });
  }

  async #welcomed(ws, w, port, withCode) {
    if (withCode) {
      if (!validToken(w.token)) throw new Error('welcome after a pairing code carried no token');
      await this.setPairing({ port, token: w.token, source: 'code' });
      await chrome.storage.session.remove([CODE_KEY, REFUSED_KEY]);
    }
    await this.onWelcome(w);
    this.attempt = 0;
    this.heartbeatMs = Number(w.heartbeatMs) > 0 ? Number(w.heartbeatMs) : 20000;
    this.unanswered = 0;
    this.#stopTimers();
    this.pingTimer = setInterval(() => this.#heartbeat(ws), this.heartbeatMs);
    // An awaited extension API call keeps the service worker alive while
    // connected (WebSocket traffic does too since Chrome 116).
    this.keepaliveTimer = setInterval(() => {
      chrome.runtime.getPlatformInfo().catch(() => {});
    }, KEEPALIVE_MS);
    const server = w.server && typeof w.server === 'object' ? { name: String(w.server.name || ''), version: String(w.server.version || '') } : {};
    await this.setStatus('connected', { port, server, sessionId: String(w.sessionId || '') });
    this.log('info', `connected to ${server.name || 'the server'} on port ${port}`);
    this.onConnected().catch((e) => this.log('warn', 'after connecting: ' + e.message));
  }

  #heartbeat(ws) {
    if (ws.readyState !== WebSocket.OPEN) return;
    if (this.unanswered >= 2) {
      this.log('warn', 'the server stopped answering pings');
      ws.close(4000, 'no pong');
      return;
    }
    this.unanswered++;
    this.#write(ws, frames.ping('p' + ++this.pingSeq));
  }

  #write(ws, frame) {
    try {
      ws.send(typeof frame === 'string' ? frame : encode(frame));
    } catch (e) {
      this.log('warn', 'send failed: ' + e.message);
    }
  }

  #onFrame(ws, f) {
    switch (f.type) {
      case 'command':
        this.router.handle(f);
        break;
      case 'cancel':
        this.router.cancel(f.id);
        break;
      case 'ping':
        this.#write(ws, frames.pong(f.id));
        break;
      case 'pong':
        this.unanswered = 0;
        break;
      case 'decision':
        this.onDecision(f);
        break;
      default:
      // unknown types are ignored (forward compatible)
    }
  }

  // sendText writes an encoded frame (the router's answers); it throws when
  // not connected, and the answer is dropped (the server failed the call).
  sendText(text) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) throw new Error('not connected');
    this.ws.send(text);
  }

  // sendFrame writes a frame the extension starts (a decide); it throws
  // when not connected.
  sendFrame(frame) {
    if (!this.connected()) throw new Error('not connected');
    this.ws.send(encode(frame));
  }

  // event sends an informational event when connected.
  event(name, data) {
    if (this.connected()) this.#write(this.ws, frames.event(name, data));
  }

  close(code = 1000, reason = '') {
    this.#stopTimers();
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      ws.onclose = null;
      try {
        ws.close(code, reason);
      } catch {
        // already closed
      }
      this.router.abortAll();
      this.onDown(code);
    }
  }

  #stopTimers() {
    clearInterval(this.pingTimer);
    clearInterval(this.keepaliveTimer);
    this.pingTimer = null;
    this.keepaliveTimer = null;
  }

  // #afterClose decides what a close means: 4401 a refused pairing (ask the
  // native host once for a fresh one, else wait for the user), 4410 a
  // rotated token (forget it, re-pair), 4409 another connection took over
  // (wait for the user), anything else a dropped link (redial with backoff,
  // re-asking the native host, since ports are ephemeral).
  async #afterClose({ closeCode, reason }, p, withCode) {
    const current = p || (await this.pairing());
    switch (closeCode) {
      case CLOSE.UNAUTHORIZED:
        if (withCode) {
          await chrome.storage.session.remove(CODE_KEY);
          await chrome.storage.session.set({ [REFUSED_KEY]: 'the pairing code was refused: ' + (reason || 'unauthorized') });
          this.log('warn', 'the server refused the pairing code: ' + (reason || 'unauthorized'));
          if (current && validToken(current.token)) {
            // the earlier pairing still stands
            this.#retry(0);
            return;
          }
        } else if (current && current.source !== 'code' && (await this.refreshFromNative(current))) {
          this.#retry(0);
          return;
        }
        this.log('warn', 'the server refused the pairing: ' + (reason || 'unauthorized'));
        await this.setStatus('unauthorized', { reason: reason || 'unauthorized', port: current && current.port });
        return;
      case CLOSE.ROTATED:
        if (current) await this.setPairing({ port: current.port, token: '', source: current.source });
        if (await this.refreshFromNative(null)) {
          this.#retry(0);
          return;
        }
        await this.setStatus('unpaired', { reason: 'the server rotated its token: pair again' });
        return;
      case CLOSE.SUPERSEDED:
        await this.setStatus('superseded', { reason: 'another connection to the server took over', port: current && current.port });
        return;
      default:
    }
    if (await this.refreshFromNative(current)) {
      this.#retry(0);
      return;
    }
    const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    this.attempt++;
    await this.setStatus('disconnected', { reason: reason || `closed (${closeCode})`, port: current && current.port, retryInMs: delay });
    this.#retry(delay);
  }

  #retry(ms) {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.status = 'idle';
      this.connect();
    }, ms);
  }
}

// setBadge shows the state at a glance: green "on" connected, red "!" a
// refused pairing, grey "off" otherwise.
export function setBadge(status) {
  const look = {
    connected: ['on', '#1a7f37'],
    unauthorized: ['!', '#cf222e'],
    superseded: ['!', '#bf8700'],
  }[status] || ['off', '#6e7781'];
  try {
    chrome.action.setBadgeText({ text: look[0] }).catch(() => {});
    chrome.action.setBadgeBackgroundColor({ color: look[1] }).catch(() => {});
  } catch {
    // no action API (tests)
  }
}

export async function connectionState() {
  const [s, l] = await Promise.all([chrome.storage.session.get([STATE_KEY, REFUSED_KEY]), chrome.storage.local.get(PAIRING_KEY)]);
  const p = l[PAIRING_KEY];
  return { ...(s[STATE_KEY] || { status: 'idle' }), paired: !!(p && validToken(p.token)), pairingSource: p ? p.source : '', pairedPort: p ? p.port : 0,
    codeRefused: s[REFUSED_KEY] || '' };
}
