// The router: maps a command's method to its handler and answers every
// command id exactly once, with a result or an error frame, whatever the
// handler does (throws, hangs past its deadline, returns something with no
// JSON form). It never throws. Pure: handlers and send are injected.

import { METHODS } from './methods.js';
import { errorPayload, fail } from './errors.js';
import { encode, frames } from './frame.js';

// DEFAULT_TIMEOUT_MS applies to a command without timeoutMs.
export const DEFAULT_TIMEOUT_MS = 30000;

// GRACE_MS is how long past its deadline a handler may still answer before
// the router answers TIMEOUT for it: a handler aims to fail with its own,
// more precise, error first.
export const GRACE_MS = 1000;

// checkHandlers compares the handlers with the wire methods: missing are
// wire methods with no handler, extra are handlers the protocol lacks.
export function checkHandlers(handlers, methods = METHODS) {
  const has = (m) => Object.prototype.hasOwnProperty.call(handlers, m) && typeof handlers[m] === 'function';
  return {
    missing: methods.filter((m) => !has(m)),
    extra: Object.keys(handlers).filter((m) => !methods.includes(m)),
  };
}

export class Router {
  // handlers: {method: async (params, ctx) => data}; ctx is {id, method,
  // tabId, timeoutMs, deadline, signal}.
  // send(text): writes one frame; it may throw (a closed socket).
  // log(level, msg, fields): optional.
  constructor(handlers, { send, log = () => {}, methods = METHODS, now = () => Date.now() } = {}) {
    this.handlers = handlers;
    this.send = send;
    this.log = log;
    this.now = now;
    this.inflight = new Map(); // id -> {answer(frame), controller}
    const { missing, extra } = checkHandlers(handlers, methods);
    this.missing = missing;
    this.extra = extra;
    if (missing.length) log('error', 'wire methods without a handler: ' + missing.join(', '), { missing });
    if (extra.length) log('warn', 'handlers for methods the protocol lacks: ' + extra.join(', '), { extra });
  }

  // handle answers one command frame. The promise resolves once the answer
  // was sent (or could not be); it never rejects.
  async handle(frame) {
    try {
      return await this.#handle(frame);
    } catch (e) {
      this.log('error', 'router: unexpected failure', { error: String(e) });
    }
  }

  async #handle(frame) {
    const id = frame && typeof frame.id === 'string' ? frame.id : '';
    if (!id) {
      this.log('warn', 'a command without an id was dropped');
      return;
    }
    if (this.inflight.has(id)) {
      // Its first copy answers; a second answer would break "exactly once".
      this.log('warn', 'a command id already in flight was dropped', { id });
      return;
    }
    const method = typeof frame.method === 'string' ? frame.method : '';
    let timeoutMs = Number(frame.timeoutMs);
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) timeoutMs = DEFAULT_TIMEOUT_MS;
    const controller = new AbortController();
    let answered = false;
    let timer;
    const done = new Promise((resolve) => {
      const answer = (out) => {
        if (answered) return;
        answered = true;
        clearTimeout(timer);
        this.inflight.delete(id);
        this.#send(id, out);
        resolve();
      };
      this.inflight.set(id, { answer, controller });
      timer = setTimeout(() => {
        controller.abort();
        answer(frames.error(id, { code: 'TIMEOUT', message: `${method || 'the call'} did not finish within ${timeoutMs} ms`,
          hint: 'retry with a larger timeout_ms, or wait_for the condition first' }));
      }, timeoutMs + GRACE_MS);
      this.#run(id, method, frame, timeoutMs, controller.signal).then(answer);
    });
    return done;
  }

  // #run calls the handler and returns the answer frame; never rejects.
  async #run(id, method, frame, timeoutMs, signal) {
    try {
      if (!method || !Object.prototype.hasOwnProperty.call(this.handlers, method) || typeof this.handlers[method] !== 'function') {
        throw fail('BAD_ARGS', `unknown method ${JSON.stringify(method)}`, 'the extension may be older than the server; update it');
      }
      const params = frame.params && typeof frame.params === 'object' && !Array.isArray(frame.params) ? frame.params : {};
      const tabId = typeof frame.tabId === 'string' ? frame.tabId : typeof params.tabId === 'string' ? params.tabId : '';
      const ctx = { id, method, tabId, timeoutMs, deadline: this.now() + timeoutMs, signal };
      const data = await this.handlers[method](params, ctx);
      return frames.result(id, data);
    } catch (e) {
      const err = errorPayload(e);
      if (err.code === 'INTERNAL') this.log('error', `${method}: ${err.message}`, { id });
      return frames.error(id, err);
    }
  }

  // #send encodes and writes an answer; an answer with no JSON form becomes
  // an INTERNAL error for the same id.
  #send(id, out) {
    let text;
    try {
      text = encode(out);
    } catch (e) {
      text = encode(frames.error(id, { code: 'INTERNAL', message: `the result of command ${id} has no JSON form: ${e.message}` }));
    }
    try {
      this.send(text);
    } catch (e) {
      this.log('warn', 'could not send an answer', { id, error: String(e) });
    }
  }

  // cancel gives up on a command the server no longer waits for: its
  // handler is told through its signal, and the id is answered now (the
  // server ignores the answer), so nothing stays in flight.
  cancel(id) {
    const f = this.inflight.get(id);
    if (!f) return false;
    f.controller.abort();
    f.answer(frames.error(id, { code: 'TIMEOUT', message: 'the server cancelled the call' }));
    return true;
  }

  // abortAll ends every call in flight, when the connection is gone.
  abortAll(reason = 'the connection to the server closed') {
    for (const [id, f] of [...this.inflight]) {
      f.controller.abort();
      f.answer(frames.error(id, { code: 'EXTENSION_DISCONNECTED', message: reason }));
    }
  }

  get pending() {
    return this.inflight.size;
  }
}
