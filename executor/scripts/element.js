// Acting on an element named by a ref, from chromegate's isolated world.
// Backend-neutral: a backend finds the element here, then acts with
// trusted input at the point this script returns (the way a user would),
// or with the element itself where the protocol needs one (files).
//
// arg: {op, ref, ...}. Every op first looks the ref up in the registry and
// returns {error, why} when it cannot: "malformed", "unknown", "expired".
//
//   point   {button?: true for clicks: must be enabled, timeoutMs,
//           once?: check once, guard?: guard the click}
//           -> {x, y} in the top frame's viewport, once the element is
//           attached, visible, enabled (clicks), still, and the topmost
//           thing at that point (itself or a descendant); polled until
//           timeoutMs (once: checked once), then {error: "timeout", why}.
//           With guard, the click the backend then sends is watched: a
//           press whose target is not the element (something moved onto
//           the point, or the element moved away) reaches no listener of
//           the page after this world's and does nothing (Playwright's
//           hit-target interception), and "guarded" says so
//   guarded -> scripts/guarded.js's: the guarded click's outcome, which
//           ends the guard (any ref; GuardedScript alone is smaller)
//   focus   {edit?: "key" | "text"} -> {ok}: scrolled into view and
//           focused; with edit, {error: "notfillable", why} instead when
//           the element is a disabled field, or (edit "text": the keys
//           would type) a read-only input or textarea
//   fill    {value} -> {done} when set directly (date, colour, range...),
//           {insert} when focused with its content selected for the
//           backend to insert text, or {error: "notfillable", why}
//   select  {values} -> scripts/select.js's result: {selected}, or
//           {missing|ambiguous, available, more}, or {error}
//   scroll  -> {ok}
//   text    -> {text}; html {outer} -> {text}
//   rect    -> {x, y, width, height} in the top viewport after scrolling
//   state   -> {attached, visible}: "removed" is not an error here
//   element -> the element itself (for a backend that needs a handle)
(arg, env) => {
  if (arg.op === 'guarded') return chromegateGuarded();
  const dom = chromegateDOM();
  const reg = chromegateRefs(env);
  const found = reg.lookup(arg.ref);
  if (found.error) {
    if (arg.op === 'state' && found.why === 'removed') return { attached: false, visible: false };
    return found;
  }
  const el = found.el;
  const win = dom.doc(el).defaultView;

  function visible(e) {
    const r = e.getBoundingClientRect();
    if (r.width <= 0 && r.height <= 0) return false;
    const st = e.ownerDocument.defaultView.getComputedStyle(e);
    return st.visibility !== 'hidden' && st.visibility !== 'collapse' && e.checkVisibility();
  }

  function disabled(e) {
    if (e.disabled) return true;
    if (e.closest('[aria-disabled="true"]')) return true;
    const fs = e.closest('fieldset[disabled]');
    return !!fs && 'disabled' in e;
  }

  // offset of e's document in the top frame's viewport
  function frameOffset(w) {
    let x = 0;
    let y = 0;
    while (w.frameElement) {
      const f = w.frameElement;
      const r = dom.rect(f);
      const cs = dom.doc(f).defaultView.getComputedStyle(f);
      x += r.left + f.clientLeft + parseFloat(cs.paddingLeft);
      y += r.top + f.clientTop + parseFloat(cs.paddingTop);
      w = dom.doc(f).defaultView;
    }
    return { x, y };
  }

  function inView(r, w) {
    return r.top >= 0 && r.left >= 0 && r.bottom <= w.innerHeight && r.right <= w.innerWidth;
  }

  function reveal() {
    const r = dom.rect(el);
    if (!inView(r, win)) el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    // the frames around it, outermost last
    for (let w = win; w.frameElement; w = w.frameElement.ownerDocument.defaultView) {
      const f = w.frameElement;
      if (!inView(dom.rect(f), dom.doc(f).defaultView)) {
        f.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      }
    }
  }

  // topmost element at a top-viewport point, through same-origin frames
  // and open shadow roots
  function hitAt(x, y) {
    let doc = document;
    let hit = doc.elementFromPoint(x, y);
    for (;;) {
      while (hit && dom.shadow(hit)) {
        const inner = dom.shadow(hit).elementFromPoint(x, y);
        if (!inner || inner === hit) break;
        hit = inner;
      }
      if (!hit || dom.tag(hit) !== 'IFRAME') return hit;
      let inner;
      try {
        inner = hit.contentDocument;
      } catch (e) {
        return hit;
      }
      if (!inner) return hit;
      const r = dom.rect(hit);
      const cs = dom.doc(hit).defaultView.getComputedStyle(hit);
      x -= r.left + hit.clientLeft + parseFloat(cs.paddingLeft);
      y -= r.top + hit.clientTop + parseFloat(cs.paddingTop);
      doc = inner;
      hit = doc.elementFromPoint(x, y);
    }
  }

  // a frame element whose document this script cannot enter (another
  // origin, a plugin): a pointer at it reaches that document, which was
  // decided nothing about by the call on this one
  function sealedFrame(e) {
    if (!e) return false;
    if (e.tagName === 'EMBED') return true;
    if (e.tagName !== 'IFRAME' && e.tagName !== 'FRAME' && e.tagName !== 'OBJECT') return false;
    let d = null;
    try {
      d = e.contentDocument;
    } catch (x) {
      d = null;
    }
    if (d) return false;
    try {
      return !!e.contentWindow;
    } catch (x) {
      return true;
    }
  }

  function within(node, ancestor) {
    for (let n = node; n; n = dom.parent(n) || n.host) {
      if (n === ancestor) return true;
    }
    return false;
  }

  function describe(e) {
    if (!e) return 'nothing';
    let s = '<' + dom.tag(e).toLowerCase();
    if (dom.id(e)) s += ' id="' + dom.id(e) + '"';
    else if (typeof e.className === 'string' && e.className.trim()) s += ' class="' + e.className.trim().slice(0, 40) + '"';
    return s + '>';
  }

  // the next animation frame (true), or false after 200 ms without one
  const frame = () => new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), 200);
    requestAnimationFrame(() => { clearTimeout(t); resolve(true); });
  });

  // one actionability check: {x, y} or {why}
  async function check(needEnabled) {
    if (!dom.connected(el)) return { gone: true };
    if (!visible(el)) return { why: 'the element is not visible' };
    if (needEnabled && disabled(el)) return { why: 'the element is disabled' };
    reveal();
    let r = dom.rect(el);
    if (win.document.getAnimations().length || document.getAnimations().length) {
      // still across two consecutive frames, as Playwright's "stable":
      // both boxes read after a frame moved the animations on (a box read
      // before the first could share its frame with the second)
      // (a frame that did not come moved nothing on: not known still)
      const rendered = await frame();
      r = dom.rect(el);
      const again = await frame();
      const r2 = dom.rect(el);
      if (!rendered || !again || r2.x !== r.x || r2.y !== r.y || r2.width !== r.width || r2.height !== r.height) {
        return { why: 'the element is moving' };
      }
      r = r2;
    }
    const off = frameOffset(win);
    // the centre of the first client rect that shows (a wrapped link has several)
    const rects = Array.from(dom.rects(el)).filter((q) => q.width > 0 && q.height > 0);
    const q = rects.find((c) => inView(c, win)) || rects[0] || r;
    const x = off.x + q.left + q.width / 2;
    const y = off.y + q.top + q.height / 2;
    const hit = hitAt(x, y);
    // what covers it is the page's markup: it goes in page, which the
    // server shows fenced, never in why
    if (!within(hit, el)) return { why: 'another element is on top of it', page: describe(hit) + ' is on top of the element' };
    // a pointer at the element's centre would land in a frame's own
    // document: act on the frame's elements instead, each decided on it
    if (sealedFrame(hit)) return { why: "a frame of another document is at the element's centre; act on the frame's own elements (the snapshot shows them under its iframe line)" };
    return { x, y };
  }

  // guard watches the next click on el from this world's listeners on
  // its window, capturing: the first trusted press decides, and a click
  // whose press was not on el (nor inside it) is stopped there, every
  // event of it, so nothing the page registered later sees it and its
  // default action (a link, a submit) does not happen.
  function guard() {
    const old = globalThis.chromegateClickGuard;
    if (old) old.stop();
    const kinds = ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click', 'auxclick', 'dblclick', 'contextmenu'];
    const g = { verdict: '', page: '' };
    const on = (e) => {
      if (!e.isTrusted) return;
      if (g.verdict === '' && (e.type === 'pointerdown' || e.type === 'mousedown')) {
        const path = e.composedPath();
        g.verdict = path.includes(el) ? 'ok' : 'missed';
        if (g.verdict === 'missed') g.page = describe(path[0] && path[0].nodeType === 1 ? path[0] : e.target) + ' received the press';
      }
      if (g.verdict === 'missed') {
        e.preventDefault();
        e.stopImmediatePropagation();
      }
    };
    for (const k of kinds) win.addEventListener(k, on, true);
    g.stop = () => {
      for (const k of kinds) win.removeEventListener(k, on, true);
    };
    Object.defineProperty(globalThis, 'chromegateClickGuard', { value: g, configurable: true, writable: true });
  }

  switch (arg.op) {
    case 'point': {
      return (async () => {
        const deadline = Date.now() + (arg.timeoutMs || 5000);
        for (;;) {
          const c = await check(!!arg.button);
          if (c.gone) return { error: 'expired', why: 'removed' };
          if (c.x !== undefined) {
            if (arg.guard) guard();
            return c;
          }
          if (arg.once || Date.now() >= deadline) return { error: 'timeout', why: c.why, page: c.page };
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
    }
    case 'focus':
      if (arg.edit && disabled(el)) return { error: 'notfillable', why: 'the element is disabled' };
      if (arg.edit === 'text' && (dom.tag(el) === 'INPUT' || dom.tag(el) === 'TEXTAREA') && el.readOnly) {
        return { error: 'notfillable', why: 'the element is read-only' };
      }
      reveal();
      el.focus();
      return { ok: true };
    case 'fill': {
      const tag = dom.tag(el);
      const type = (dom.attr(el, 'type') || '').toLowerCase();
      const direct = ['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'];
      if (tag === 'INPUT' && ['checkbox', 'radio', 'file', 'button', 'submit', 'reset', 'image', 'hidden'].includes(type)) {
        return { error: 'notfillable', why: 'an <input type=' + type + '> cannot be filled' };
      }
      if (tag !== 'INPUT' && tag !== 'TEXTAREA' && !el.isContentEditable) {
        return { error: 'notfillable', why: 'the element is not an input, textarea or contenteditable', page: 'the element is a <' + tag.toLowerCase() + '>' };
      }
      if (disabled(el)) return { error: 'notfillable', why: 'the element is disabled' };
      if (el.readOnly) return { error: 'notfillable', why: 'the element is read-only' };
      reveal();
      el.focus();
      if (tag === 'INPUT' && direct.includes(type)) {
        el.value = arg.value;
        if (arg.value !== '' && el.value !== arg.value) {
          return { error: 'notfillable', why: 'the value ' + JSON.stringify(arg.value) + ' is not valid for an <input type=' + type + '>' };
        }
        el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
        el.dispatchEvent(new Event('change', { bubbles: true }));
        return { done: true };
      }
      if (el.isContentEditable) {
        const range = dom.doc(el).createRange();
        range.selectNodeContents(el);
        const sel = win.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
      } else {
        el.select();
      }
      return { insert: true };
    }
    case 'select':
      // chromegateSelect is scripts/select.js, composed in (ElementScript).
      if (disabled(dom.tag(el) === 'LABEL' && el.control ? el.control : el)) return { error: 'notselect', why: 'the <select> is disabled' };
      return chromegateSelect(el, arg.values);
    case 'scroll':
      reveal();
      return { ok: true };
    case 'text':
      return { text: dom.innerText(el) !== undefined ? dom.innerText(el) : dom.text(el) };
    case 'html': {
      // a field a secret was typed into shows its mark (SecretMark)
      const masked = chromegateMaskedHTML(el, arg.outer);
      return { text: masked !== null ? masked : arg.outer ? el.outerHTML : el.innerHTML };
    }
    case 'rect': {
      reveal();
      const r = dom.rect(el);
      const off = frameOffset(win);
      return { x: off.x + r.left, y: off.y + r.top, width: r.width, height: r.height };
    }
    case 'state':
      return { attached: true, visible: visible(el) };
    case 'element':
      return el;
  }
  return { error: 'op', why: String(arg.op) };
}
