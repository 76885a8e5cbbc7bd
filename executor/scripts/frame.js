// Frames of other origins, from chromegate's isolated world: what a
// backend needs to route a ref to a frame's document and a point back to
// the page. Composed with the ref registry (executor.WithRefs).
//
// arg: {op, ...}
//   where  -> {url, origin}: the document this world is in, as the
//             browser has it (its location, its security origin)
//   owner  {ref, x, y, hit, reveal} -> {x, y, width, height}: ref names a
//          frame element of this document; (x, y) a point of the frame's
//          viewport. Returns that point in the top frame's viewport as far
//          as this document knows it (its own same-origin frames
//          included), and the frame's viewport size. reveal first scrolls
//          the frame element into view; hit requires the frame element to
//          be the topmost thing at that point in this document (a page
//          that covers a frame gets nothing through it):
//          {error: "covered", why} otherwise.
//   at     {x, y} -> {ref, x, y}: the frame of another origin at point
//          (x, y) of this document's viewport (through its same-origin
//          frames), as a ref of its frame element and the point in the
//          frame's viewport; {doc: true} when the point is this
//          document's (or a same-origin frame's, or a frame's border).
(arg, env) => {
  const dom = chromegateDOM();
  if (arg.op === 'where') return { url: String(location.href), origin: String(self.origin) };
  const reg = chromegateRefs(env);
  if (arg.op === 'at') {
    let doc = document;
    let x = arg.x;
    let y = arg.y;
    for (let depth = 0; depth < 16; depth++) {
      const el = doc.elementFromPoint(x, y);
      if (!el || (dom.tag(el) !== 'IFRAME' && dom.tag(el) !== 'FRAME')) return { doc: true };
      const r = dom.rect(el);
      const cs = dom.doc(el).defaultView.getComputedStyle(el);
      const fx = x - (r.left + el.clientLeft + parseFloat(cs.paddingLeft));
      const fy = y - (r.top + el.clientTop + parseFloat(cs.paddingTop));
      const w = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      const h = el.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom);
      if (fx < 0 || fy < 0 || fx >= w || fy >= h) return { doc: true };
      let inner = null;
      try {
        inner = el.contentDocument;
      } catch (e) {
        inner = null;
      }
      if (inner && inner.documentElement) {
        doc = inner;
        x = fx;
        y = fy;
        continue;
      }
      return { ref: reg.refFor(el), x: fx, y: fy };
    }
    return { doc: true };
  }
  const found = reg.lookup(arg.ref);
  if (found.error) return found;
  const f = found.el;
  if (arg.op !== 'owner') return { error: 'op', why: String(arg.op) };
  if (dom.tag(f) !== 'IFRAME' && dom.tag(f) !== 'FRAME') return { error: 'notframe', why: 'the element is a <' + dom.tag(f).toLowerCase() + '>' };
  const win = dom.doc(f).defaultView;
  if (arg.reveal) {
    const r0 = dom.rect(f);
    if (r0.top < 0 || r0.left < 0 || r0.bottom > win.innerHeight || r0.right > win.innerWidth) {
      f.scrollIntoView({ block: 'nearest', inline: 'nearest', behavior: 'instant' });
    }
  }
  const r = dom.rect(f);
  const cs = win.getComputedStyle(f);
  const left = r.left + f.clientLeft + parseFloat(cs.paddingLeft);
  const top = r.top + f.clientTop + parseFloat(cs.paddingTop);
  const x = left + (arg.x || 0);
  const y = top + (arg.y || 0);
  if (arg.hit) {
    const at = dom.doc(f).elementFromPoint(x, y);
    if (at !== f) {
      return { error: 'covered', why: at ? 'the frame is covered at that point by a <' + dom.tag(at).toLowerCase() + '> of the page around it' : 'the point is outside the page around the frame' };
    }
  }
  // the same-origin frames around this document, outermost last
  let ox = 0;
  let oy = 0;
  for (let w = win; w.frameElement; w = w.frameElement.ownerDocument.defaultView) {
    const fe = w.frameElement;
    const fr = dom.rect(fe);
    const fcs = dom.doc(fe).defaultView.getComputedStyle(fe);
    ox += fr.left + fe.clientLeft + parseFloat(fcs.paddingLeft);
    oy += fr.top + fe.clientTop + parseFloat(fcs.paddingTop);
  }
  return { x: ox + x, y: oy + y, width: f.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight), height: f.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom) };
}
