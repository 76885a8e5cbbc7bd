// The selector engine of the extension's targets, run in the isolated
// world: CSS through open shadow roots (light DOM first), and Playwright's
// text=, role=, id=, data-testid=, xpath= and css= forms; and the selector
// script, which composes it with the server's element script. The CDP
// backend has Playwright's own engine, so this one is the extension's.

// The selector engine: CSS through open shadow roots (light DOM first), and
// Playwright's text=, role=, id=, data-testid=, xpath= and css= forms.
export function selectorEngine() {
  function roots(root) {
    const out = [root];
    for (let i = 0; i < out.length; i++) {
      const walker = document.createTreeWalker(out[i], NodeFilter.SHOW_ELEMENT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        if (n.shadowRoot) out.push(n.shadowRoot);
      }
    }
    return out;
  }
  function all(root) {
    const out = [];
    for (const r of roots(root)) out.push(...r.querySelectorAll('*'));
    return out;
  }
  const norm = (s) => String(s || '').replace(/\s+/g, ' ').trim();
  function unquote(v) {
    const m = /^(["'])(.*)\1([si]?)$/.exec(v);
    return m ? { text: m[2], exact: m[3] === 's' || m[3] === '' } : { text: v, exact: false };
  }
  function textOf(el) {
    if (el.tagName === 'INPUT' && ['button', 'submit', 'reset'].includes((el.type || '').toLowerCase())) return el.value;
    return el.innerText !== undefined ? el.innerText : el.textContent;
  }
  function byText(q) {
    const { text, exact } = unquote(q);
    const want = exact ? norm(text) : norm(text).toLowerCase();
    const match = (el) => {
      if (['SCRIPT', 'STYLE', 'HEAD', 'TEMPLATE', 'NOSCRIPT'].includes(el.tagName)) return false;
      const t = norm(textOf(el));
      return exact ? t === want : t.toLowerCase().includes(want);
    };
    // the deepest elements that match, in document order
    return all(document).find((el) => match(el) && ![...el.children].some(match)) || null;
  }
  const IMPLICIT = {
    A: (e) => (e.hasAttribute('href') ? 'link' : ''), BUTTON: () => 'button', MAIN: () => 'main', NAV: () => 'navigation',
    ASIDE: () => 'complementary', HEADER: () => 'banner', FOOTER: () => 'contentinfo', FORM: () => 'form',
    H1: () => 'heading', H2: () => 'heading', H3: () => 'heading', H4: () => 'heading', H5: () => 'heading', H6: () => 'heading',
    UL: () => 'list', OL: () => 'list', LI: () => 'listitem', IMG: () => 'img', TABLE: () => 'table', TR: () => 'row',
    TD: () => 'cell', TH: () => 'columnheader', TEXTAREA: () => 'textbox', SELECT: (e) => (e.multiple || e.size > 1 ? 'listbox' : 'combobox'),
    DIALOG: () => 'dialog', ARTICLE: () => 'article', SECTION: () => 'region', OPTION: () => 'option',
    INPUT: (e) => ({ button: 'button', submit: 'button', reset: 'button', checkbox: 'checkbox', radio: 'radio', range: 'slider',
      search: 'searchbox', number: 'spinbutton' })[(e.type || 'text').toLowerCase()] || 'textbox',
  };
  function roleOf(el) {
    const r = el.getAttribute('role');
    if (r) return r.split(/\s+/)[0];
    const f = IMPLICIT[el.tagName];
    return f ? f(el) : '';
  }
  function nameOf(el) {
    const l = el.getAttribute('aria-label');
    if (l) return l;
    const by = el.getAttribute('aria-labelledby');
    if (by) return by.split(/\s+/).map((id) => norm((document.getElementById(id) || {}).textContent)).join(' ');
    if (el.labels && el.labels.length) return norm(el.labels[0].textContent);
    if (el.tagName === 'IMG') return el.getAttribute('alt') || '';
    return norm(textOf(el)) || el.getAttribute('title') || el.getAttribute('placeholder') || '';
  }
  function byRole(q) {
    const m = /^([a-z]+)\s*(.*)$/i.exec(q.trim());
    if (!m) throw new Error('invalid role selector ' + q);
    const role = m[1].toLowerCase();
    let name = null;
    const attrs = m[2].match(/\[[^\]]*\]/g) || [];
    for (const a of attrs) {
      const am = /^\[\s*name\s*=\s*(.*)\]$/.exec(a);
      if (am) name = unquote(am[1].trim());
    }
    return all(document).find((el) => {
      if (roleOf(el) !== role) return false;
      if (!name) return true;
      const n = norm(nameOf(el));
      return name.exact ? n === name.text : n.toLowerCase().includes(name.text.toLowerCase());
    }) || null;
  }
  function byCSS(sel) {
    for (const r of roots(document)) {
      const el = r.querySelector(sel);
      if (el) return el;
    }
    return null;
  }
  return function query(selector) {
    const s = String(selector);
    const m = /^(css|text|role|id|data-testid|xpath)=(.*)$/s.exec(s);
    if (s.startsWith('//') || s.startsWith('(//')) return query('xpath=' + s);
    if (!m) {
      document.createDocumentFragment().querySelector(s); // throws on a bad selector
      return byCSS(s);
    }
    const v = m[2];
    switch (m[1]) {
      case 'css': document.createDocumentFragment().querySelector(v); return byCSS(v);
      case 'text': return byText(v);
      case 'role': return byRole(v);
      case 'id': return byCSS('[id=' + JSON.stringify(unquote(v).text) + ']');
      case 'data-testid': return byCSS('[data-testid=' + JSON.stringify(unquote(v).text) + ']');
      case 'xpath': {
        const r = document.evaluate(v, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null);
        const n = r.singleNodeValue;
        return n && n.nodeType === 1 ? n : null;
      }
    }
    return null;
  };
}

// selectorScript composes the server's element script with the selector
// engine: it waits (in the page, until arg.waitMs) for the selector to
// match, gives the element a ref in the document's registry and runs the
// element script's op on it. op "probe" only reports {attached, visible}.
export function selectorScript(elementSource) {
  return `(() => {
const element = (${elementSource});
const query = (${selectorEngine.toString()})();
return async (arg, env) => {
  element({ op: 'state', ref: '_' }, env); // creates the registry
  const reg = globalThis.chromegateRefRegistry;
  const start = Date.now();
  let el = null;
  for (;;) {
    try {
      el = query(arg.selector);
    } catch (e) {
      return { error: 'badselector', why: String((e && e.message) || e) };
    }
    if (el || arg.op === 'probe' || Date.now() - start >= (arg.waitMs || 0)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (arg.op === 'probe') {
    if (!el) return { attached: false, visible: false };
    return element({ op: 'state', ref: reg.refFor(el) }, env);
  }
  if (!el) return { error: 'notfound' };
  const opArg = Object.assign({}, arg.opArg, { ref: reg.refFor(el) });
  if (typeof opArg.timeoutMs === 'number') opArg.timeoutMs = Math.max(1, opArg.timeoutMs - (Date.now() - start));
  return element(opArg, env);
};
})()`;
}
