// The page snapshot and query: a compact outline of a page for acting on
// it, and the elements matching a CSS selector. Runs in chromegate's
// isolated world through executor.RunScript on every backend, composed
// with the ref registry (executor.WithRefs), so chromegateRefs is in scope.
//
// arg.op "snapshot": {scope: {selector|ref}, interactiveOnly, maxChars,
// offset} -> {lines, total, offset, next, text, run} or {error}.
// arg.op "query": {selector, limit} -> {total, items} or {error}.
//
// Outline lines, indented one space per level (see helpers/snapshot.go):
//   nav Main                          landmarks (header, nav, main, aside,
//                                     footer, search, form, section, dialog)
//   ## Pricing                        headings, # per level
//   "First words of a paragraph…" (+3)  text: a run's first line, the rest counted
//   kq3 link Docs                     ref, role, name to the end of the line
//   kq7 textbox "Email" value="a@b.c" required   name quoted when states follow
//   links (ref kq+number):            a run of plain links: the number before
//   12 Guide one                      each name, after the run's ref letters
//   iframe Checkout                   frames, contents indented: same-origin
//                                     ones here, others by the backend, which
//                                     gets {lines, runOf, frames} unpaged
(arg, env) => {
  const dom = chromegateDOM();
  const reg = chromegateRefs(env);
  // A scoped snapshot is expanded: what the outline cuts (names, values,
  // text runs, a control's options) it shows whole, a line no longer than
  // FULL (a longer text goes on as further lines), paged like any outline.
  const sc = arg.scope || {};
  const expanded = arg.op === 'snapshot' && !!(sc.ref || sc.selector);
  const FULL = 2000;
  const MAX_NAME = expanded ? FULL : 80;
  const MAX_TEXT = expanded ? FULL : 80;
  const MAX_VALUE = expanded ? FULL : 40;
  const MAX_OPTIONS = 8;
  const MAX_OPTION = 30;
  // Text lines in a row before the rest are only counted: the snapshot is
  // for acting; get_text and read_as_markdown are for reading.
  const TEXT_RUN = expanded ? Infinity : 1;

  const LANDMARKS = new Set(['banner', 'navigation', 'main', 'complementary', 'contentinfo',
    'search', 'form', 'region', 'dialog', 'alertdialog']);
  const INTERACTIVE = new Set(['link', 'button', 'checkbox', 'radio', 'textbox', 'searchbox',
    'combobox', 'listbox', 'slider', 'spinbutton', 'switch', 'tab', 'menuitem',
    'menuitemcheckbox', 'menuitemradio', 'option', 'treeitem', 'file', 'clickable']);
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE']);
  const TEXTY = new Set(['', 'text', 'email', 'tel', 'url', 'password']);

  const norm = (s) => String(s == null ? '' : s).replace(/\s+/g, ' ').trim();
  // cutAny: the outline cut something, and says once how to see it whole.
  let cutAny = false;
  const cut = (s, n) => {
    if (s.length <= n) return s;
    cutAny = true;
    return s.slice(0, n - 1) + '…';
  };
  const quote = (s) => JSON.stringify(s);

  // textOf: the visible words of an element, images by their alt text,
  // open shadow roots included, bounded.
  function textOf(node, budget, without) {
    let out = '';
    const walk = (n) => {
      if (out.length > budget) return;
      if (dom.nodeType(n) === 3) { out += n.data; return; }
      if (dom.nodeType(n) !== 1 && dom.nodeType(n) !== 11) return;
      if (dom.nodeType(n) === 1) {
        if (SKIP.has(dom.tag(n)) || (without && without.has(dom.tag(n))) || dom.attr(n, 'aria-hidden') === 'true' || dom.hidden(n)) return;
        if (dom.tag(n) === 'IMG' || (dom.tag(n) === 'INPUT' && n.type === 'image')) { out += ' ' + (dom.attr(n, 'alt') || '') + ' '; return; }
        if (dom.tag(n) === 'SLOT') { for (const c of n.assignedNodes({ flatten: true })) walk(c); return; }
      }
      const kids = dom.shadow(n) ? dom.shadow(n).childNodes : dom.kids(n);
      for (const c of kids) walk(c);
      if (dom.nodeType(n) === 1 && dom.tag(n) === 'BR') out += ' ';
    };
    walk(node);
    return norm(out);
  }

  function byId(el, id) {
    const root = dom.rootOf(el);
    return (root.getElementById ? root.getElementById(id) : null) || dom.doc(el).getElementById(id);
  }

  function roleOf(el) {
    const explicit = norm(dom.attr(el, 'role')).split(' ')[0];
    if (explicit && explicit !== 'presentation' && explicit !== 'none' && explicit !== 'generic') return explicit;
    const tag = dom.tag(el);
    switch (tag) {
      case 'A': case 'AREA': return dom.hasAttr(el, 'href') ? 'link' : '';
      case 'BUTTON': return 'button';
      case 'SUMMARY': return 'button';
      case 'SELECT': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'TEXTAREA': return 'textbox';
      case 'INPUT': {
        const t = (dom.attr(el, 'type') || '').toLowerCase();
        if (t === 'hidden') return '';
        if (['button', 'submit', 'reset', 'image'].includes(t)) return 'button';
        if (t === 'checkbox') return dom.attr(el, 'switch') !== null ? 'switch' : 'checkbox';
        if (t === 'radio') return 'radio';
        if (t === 'range') return 'slider';
        if (t === 'number') return 'spinbutton';
        if (t === 'search') return el.list ? 'combobox' : 'searchbox';
        if (t === 'file') return 'file';
        if (t === 'color') return 'button';
        return el.list ? 'combobox' : 'textbox';
      }
      case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6': return 'heading';
      case 'NAV': return 'navigation';
      case 'MAIN': return 'main';
      case 'ASIDE': return 'complementary';
      case 'SEARCH': return 'search';
      case 'DIALOG': return 'dialog';
      case 'FORM': return accName(el, '') ? 'form' : '';
      case 'SECTION': return accName(el, '') ? 'region' : '';
      case 'HEADER': case 'FOOTER':
        if (dom.closest(el, 'article, aside, main, nav, section')) return '';
        return tag === 'HEADER' ? 'banner' : 'contentinfo';
      case 'IFRAME': return 'iframe';
      case 'IMG': return 'img';
    }
    if (el.isContentEditable && !(dom.parentEl(el) && dom.parentEl(el).isContentEditable)) return 'textbox';
    return '';
  }

  // accName: a sensible accessible name, in the order of the ARIA name
  // computation's most common steps.
  function accName(el, role) {
    const lb = dom.attr(el, 'aria-labelledby');
    if (lb) {
      const s = norm(lb.split(/\s+/).map((id) => { const r = byId(el, id); return r ? textOf(r, 200) : ''; }).join(' '));
      if (s) return s;
    }
    const al = norm(dom.attr(el, 'aria-label'));
    if (al) return al;
    const tag = dom.tag(el);
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || tag === 'METER' || tag === 'PROGRESS' || tag === 'OUTPUT') {
      const t = (el.type || '').toLowerCase();
      if (tag === 'INPUT' && ['button', 'submit', 'reset'].includes(t)) {
        return norm(el.value) || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : '');
      }
      if (tag === 'INPUT' && t === 'image') return norm(dom.attr(el, 'alt')) || titleOf(el) || 'Submit';
      if (el.labels && el.labels.length) {
        const s = norm(Array.from(el.labels, (l) => labelText(l, el)).join(' '));
        if (s) return s;
      }
      return norm(dom.attr(el, 'placeholder')) || titleOf(el);
    }
    if (tag === 'IMG' || tag === 'AREA') return norm(dom.attr(el, 'alt')) || titleOf(el);
    if (tag === 'IFRAME') return titleOf(el) || norm(dom.attr(el, 'name'));
    if (tag === 'FIELDSET') { const lg = dom.qs(el, ':scope > legend'); if (lg) return textOf(lg, 200); }
    if (role && nameFromContent(role, el)) {
      const s = textOf(el, 200);
      if (s) return s;
    }
    return titleOf(el) || norm(dom.attr(el, 'placeholder'));
  }

  // titleOf reads the title attribute, not the property: a form's property
  // is its control named "title" when it has one (named access shadows it,
  // as it does name, id and action).
  function titleOf(el) { return norm(dom.attr(el, 'title')); }

  // A label's words without the control's own text (a select's options),
  // read in place: a copy of the label would copy every option.
  const CONTROL_TEXT = new Set(['SELECT', 'TEXTAREA']);
  function labelText(label, control) {
    if (!dom.contains(label, control) || dom.tag(control) === 'INPUT') return textOf(label, 200);
    return textOf(label, 200, CONTROL_TEXT);
  }

  function nameFromContent(role, el) {
    return ['link', 'button', 'heading', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio',
      'option', 'treeitem', 'checkbox', 'radio', 'switch', 'clickable', 'cell', 'row'].includes(role) ||
      dom.tag(el) === 'SUMMARY';
  }

  function isDisabled(el) {
    if (el.disabled) return true;
    if (dom.attr(el, 'aria-disabled') === 'true') return true;
    const fs = dom.closest(el, 'fieldset[disabled]');
    return !!(fs && !dom.qs(fs, ':scope > legend')?.contains(el) && 'disabled' in el);
  }

  // states: the words after the name: value, checked, disabled, ...
  function states(el, role) {
    const out = [];
    const tag = dom.tag(el);
    const t = (el.type || '').toLowerCase();
    // a field a secret was typed into shows its mark, whatever it holds
    const shown = chromegateShown(el);
    if (tag === 'INPUT' && !['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'hidden'].includes(t)) {
      if (el.value) out.push('value=' + (t === 'password' ? '"••••"' : quote(shown !== null ? shown : cut(el.value, MAX_VALUE))));
    } else if (tag === 'TEXTAREA') {
      if (el.value) out.push('value=' + quote(shown !== null ? shown : cut(norm(el.value), MAX_VALUE)));
    } else if (tag === 'INPUT' && t === 'file') {
      if (el.files && el.files.length) out.push('files=' + quote(cut(Array.from(el.files, (f) => f.name).join(', '), MAX_VALUE)));
    } else if (tag === 'SELECT') {
      // Expanded, the options follow as lines of their own, each with its
      // state: the value and the list would say it twice.
      if (!expanded) {
        const sel = Array.from(el.selectedOptions, optLabel);
        if (sel.length) out.push('value=' + quote(cut(sel.join(', '), MAX_VALUE)));
        out.push(optionList(el.options));
      }
    } else if (role === 'textbox' && el.isContentEditable) {
      const v = textOf(el, MAX_VALUE + 10);
      if (v) out.push('value=' + quote(shown !== null ? shown : cut(v, MAX_VALUE)));
    }
    if (tag === 'INPUT' && el.list && !expanded && el.list.options.length) out.push(optionList(el.list.options));
    if (tag === 'INPUT' && (t === 'checkbox' || t === 'radio')) {
      if (el.indeterminate) out.push('mixed'); else if (el.checked) out.push('checked');
    } else {
      const ac = dom.attr(el, 'aria-checked');
      if (ac === 'true') out.push('checked'); else if (ac === 'mixed') out.push('mixed');
    }
    if (dom.attr(el, 'aria-pressed') === 'true') out.push('pressed');
    if (dom.attr(el, 'aria-selected') === 'true' && role !== 'option') out.push('selected');
    if (role === 'option' && (el.selected || dom.attr(el, 'aria-selected') === 'true')) out.push('selected');
    const ex = dom.attr(el, 'aria-expanded');
    if (ex === 'true') out.push('expanded'); else if (ex === 'false') out.push('collapsed');
    if (isDisabled(el)) out.push('disabled');
    if (el.required || dom.attr(el, 'aria-required') === 'true') out.push('required');
    if (el.readOnly && (tag === 'INPUT' || tag === 'TEXTAREA')) out.push('readonly');
    return out;
  }

  // An option's label as the outline shows it and select_option matches it.
  function optLabel(o) {
    return norm(o.label || o.text) || norm(o.value);
  }

  // optionList: the outline's options=[…]: the first few, cut short, and
  // how many more; a scoped snapshot of the control lists them all.
  function optionList(options) {
    const n = options.length;
    const shown = [];
    for (let i = 0; i < Math.min(n, MAX_OPTIONS); i++) shown.push(cut(optLabel(options[i]), MAX_OPTION));
    if (n > MAX_OPTIONS) {
      cutAny = true;
      shown.push('+' + (n - MAX_OPTIONS) + ' more');
    }
    return 'options=[' + shown.join(', ') + ']';
  }

  // clickable: a focusable or pointer-cursor element that has no role but
  // is evidently meant to be clicked.
  function clickable(el, style, parentCursor) {
    if (dom.hasAttr(el, 'onclick')) return true;
    const ti = dom.attr(el, 'tabindex');
    if (ti !== null && Number(ti) >= 0) return true;
    return style.cursor === 'pointer' && parentCursor !== 'pointer' && dom.tag(el) !== 'LABEL' &&
      dom.tag(el) !== 'IMG' && dom.tag(el) !== 'svg';
  }

  function hasBox(el, style) {
    if (style.display === 'contents') return true;
    const r = dom.rect(el);
    return r.width > 0 || r.height > 0;
  }

  function sameOriginDoc(frame) {
    try {
      const d = frame.contentDocument;
      return d && d.documentElement ? d : null;
    } catch (e) {
      return null;
    }
  }

  // --- query -----------------------------------------------------------
  if (arg.op === 'query') {
    let list;
    try {
      list = dom.qsa(document, arg.selector);
    } catch (e) {
      return { error: 'invalid selector: ' + e.message };
    }
    const limit = arg.limit > 0 ? arg.limit : 50;
    const items = [];
    for (const el of Array.from(list).slice(0, limit)) {
      const role = roleOf(el);
      const style = dom.doc(el).defaultView.getComputedStyle(el);
      const item = { tag: dom.tag(el).toLowerCase() };
      if (role) item.role = role;
      const name = cut(accName(el, role || 'clickable'), MAX_NAME);
      if (name) item.name = name;
      const shown = chromegateShown(el);
      const text = shown !== null && el.isContentEditable ? shown : cut(textOf(el, 300), 120);
      if (text && text !== name) item.text = text;
      const attrs = {};
      for (const a of dom.attrs(el)) {
        if (['id', 'name', 'type', 'href', 'placeholder', 'for', 'title', 'alt', 'src', 'action'].includes(a.name) || a.name.startsWith('aria-')) {
          attrs[a.name] = cut(a.value, 200);
        }
      }
      if ('value' in el && typeof el.value === 'string' && el.value && el.type !== 'password') attrs.value = shown !== null ? shown : cut(el.value, 200);
      if (Object.keys(attrs).length) item.attrs = attrs;
      if (style.display === 'none' || style.visibility === 'hidden' || !hasBox(el, style)) item.hidden = true;
      item.ref = reg.refFor(el);
      items.push(item);
    }
    return { total: list.length, items };
  }

  // --- snapshot --------------------------------------------------------

  // parentOf: the composed parent (a shadow root's host).
  const parentOf = (n) => (dom.parent(n) && dom.parent(n).nodeType === 11 ? dom.parent(n).host : dom.parent(n));
  // common: the nearest element holding both nodes.
  function common(a, b) {
    const up = new Set();
    for (let n = a; n; n = parentOf(n)) up.add(n);
    for (let n = b; n; n = parentOf(n)) if (dom.nodeType(n) === 1 && up.has(n)) return n;
    return null;
  }
  // groupOf: what expanding a control shows: a radio's whole group, an
  // option's list; else the element itself.
  function groupOf(el) {
    if (dom.tag(el) === 'INPUT' && el.type === 'radio' && el.name) {
      const scopeEl = el.form || dom.rootOf(el);
      const group = Array.from(dom.qsa(scopeEl, 'input[type=radio]'))
        .filter((r) => r.name === el.name && (r.form || null) === (el.form || null));
      let c = el;
      for (const r of group) c = common(c, r) || c;
      return c;
    }
    const role = roleOf(el);
    if (role === 'radio') return dom.closest(el, '[role=radiogroup]') || el;
    if (role === 'option' || role === 'treeitem') return dom.closest(el, '[role=listbox], [role=tree]') || el;
    return el;
  }
  let root = document.body || document.documentElement;
  const scope = arg.scope || {};
  if (scope.ref) {
    const found = reg.lookup(scope.ref);
    if (found.error) return { error: found.error, why: found.why || '' };
    root = found.el;
  } else if (scope.selector) {
    try {
      root = dom.qs(document, scope.selector);
    } catch (e) {
      return { error: 'invalid selector: ' + e.message };
    }
    if (!root) return { error: 'notfound' };
  }
  root = groupOf(root);
  reg.prune();

  // Landmark roles by their HTML names, which are shorter and as familiar.
  const LANDMARK_WORD = { banner: 'header', navigation: 'nav', complementary: 'aside', contentinfo: 'footer', region: 'section' };
  // Inputs whose type says more than "textbox": the type is the role word.
  const TYPED = new Set(['date', 'time', 'datetime-local', 'month', 'week', 'color']);
  // Runs of at least this many plain sibling links are written as a list.
  const LINK_RUN = 8;

  const interactiveOnly = !!arg.interactiveOnly;
  // recs: the outline's lines before rendering: {d: depth, s: text, k:
  // kind ('el', 'lm', 'h', 't', 'iframe'), and for a plain link n: its
  // name, ref: its ref, plain: no states}.
  const recs = [];
  let textRun = 0;
  let textSkipped = 0;
  let lastText = -1; // the rec of the current text run's last shown line
  let pending = '';
  let pendingDepth = 0;
  // The current text run's first and last text nodes: a cut run's line
  // carries the ref of the element holding both, which expands it.
  let runFirst = null;
  let runLast = null;
  let runCut = false;
  let pendFirst = null;
  let pendLast = null;
  let mute = 0; // > 0 inside an element already named: its words are not text lines

  const endRun = () => {
    if (textSkipped && lastText >= 0) recs[lastText].s += ' (+' + textSkipped + ')';
    if ((textSkipped || runCut) && lastText >= 0 && runFirst) {
      cutAny = true;
      const holder = common(runFirst, runLast);
      if (holder) recs[lastText].s = reg.refFor(holder) + ' ' + recs[lastText].s;
    }
    runFirst = runLast = null;
    runCut = false;
    textSkipped = 0;
    textRun = 0;
    lastText = -1;
  };
  const emit = (depth, rec) => {
    flushText();
    endRun();
    rec.d = depth;
    recs.push(rec);
  };
  function flushText() {
    const t = norm(pending);
    const first = pendFirst;
    const last = pendLast;
    pending = '';
    pendFirst = pendLast = null;
    // Separators between links (",", "·", "›") carry nothing.
    if (!t || interactiveOnly || !/[\p{L}\p{N}]/u.test(t)) return;
    if (!runFirst) runFirst = first;
    runLast = last;
    if (textRun >= TEXT_RUN) { textSkipped++; return; }
    textRun++;
    lastText = recs.length;
    if (expanded) {
      for (let i = 0; i < t.length; i += FULL) recs.push({ d: pendingDepth, k: 't', s: quote(t.slice(i, i + FULL)) });
      return;
    }
    if (t.length > MAX_TEXT) runCut = true;
    recs.push({ d: pendingDepth, k: 't', s: quote(cut(t, MAX_TEXT)) });
  }
  const addText = (depth, s, node) => {
    if (interactiveOnly || mute) return;
    if (!pending.trim()) pendingDepth = depth;
    pending += s;
    if (node && /\S/.test(s)) {
      if (!pendFirst) pendFirst = node;
      pendLast = node;
    }
  };
  // nameThen: a name to the end of the line, or quoted when more follows
  // (or when it starts with a quote of its own).
  const nameThen = (name, more) => {
    if (!name) return more ? ' ' + more : '';
    return ' ' + (more || name[0] === '"' ? quote(name) + (more ? ' ' + more : '') : name);
  };

  const BLOCK = /^(block|flex|grid|table|list-item|table-row|table-cell|flow-root|table-caption)/;

  function walk(node, depth, parentCursor, hiddenByVisibility) {
    if (dom.nodeType(node) === 3) {
      if (!hiddenByVisibility) addText(depth, node.data, node);
      return;
    }
    if (dom.nodeType(node) === 11) { // a shadow root
      for (const c of dom.kids(node)) walk(c, depth, parentCursor, hiddenByVisibility);
      return;
    }
    if (dom.nodeType(node) !== 1) return;
    const el = node;
    if (SKIP.has(dom.tag(el))) return;
    if (dom.attr(el, 'aria-hidden') === 'true') return;
    const style = dom.doc(el).defaultView.getComputedStyle(el);
    if (style.display === 'none') return;
    const invisible = style.visibility === 'hidden' || style.visibility === 'collapse';
    const block = BLOCK.test(style.display);
    if (block) flushText();

    let role = roleOf(el);
    if (!role && !invisible && clickable(el, style, parentCursor)) role = 'clickable';
    let childDepth = depth;
    const seen = !invisible && hasBox(el, style);

    if (dom.tag(el) === 'SLOT') {
      for (const c of el.assignedNodes({ flatten: true })) walk(c, depth, parentCursor, invisible);
      return;
    }
    if (role === 'iframe') {
      const doc = seen ? sameOriginDoc(el) : null;
      const name = cut(accName(el, role), MAX_NAME);
      if (seen && !doc) {
        // Another origin's document: the backend outlines it in its own
        // world, if the policy allows it (helpers.Snapshot), in place.
        emit(depth, { k: 'frame', s: 'iframe' + nameThen(name, ''), name, fref: reg.refFor(el) });
        return;
      }
      emit(depth, { k: 'iframe', s: 'iframe' + nameThen(name, '') });
      if (doc && doc.body) walk(doc.body, depth + 1, '', false);
      return;
    }
    if (INTERACTIVE.has(role) && seen) {
      const name = cut(accName(el, role), MAX_NAME);
      const st = states(el, role);
      const t = (el.type || '').toLowerCase();
      const word = dom.tag(el) === 'INPUT' && TYPED.has(t) ? t : role;
      const ref = reg.refFor(el);
      emit(depth, { k: 'el', s: ref + ' ' + word + nameThen(name, st.join(' ')), n: name, ref, plain: role === 'link' && !st.length });
      if (expanded) expandOptions(el, role, depth + 1);
      // Nested controls stay addressable; the element's own words were
      // its name.
      if (dom.tag(el) !== 'SELECT' && dom.tag(el) !== 'TEXTAREA' && dom.tag(el) !== 'INPUT') {
        walkChildren(el, depth + 1, style.cursor, invisible, true);
      }
      return;
    }
    if (!interactiveOnly && seen) {
      if (role === 'heading') {
        const name = cut(accName(el, role), MAX_NAME);
        const m = /^H([1-6])$/.exec(dom.tag(el));
        const level = Math.min(6, Math.max(1, Number(m ? m[1] : dom.attr(el, 'aria-level')) || 2));
        emit(depth, { k: 'h', s: '#'.repeat(level) + (name ? ' ' + name : '') });
        walkChildren(el, depth + 1, style.cursor, invisible, true);
        return;
      }
      if (LANDMARKS.has(role)) {
        const name = cut(accName(el, ''), MAX_NAME);
        emit(depth, { k: 'lm', s: (LANDMARK_WORD[role] || role) + nameThen(name, ''), named: !!name });
        childDepth = depth + 1;
      }
    }
    // A label's words are its control's name already.
    walkChildren(el, childDepth, style.cursor, invisible, dom.tag(el) === 'LABEL' && !!el.control);
    if (block) flushText();
  }

  // expandOptions lists a control's options as lines of their own: a
  // select's (by group), a datalist's, and a combobox's popup list (with
  // refs when open) unless the scope holds it open, where it is outlined
  // where it stands.
  function expandOptions(el, role, depth) {
    const optLine = (o, d) => {
      const label = optLabel(o);
      const st = [];
      if (o.selected) st.push('selected');
      if (o.disabled || (o.parentElement && o.parentElement.tagName === 'OPTGROUP' && o.parentElement.disabled)) st.push('disabled');
      if (o.value !== label) st.push('value=' + quote(cut(o.value, MAX_VALUE)));
      emit(d, { k: 'o', s: 'option' + nameThen(cut(label, MAX_NAME), st.join(' ')) });
    };
    if (dom.tag(el) === 'SELECT') {
      for (const c of dom.children(el)) {
        if (dom.tag(c) === 'OPTION') optLine(c, depth);
        else if (dom.tag(c) === 'OPTGROUP') {
          emit(depth, { k: 'o', s: 'group' + nameThen(cut(norm(c.label), MAX_NAME), c.disabled ? 'disabled' : '') });
          for (const o of dom.children(c)) if (dom.tag(o) === 'OPTION') optLine(o, depth + 1);
        }
      }
      return;
    }
    if (dom.tag(el) === 'INPUT' && el.list) {
      for (const o of el.list.options) optLine({ label: o.label, text: o.text, value: o.value, selected: false, disabled: o.disabled }, depth);
      return;
    }
    if (role !== 'combobox') return;
    const ids = norm((dom.attr(el, 'aria-controls') || '') + ' ' + (dom.attr(el, 'aria-owns') || '')).split(' ').filter(Boolean);
    for (const id of ids) {
      const pop = byId(el, id);
      if (!pop || dom.contains(root, pop) && hasBox(pop, dom.doc(pop).defaultView.getComputedStyle(pop))) continue;
      for (const o of dom.qsa(pop, '[role=option]')) {
        const st = [];
        const sel = dom.attr(o, 'aria-selected') === 'true';
        if (sel) st.push('selected');
        if (dom.attr(o, 'aria-disabled') === 'true') st.push('disabled');
        // An open popup outside the scope: its options can be clicked.
        const ost = dom.doc(o).defaultView.getComputedStyle(o);
        const open = ost.visibility === 'visible' && hasBox(o, ost);
        emit(depth, { k: 'o', s: (open ? reg.refFor(o) + ' ' : '') + 'option' + nameThen(cut(accName(o, 'option'), MAX_NAME), st.join(' ')) });
      }
    }
  }

  // walkChildren walks el's composed children. controlsOnly: inside an
  // element already named, only nested controls are of interest.
  function walkChildren(el, depth, cursor, invisible, controlsOnly) {
    const kids = dom.shadow(el) ? [dom.shadow(el)] : dom.kids(el);
    if (controlsOnly) mute++;
    for (const c of kids) walk(c, depth, cursor, invisible);
    if (controlsOnly) mute--;
  }

  walk(root, 0, '', false);
  flushText();
  endRun();

  // An unnamed landmark that holds nothing, or only another landmark, says
  // nothing: drop it and lift what it holds.
  for (let i = recs.length - 1; i >= 0; i--) {
    const r = recs[i];
    if (r.k !== 'lm' || r.named) continue;
    let end = i + 1;
    while (end < recs.length && recs[end].d > r.d) end++;
    const only = end > i + 1 && recs[i + 1].k === 'lm' && (() => {
      let j = i + 2;
      while (j < end && recs[j].d > r.d + 1) j++;
      return j === end;
    })();
    if (end === i + 1 || only) {
      for (let j = i + 1; j < end; j++) recs[j].d--;
      recs.splice(i, 1);
    }
  }

  // Runs of plain sibling links (no states, nothing nested) become a list:
  // a head line with the refs' letters, then "number name" lines.
  const lines = [];
  const runOf = []; // for each line in a list, the index of its head line
  const frames = []; // frames of other origins: {line, depth, ref, name}
  for (let i = 0; i < recs.length;) {
    const r = recs[i];
    const plainAt = (j) => recs[j] && recs[j].plain && recs[j].d === r.d && !(recs[j + 1] && recs[j + 1].d > r.d);
    let j = i;
    if (r.plain) while (plainAt(j)) j++;
    const pad = ' '.repeat(r.d);
    if (j - i >= LINK_RUN) {
      const head = lines.length;
      lines.push(pad + 'links (ref ' + reg.doc + '+number):');
      runOf.push(-1);
      for (let k = i; k < j; k++) {
        lines.push(pad + recs[k].ref.slice(reg.doc.length) + (recs[k].n ? ' ' + recs[k].n : ''));
        runOf.push(head);
      }
      i = j;
      continue;
    }
    if (r.k === 'frame') frames.push({ line: lines.length, depth: r.d, ref: r.fref, name: r.name || '' });
    lines.push(pad + r.s);
    runOf.push(-1);
    i++;
  }

  // With frames of other origins, the backend splices their outlines in
  // and pages the whole: every line goes back, with what paging needs.
  const loading = document.readyState !== 'complete';
  if (frames.length || arg.raw) return { lines, runOf, frames, cut: cutAny && !expanded, loading, where: { url: String(location.href), origin: String(self.origin) } };

  // Paging by line: offset is the first line shown, next the line to pass
  // as offset to continue (0 when everything was shown). A page that
  // starts inside a list repeats the list's head line first.
  const total = lines.length;
  const offset = Math.max(0, Math.min(arg.offset || 0, total));
  const max = arg.maxChars > 0 ? arg.maxChars : Infinity;
  const shown = [];
  let used = 0;
  if (offset < total && runOf[offset] >= 0) {
    shown.push(lines[runOf[offset]]);
    used += lines[runOf[offset]].length + 1;
  }
  let end = offset;
  while (end < total && used + lines[end].length + 1 <= max) {
    used += lines[end].length + 1;
    shown.push(lines[end]);
    end++;
  }
  if (end === offset && end < total) shown.push(lines[end++]); // always make progress
  return { text: shown.join('\n'), total, offset, next: end < total ? end : 0, cut: cutAny && !expanded, loading };
}
