// What is at a point of the viewport, and where the interactive elements
// are, read in chromegate's isolated world (arg.op "hit" or "marks").
// Coordinates are CSS pixels of the top document's viewport. Refs come
// from the shared registry, so they are the outline's refs.
//
// hit: {x, y, settle} -> {vw, vh, out} when the point is outside the
// viewport, else {vw, vh, tag, role, name, ref, frame, unseen}: the
// element under the point,
// looked for through same-origin frames; frame is true when the point is
// on a frame whose document this world cannot read (cross-origin), the
// element then being the frame itself.
// marks: {max} -> {vw, vh, marks: [{ref, role, name, x, y, w, h}], more}:
// the interactive elements whose box shows in the viewport, in document
// order, at most max.
(arg, env) => {
  const dom = chromegateDOM();
  const reg = chromegateRefs(env);
  const vw = innerWidth;
  const vh = innerHeight;
  const implicit = {
    A: (el) => (dom.hasAttr(el, 'href') ? 'link' : ''), BUTTON: () => 'button', SELECT: (el) => (el.multiple || el.size > 1 ? 'listbox' : 'combobox'),
    TEXTAREA: () => 'textbox', SUMMARY: () => 'button', IMG: () => 'img', IFRAME: () => 'iframe', FRAME: () => 'iframe',
    OPTION: () => 'option', LABEL: () => '', H1: () => 'heading', H2: () => 'heading', H3: () => 'heading',
  };
  const inputRole = {
    button: 'button', submit: 'button', reset: 'button', image: 'button', checkbox: 'checkbox', radio: 'radio',
    range: 'slider', number: 'spinbutton', search: 'searchbox', file: 'button', hidden: '',
  };
  const role = (el) => {
    const r = (dom.attr(el, 'role') || '').trim().split(/\s+/)[0];
    if (r) return r;
    if (dom.tag(el) === 'INPUT') {
      const t = (dom.attr(el, 'type') || 'text').toLowerCase();
      return t in inputRole ? inputRole[t] : 'textbox';
    }
    const f = implicit[dom.tag(el)];
    return f ? f(el) : (el.isContentEditable ? 'textbox' : '');
  };
  const clean = (s) => String(s || '').replace(/\s+/g, ' ').trim().slice(0, 100);
  const name = (el) => {
    const doc = dom.doc(el);
    const label = dom.attr(el, 'aria-label');
    if (label && label.trim()) return clean(label);
    const by = dom.attr(el, 'aria-labelledby');
    if (by) {
      const t = by.split(/\s+/).map((id) => doc.getElementById(id)).filter(Boolean).map((e) => e.textContent).join(' ');
      if (clean(t)) return clean(t);
    }
    if (el.labels && el.labels.length) return clean([...el.labels].map((l) => dom.text(l)).join(' '));
    if (dom.tag(el) === 'INPUT' && /^(button|submit|reset)$/i.test(el.type)) return clean(el.value);
    const alt = dom.attr(el, 'alt') || dom.attr(el, 'title') || dom.attr(el, 'placeholder');
    if (dom.tag(el) === 'IMG' || dom.tag(el) === 'IFRAME' || dom.tag(el) === 'INPUT' || dom.tag(el) === 'TEXTAREA') return clean(alt);
    return clean(dom.innerText(el) || dom.text(el) || alt);
  };
  // The nearest ancestor (or self) that a model would act on: a control,
  // a link, anything with an interactive role.
  const interactive = 'a[href],button,input,select,textarea,summary,[role],[contenteditable=""],[contenteditable=true],[tabindex],iframe,frame,label';
  const actionable = (el) => (el.closest && dom.closest(el, interactive)) || el;
  const describe = (el) => {
    const a = actionable(el);
    return { tag: dom.tag(a).toLowerCase(), role: role(a), name: name(a), ref: reg.refFor(a) };
  };

  // drawn resolves true once this document has drawn two frames and a
  // task has run after them, or false after ms (a hidden page draws none).
  const drawn = (ms) => new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => {
      clearTimeout(t);
      resolve(true);
    }, 0)));
  });

  // Two frames of the top document drawn (at most 200 ms): the browser
  // routes input by what was last drawn, out-of-process frames included.
  if (arg.op === 'drawn') return drawn(200);

  if (arg.op === 'marks') {
    const marks = [];
    let more = 0;
    const walk = (doc, ox, oy) => {
      for (const el of dom.qsa(doc, interactive + ',iframe')) {
        if (dom.tag(el) === 'LABEL' || (dom.hasAttr(el, 'role') && !role(el)) || dom.attr(el, 'aria-hidden') === 'true') continue;
        const r = dom.rect(el);
        const x = r.x + ox;
        const y = r.y + oy;
        if (r.width < 2 || r.height < 2 || x + r.width <= 0 || y + r.height <= 0 || x >= vw || y >= vh) continue;
        const cs = getComputedStyle(el);
        if (cs.visibility === 'hidden' || cs.display === 'none' || Number(cs.opacity) === 0) continue;
        if (dom.tag(el) === 'IFRAME' || dom.tag(el) === 'FRAME') {
          let inner = null;
          try { inner = el.contentDocument; } catch (e) { inner = null; }
          // A same-origin frame's elements are marked; a cross-origin
          // frame is no control, and what it shows is another document's.
          if (inner) walk(inner, x + el.clientLeft, y + el.clientTop);
          continue;
        }
        if (marks.length >= arg.max) {
          more++;
          continue;
        }
        marks.push({ ref: reg.refFor(el), role: role(el), name: name(el), x: Math.round(x), y: Math.round(y), w: Math.round(r.width), h: Math.round(r.height) });
      }
    };
    walk(document, 0, 0);
    return { vw, vh, marks, more };
  }

  // The trusted pointer moves each readable document saw (mousemove, or
  // dragover during a drag), counted by this world's capture listener on
  // its window (installed by the first hit
  // that finds the point in that document). A hit for the policy notes the
  // count of the document it found, per point.
  let moves = globalThis.chromegateMoves;
  if (!moves) {
    moves = { wins: new WeakMap(), notes: new Map() };
    Object.defineProperty(globalThis, 'chromegateMoves', { value: moves });
  }
  const movesOf = (win) => {
    let m = moves.wins.get(win);
    if (!m) {
      m = { seq: 0, x: NaN, y: NaN };
      const saw = (e) => {
        if (!e.isTrusted) return;
        m.seq++;
        m.x = e.clientX;
        m.y = e.clientY;
        if (m.seen) m.seen();
      };
      // Once a drag of a draggable element has started, the pointer's
      // moves reach the page as dragover.
      win.addEventListener('mousemove', saw, true);
      win.addEventListener('dragover', saw, true);
      moves.wins.set(win, m);
    }
    return m;
  };
  let leaf = null; // the readable document the last hit found, and the point in it

  // The hit, after the page handled what the pointer's move started
  // (arg.settle). Mouse moves reach the page aligned to a frame, and on a
  // busy machine or a headless shell not always by the next two, so where
  // the policy's hit found a readable document the settled hit waits for
  // that document to see the move at the point, then a task (every
  // listener of the move has run: a page that moves a frame under the
  // pointer then has moved it), at most a second (a page that stops the
  // event before this world's listener, or moved another document under
  // the point first, only waits that long). A move that never came is
  // {unseen: true}, and the action is refused: the browser routes input by
  // what it last drew, which may still show a frame the page has since
  // moved away, and then sends the move, and would send the press, to
  // that frame's document while this one's DOM shows the allowed element.
  // Where it found a frame this world cannot read, whose events it cannot
  // see, two frames and a task, at most 100 ms.
  const hit = () => {
    const x = Number(arg.x);
    const y = Number(arg.y);
    if (!(x >= 0 && y >= 0 && x < vw && y < vh)) return { vw, vh, out: true };
    let doc = document;
    let px = x;
    let py = y;
    for (let depth = 0; depth < 16; depth++) {
      const el = doc.elementFromPoint(px, py);
      if (!el) return { vw, vh, docURL: doc.URL, origin: (doc.defaultView && doc.defaultView.origin) || '', tag: '', role: '', name: '', ref: '' };
      // The document's URL and origin: the browser's frame tree gives no
      // tuple origin for an about:srcdoc or about:blank frame, which this
      // world could enter only because it is of the top's origin.
      const own = { docURL: doc.URL, origin: (doc.defaultView && doc.defaultView.origin) || '' };
      if (dom.tag(el) !== 'IFRAME' && dom.tag(el) !== 'FRAME') {
        leaf = { win: doc.defaultView, x: px, y: py };
        return { vw, vh, ...own, ...describe(el) };
      }
      let inner = null;
      try { inner = el.contentDocument; } catch (e) { inner = null; }
      if (!inner) return { vw, vh, frame: true, ...describe(el) };
      const r = dom.rect(el);
      px -= r.x + el.clientLeft;
      py -= r.y + el.clientTop;
      doc = inner;
    }
    return { vw, vh, frame: true, tag: '', role: '', name: '', ref: '' };
  };
  const key = `${arg.x},${arg.y}`;
  if (!arg.settle) {
    const h = hit();
    moves.notes.delete(key);
    if (leaf && leaf.win) {
      const m = movesOf(leaf.win);
      moves.notes.set(key, { m, seq: m.seq, x: leaf.x, y: leaf.y });
      // A few points at most are acted on at once (a drag's two).
      while (moves.notes.size > 8) moves.notes.delete(moves.notes.keys().next().value);
    }
    return h;
  }
  const note = moves.notes.get(key);
  moves.notes.delete(key);
  return new Promise((resolve) => {
    let done = false;
    const finish = (unseen) => {
      if (done) return;
      done = true;
      if (note) note.m.seen = null;
      resolve(unseen === true ? { ...hit(), unseen: true } : hit());
    };
    if (!note) {
      drawn(100).then(() => finish());
      return;
    }
    const arrived = () => note.m.seq > note.seq && Math.abs(note.m.x - note.x) < 1 && Math.abs(note.m.y - note.y) < 1;
    const t = setTimeout(() => finish(true), 1000);
    const check = () => {
      if (!arrived()) return;
      clearTimeout(t);
      setTimeout(finish, 0);
    };
    check();
    note.m.seen = check;
  });
}
