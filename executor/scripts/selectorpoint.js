// Where a click on a selector's element goes, found in chromegate's
// isolated world the way a ref's is: element is scripts/element.js (the
// composed ElementScript), and the click then takes the ref's path, with
// the same checks (attached, visible, enabled, still, topmost at its
// point) and, with guard, the same watch on the click itself.
//
// Only a plain CSS selector is answered here: the first element of the
// document (light DOM, document order) that matches, which is the first
// Playwright's CSS engine gives too (it lists the document's own matches
// before those of shadow roots). Anything else is {fallback} for the
// backend's own engine: a selector the browser's CSS parser refuses
// (Playwright's text=, role=, :has-text(), :visible ...), or no match in
// the light DOM (an element yet to appear, or one in a shadow root).
//
// arg: {selector, button, timeoutMs, guard}. The selector is resolved
// again on every check, as a Locator would, so an element the page
// replaces is followed.
//   -> {x, y, ref} | {fallback: "syntax" | "none"} |
//      {error: "timeout", why, page} | element.js's {error, why}
(element) => async (arg, env) => {
  const reg = chromegateRefs(env);
  const deadline = Date.now() + (arg.timeoutMs || 5000);
  for (;;) {
    let el;
    try {
      // through the prototype: a named control can shadow the document's
      el = Document.prototype.querySelector.call(document, arg.selector);
    } catch (e) {
      return { fallback: 'syntax' };
    }
    if (!el) return { fallback: 'none' };
    const ref = reg.refFor(el);
    const r = await element({ op: 'point', ref, button: arg.button, once: true, guard: arg.guard }, env);
    if (r.x !== undefined) return { x: r.x, y: r.y, ref };
    // removed between the query and the check: query again
    if (r.error !== 'timeout' && !(r.error === 'expired' && r.why === 'removed')) return r;
    if (Date.now() >= deadline) return r.error === 'timeout' ? r : { fallback: 'none' };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
