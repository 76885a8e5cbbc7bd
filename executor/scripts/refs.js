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
        if (!el || !chromegateDOM().connected(el)) {
          byRef.delete(ref);
          return { error: 'expired', why: 'removed' };
        }
        return { el };
      },
      // prune forgets refs whose elements are gone.
      prune() {
        for (const [ref, w] of byRef) {
          const el = w.deref();
          if (!el || !chromegateDOM().connected(el)) byRef.delete(ref);
        }
      },
    };
    Object.freeze(reg);
    Object.defineProperty(globalThis, 'chromegateRefRegistry', { value: reg });
  }
  return reg;
}

// chromegateDOM reads elements through the DOM's own prototypes. Named
// access makes a form's controls its properties, in every world, the
// isolated one too, shadowing the DOM's: a page that names a control
// "tagName", "getAttribute", "childNodes" or "hidden" would otherwise
// blank its form out of the outline, or make every read of it fail.
// Every chromegate script reads a node's DOM properties through these.
// Getters called on an element of a same-origin child frame work as well:
// the DOM checks the receiver, not its realm.
function chromegateDOM() {
  let dom = globalThis.chromegateSafeDOM;
  if (dom) return dom;
  const E = Element.prototype, N = Node.prototype, H = HTMLElement.prototype;
  const getter = (P, k) => {
    const f = Object.getOwnPropertyDescriptor(P, k).get;
    return (o) => f.call(o);
  };
  const method = (P, k) => {
    const f = P[k];
    return (o, ...a) => f.apply(o, a);
  };
  const nodeType = getter(N, 'nodeType');
  const ns = getter(E, 'namespaceURI');
  const isEl = (o) => nodeType(o) === 1;
  // An element's own, through Element's prototype; a document's or a
  // shadow root's (never shadowed by name here) as they are.
  const onElement = (k) => {
    const f = E[k];
    return (o, ...a) => (isEl(o) ? f.apply(o, a) : o[k](...a));
  };
  // An HTML element's through HTMLElement's prototype; others as they are.
  const onHTML = (k) => {
    const f = Object.getOwnPropertyDescriptor(H, k).get;
    return (o) => (isEl(o) && ns(o) === 'http://www.w3.org/1999/xhtml' ? f.call(o) : o[k]);
  };
  const children = getter(E, 'children');
  dom = Object.freeze({
    nodeType,
    tag: getter(E, 'tagName'),
    localName: getter(E, 'localName'),
    id: getter(E, 'id'),
    attr: method(E, 'getAttribute'),
    hasAttr: method(E, 'hasAttribute'),
    attrs: getter(E, 'attributes'),
    shadow: getter(E, 'shadowRoot'),
    closest: method(E, 'closest'),
    matches: method(E, 'matches'),
    rect: method(E, 'getBoundingClientRect'),
    rects: method(E, 'getClientRects'),
    kids: getter(N, 'childNodes'),
    children: (o) => (isEl(o) ? children(o) : o.children),
    parent: getter(N, 'parentNode'),
    parentEl: getter(N, 'parentElement'),
    connected: getter(N, 'isConnected'),
    doc: getter(N, 'ownerDocument'),
    text: getter(N, 'textContent'),
    contains: method(N, 'contains'),
    rootOf: method(N, 'getRootNode'),
    qs: onElement('querySelector'),
    qsa: onElement('querySelectorAll'),
    hidden: onHTML('hidden'),
    innerText: onHTML('innerText'),
  });
  Object.defineProperty(globalThis, 'chromegateSafeDOM', { value: dom });
  return dom;
}

// A field an operator's secret was typed into reads as the secret's
// reference from then on (executor.SecretMark): the marks live in a
// WeakMap on the isolated world's globalThis, element -> what it shows, so
// a page can neither read, forge nor remove one, and one goes with its
// element.
function chromegateSecretMarks() {
  let marks = globalThis.chromegateSecretFields;
  if (!marks) {
    marks = new WeakMap();
    Object.defineProperty(globalThis, 'chromegateSecretFields', { value: marks });
  }
  return marks;
}

// chromegateShown returns what el's value reads as when a secret is in it,
// or null: its own mark, or, for a hidden input holding a value, the mark
// of a field of its form (a page that copies the field into a hidden input
// of the form it submits).
function chromegateShown(el) {
  const marks = globalThis.chromegateSecretFields;
  if (!marks || !el) return null;
  const m = marks.get(el);
  if (m !== undefined) return m;
  if (el.tagName === 'INPUT' && String(el.type).toLowerCase() === 'hidden' && el.value && el.form) {
    for (const f of el.form.elements) {
      const fm = marks.get(f);
      if (fm !== undefined) return fm;
    }
  }
  return null;
}

// chromegateMaskedHTML returns el's outer (or inner) HTML with every field
// of it that reads as a secret's mark (chromegateShown) showing the mark in
// its value attribute and text, or null when no field of it is marked.
function chromegateMaskedHTML(el, outer) {
  if (!globalThis.chromegateSecretFields) return null;
  const orig = [el, ...el.querySelectorAll('*')];
  const shown = orig.map(chromegateShown);
  if (shown.every((m) => m === null)) return null;
  const clone = el.cloneNode(true);
  const copy = [clone, ...clone.querySelectorAll('*')];
  shown.forEach((m, i) => {
    if (m === null || !copy[i]) return;
    const c = copy[i];
    if (c.hasAttribute('value') || c.tagName === 'INPUT') c.setAttribute('value', m);
    if (c.tagName === 'TEXTAREA' || orig[i].isContentEditable) c.textContent = m;
  });
  return outer ? clone.outerHTML : clone.innerHTML;
}
