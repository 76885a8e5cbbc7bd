// Eval in the main world, with the server's eval.js and jsonsafe.js (as
// the CDP backend runs them): the value comes back JSON-safe (NaN and the
// infinities as strings, cycles "[Circular]", dates as ISO strings).

import { csend } from './tabstate.js';
import { exceptionText } from './world.js';

// evalSource is executor.EvalSource: eval.js called with opts, the
// expression (on lines of its own) and jsonsafe.js.
export function evalSource(evalScript, jsonSafeScript, expression, opts) {
  return `(${evalScript})(${JSON.stringify(opts)}, () => (\n${expression}\n), ${jsonSafeScript})`;
}

// bareValue makes the value of a bare evaluation (a RemoteObject)
// JSON-safe with jsonsafe.js, in the page: an object through its handle, a
// primitive (NaN, a BigInt) as an argument of a call on the global object.
export async function bareValue(c, o, safe) {
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
export function pageError(ex) {
  let msg = exceptionText(ex);
  if (msg.startsWith('Uncaught ')) msg = msg.slice(9);
  if (msg.startsWith('Error: ')) msg = msg.slice(7);
  return msg.trim();
}

export function isSyntaxError(ex) {
  const e = ex && ex.exception;
  return !!e && (e.className === 'SyntaxError' || /^SyntaxError/.test(e.description || ''));
}
