// The error codes of the Executor contract (executor/errors.go) and the one
// error type every handler throws. Pure: no chrome.* here.

export const CODES = Object.freeze([
  'NO_BACKEND', 'EXTENSION_DISCONNECTED', 'TIMEOUT', 'TAB_NOT_FOUND', 'STALE_TAB',
  'SELECTOR_NOT_FOUND', 'REF_EXPIRED', 'EVAL_FAILED', 'LAUNCH_FAILED', 'DETACHED',
  'TARGET_GONE', 'POLICY_DENIED', 'DEVTOOLS_OPEN', 'DOWNLOAD_FAILED', 'BACKPRESSURE',
  'BAD_ARGS', 'DIALOG_OPEN', 'INTERNAL',
]);

const known = new Set(CODES);

// WireError is an error the server shows the model as `CODE: message`, with
// hint as what to do next. message and hint are the extension's own words:
// anything a page wrote (an option's label, what covers an element) goes
// in page, which the server shows fenced as page content. ref, when set,
// is a ref the page's registry refused ({ref, failure, why}): the server
// words that error itself (executor.RefError), so the words live once.
export class WireError extends Error {
  constructor(code, message, hint = '', page = '', ref = null) {
    super(message);
    this.name = 'WireError';
    this.code = known.has(code) ? code : 'INTERNAL';
    this.hint = hint;
    this.page = page;
    this.ref = ref;
  }
}

// fail builds a WireError; handlers `throw fail('BAD_ARGS', '...')`.
export function fail(code, message, hint = '', page = '', ref = null) {
  return new WireError(code, message, hint, page, ref);
}

// errorPayload turns anything thrown into the error object of an error
// frame: a WireError keeps its code, anything else is INTERNAL with its
// text (never its stack).
export function errorPayload(e) {
  if (e instanceof WireError) {
    const out = { code: e.code, message: String(e.message || e.code) };
    if (e.hint) out.hint = String(e.hint);
    if (e.page) out.page = String(e.page);
    if (e.ref) out.ref = { ref: String(e.ref.ref), failure: String(e.ref.failure), why: String(e.ref.why || '') };
    return out;
  }
  let message;
  try {
    message = e instanceof Error ? e.message : typeof e === 'string' ? e : JSON.stringify(e);
  } catch {
    message = String(e);
  }
  return { code: 'INTERNAL', message: 'the extension failed: ' + (message || 'unknown error') };
}
