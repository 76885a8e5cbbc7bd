// pixels: where the documents of other origins are on the page, for
// painting them over in a capture, and which document has the focus, for
// a key pressed without a target. Runs in chromegate's isolated world,
// composed with the ref registry (executor.WithRefs); reads no content.
//
// arg: {op, ...}
//   frames -> {url, origin, scrollX, scrollY, width, height, frames}: every
//             element of this document (through its open shadow roots
//             and its same-origin frames) that shows a document this
//             world cannot reach, as {ref, x, y, w, h, cx, cy}: its border
//             box and the top-left of its content box in this document's
//             viewport (CSS pixels).
//   focus  -> {ref}: the frame element of another origin the focus is in
//             (through same-origin frames and open shadow roots), or
//             {doc: true} when the focus is in this document's own.
(arg, env) => {
  const dom = chromegateDOM();
  const reg = chromegateRefs(env);
  const kinds = { IFRAME: 1, FRAME: 1, OBJECT: 1, EMBED: 1, FENCEDFRAME: 1, PORTAL: 1 };
  const isFrame = (el) => kinds[dom.tag(el)] === 1;
  const inner = (el) => {
    try {
      const d = el.contentDocument;
      return d && d.documentElement ? d : null;
    } catch (e) {
      return null;
    }
  };
  // an <object> showing an image has no document of its own
  const shows = (el) => dom.tag(el) !== 'OBJECT' || el.contentWindow !== null;
  if (arg.op === 'focus') {
    let doc = document;
    for (let depth = 0; depth < 32; depth++) {
      let a = doc.activeElement;
      for (let i = 0; a && i < 32; i++) {
        const sr = dom.shadow(a);
        if (!sr || !sr.activeElement) break;
        a = sr.activeElement;
      }
      if (!a || !isFrame(a)) return { doc: true };
      const d = inner(a);
      if (d) {
        doc = d;
        continue;
      }
      return { ref: reg.refFor(a) };
    }
    return { error: 'deep' };
  }
  if (arg.op !== 'frames') return { error: 'op' };
  const MAX_FRAMES = 1024; // a page-sized answer is bounded before Go decodes it
  const out = [];
  const walk = (root, ox, oy, depth) => {
    for (const el of dom.qsa(root, '*')) {
      const sr = dom.shadow(el);
      if (sr) walk(sr, ox, oy, depth);
      if (!isFrame(el) || !shows(el)) continue;
      const r = dom.rect(el);
      const cs = dom.doc(el).defaultView.getComputedStyle(el);
      const cx = ox + r.left + el.clientLeft + (parseFloat(cs.paddingLeft) || 0);
      const cy = oy + r.top + el.clientTop + (parseFloat(cs.paddingTop) || 0);
      const d = inner(el);
      if (d && depth < 16) {
        walk(d, cx, cy, depth + 1);
        continue;
      }
      if (out.length >= MAX_FRAMES) throw new Error('too many frames');
      out.push({ ref: reg.refFor(el), x: ox + r.left, y: oy + r.top, w: r.width, h: r.height, cx, cy });
    }
  };
  try {
    walk(document, 0, 0, 0);
  } catch {
    return { error: 'frames' }; // a page of more frames than a capture places: refused
  }
  return {
    url: String(location.href), origin: String(self.origin),
    scrollX: window.scrollX, scrollY: window.scrollY,
    width: window.innerWidth, height: window.innerHeight, dpr: window.devicePixelRatio, frames: out,
  };
}
