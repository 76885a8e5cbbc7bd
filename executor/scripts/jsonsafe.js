// Makes an eval result JSON-safe, the same on both backends: undefined,
// functions and symbols are null (an object's such properties are left
// out); -0 is 0; NaN and the infinities are the strings "NaN", "Infinity",
// "-Infinity"; a BigInt is a number when it is a safe integer, else its
// decimal digits as a string; a Date is its ISO string (null when
// invalid); a RegExp its source text, an Error its message, a URL its
// href, a DOM node {}; a cycle is "[Circular]"; past 100,000 values the
// rest is "[truncated]".
(v) => {
  const path = new Set();
  let budgetLeft = 100000;
  const walk = (x) => {
    if (--budgetLeft < 0) return '[truncated]';
    switch (typeof x) {
      case 'undefined': case 'function': case 'symbol': return null;
      case 'bigint': return Number.isSafeInteger(Number(x)) ? Number(x) : String(x);
      case 'number':
        if (Number.isNaN(x)) return 'NaN';
        if (x === Infinity) return 'Infinity';
        if (x === -Infinity) return '-Infinity';
        return x === 0 ? 0 : x; // -0 is 0
      case 'string': case 'boolean': return x;
    }
    if (x === null) return null;
    if (x instanceof Date) return isNaN(x) ? null : x.toISOString();
    if (x instanceof RegExp) return String(x);
    if (x instanceof Error) return String(x.message);
    if (typeof URL !== 'undefined' && x instanceof URL) return x.href;
    if (typeof Node !== 'undefined' && x instanceof Node) return {};
    if (path.has(x)) return '[Circular]';
    path.add(x);
    let out;
    if (Array.isArray(x)) out = x.map(walk);
    else {
      out = {};
      for (const k of Object.keys(x)) {
        const w = walk(x[k]);
        if (w !== null || x[k] === null) out[k] = w;
      }
    }
    path.delete(x);
    return out;
  };
  return walk(v);
}
