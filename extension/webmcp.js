// Bounds on what a page's WebMCP tools send through the debugger before
// the extension relays it to the server. A page tool's result, its error
// text, and the tools it registers are the page's: a page that returns
// 150 MB would otherwise be relayed whole, over the 64 MiB frame limit,
// and the server would drop the connection. Here, in the service worker,
// the built-ins are the extension's own, so the bounds hold.

// OUTPUT_MAX is the most of a tool's result (its JSON text) relayed; the
// server cuts it further to the call's --max-result-chars.
export const OUTPUT_MAX = 4 << 20;
// TEXT_MAX bounds an error text, a description; SCHEMA_MAX a tool's input
// schema (a larger one is dropped, and the server refuses the tool).
export const TEXT_MAX = 2000;
export const SCHEMA_MAX = 32 << 10;
export const TOOLS_MAX = 200;

const cut = (s, n) => (typeof s === 'string' && s.length > n ? s.slice(0, n) + '…' : s);

// boundValue returns v itself when its JSON is at most max long, else a
// copy with strings cut and items left out once the budget is spent
// (nested 32 deep at most): {value, size, cut}.
export function boundValue(v, max) {
  let whole;
  try {
    whole = JSON.stringify(v === undefined ? null : v);
  } catch (e) {
    return { value: null, size: 0, cut: true };
  }
  const size = typeof whole === 'string' ? whole.length : 0;
  if (size <= max) return { value: v, size, cut: false };
  let budget = max;
  const shrink = (x, depth) => {
    if (budget <= 0) return null;
    if (typeof x === 'string') {
      const s = cut(x, Math.max(0, budget));
      budget -= s.length + 2;
      return s;
    }
    if (x === null || typeof x !== 'object') {
      budget -= 8;
      return x;
    }
    if (depth >= 32) {
      budget -= 4;
      return null;
    }
    if (Array.isArray(x)) {
      const out = [];
      for (let i = 0; i < x.length && budget > 0; i++) out.push(shrink(x[i], depth + 1));
      return out;
    }
    const out = {};
    for (const k of Object.keys(x)) {
      if (budget <= 0) break;
      budget -= Math.min(k.length, 256) + 3;
      out[k.slice(0, 256)] = shrink(x[k], depth + 1);
    }
    return out;
  };
  return { value: shrink(v, 0), size, cut: true };
}

// boundEvent returns a WebMCP.* event's params as the extension relays
// them: a result cut to maxOutput (at most OUTPUT_MAX; outputCut: its
// whole length), texts cut, at most TOOLS_MAX tools, schemas over
// SCHEMA_MAX dropped.
export function boundEvent(method, params, maxOutput = OUTPUT_MAX) {
  const p = params && typeof params === 'object' ? params : {};
  if (method === 'WebMCP.toolResponded') {
    const out = { ...p, errorText: cut(p.errorText, TEXT_MAX) };
    if (p.exception && typeof p.exception === 'object') out.exception = { description: cut(p.exception.description, TEXT_MAX) };
    if ('output' in p) {
      const b = boundValue(p.output, Math.max(1, Math.min(Number(maxOutput) || OUTPUT_MAX, OUTPUT_MAX)));
      out.output = b.value;
      if (b.cut) out.outputCut = b.size;
    }
    return out;
  }
  if (method === 'WebMCP.toolsAdded' || method === 'WebMCP.toolsRemoved') {
    const tools = Array.isArray(p.tools) ? p.tools.slice(0, TOOLS_MAX) : [];
    return {
      ...p,
      tools: tools.map((t) => {
        if (!t || typeof t !== 'object') return null;
        const o = { ...t, name: cut(t.name, 256), title: cut(t.title, TEXT_MAX), description: cut(t.description, TEXT_MAX) };
        if ('inputSchema' in t && boundValue(t.inputSchema, SCHEMA_MAX).cut) {
          o.inputSchema = undefined;
          o.schemaTooLarge = true;
        }
        return o;
      }),
    };
  }
  return p;
}
