// The ref registry, shared by every chromegate script that names or finds
// elements by ref. It lives on the globalThis of chromegate's isolated
// world, so page scripts can neither read nor forge it, and it lasts as
// long as the document.
//
// A ref is the document's token (env.doc, letters) followed by a number:
// "kq12". The same element keeps its ref for the life of the document
// (WeakMap element -> ref); a ref from another document carries another
// token, so it can never name an element of this one.
//
// Scripts are composed as (() => { <this file>; return <script>; })(), so
// chromegateRefs is in scope of the script.
function chromegateRefs(env) {
  let reg = globalThis.chromegateRefRegistry;
  if (!reg) {
    const byEl = new WeakMap();
    const byRef = new Map();
    let next = 1;
    reg = {
      doc: String((env && env.doc) || 'x'),
      // refFor returns el's ref, issuing one on first sight.
      refFor(el) {
        let ref = byEl.get(el);
        if (!ref) {
          ref = reg.doc + next++;
          byEl.set(el, ref);
          byRef.set(ref, new WeakRef(el));
        }
        return ref;
      },
      // lookup returns {el} or {error, why}: error is "malformed",
      // "expired" (another document's ref, or its element left the
      // document) or "unknown" (this document never issued it). Refs
      // are issued in order, so one below next that is not held any
      // more was issued and pruned: its element left.
      lookup(ref) {
        const m = /^([a-z]+)([0-9]+)$/.exec(String(ref));
        if (!m) return { error: 'malformed' };
        if (m[1] !== reg.doc) return { error: 'expired', why: 'navigated' };
        const w = byRef.get(ref);
        if (!w) return Number(m[2]) >= 1 && Number(m[2]) < next ? { error: 'expired', why: 'removed' } : { error: 'unknown' };
        const el = w.deref();
        if (!el || !el.isConnected) {
          byRef.delete(ref);
          return { error: 'expired', why: 'removed' };
        }
        return { el };
      },
      // prune forgets refs whose elements are gone.
      prune() {
        for (const [ref, w] of byRef) {
          const el = w.deref();
          if (!el || !el.isConnected) byRef.delete(ref);
        }
      },
    };
    Object.freeze(reg);
    Object.defineProperty(globalThis, 'chromegateRefRegistry', { value: reg });
  }
  return reg;
}
