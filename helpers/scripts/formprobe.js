// formprobe: what fill_form needs to know about each field before acting on
// it, in one pass over the page, in chromegate's isolated world (composed
// with the ref registry, executor.WithRefs). Called as fn(args, env) with
//   args = {fields: [{selector, ref, value}], submit: bool}
// Returns one entry per field:
//   {queryable: false}                       the selector is not plain CSS
//   {found: false, ref_error, why}           why a ref no longer resolves
//   {found: false}
//   {found: true, kind, type, disabled, readonly, checked, multiple,
//    options: [{value, label}], pick, label}
// and, when args.submit, {submit: {button, form}} for the form of the last
// field found. pick is a unique CSS path of the radio of the group that
// matches the wanted value; label is one of the element's label's path (a
// styled checkbox is often hidden behind its label). Paths are built from
// ids and :nth-of-type so the backend can act on them with trusted input.
(function (args, env) {
  "use strict";
  const dom = chromegateDOM();
  function path(el) {
    if (!el || !dom.doc(el)) return "";
    const doc = dom.doc(el);
    const parts = [];
    for (let n = el; n && dom.nodeType(n) === 1; n = dom.parentEl(n)) {
      if (n.id) {
        const byId = "#" + CSS.escape(n.id);
        if (dom.qsa(doc, byId).length === 1) {
          parts.unshift(byId);
          return parts.join(" > ");
        }
      }
      const tag = dom.localName(n);
      if (tag === "html") {
        parts.unshift("html");
        break;
      }
      let i = 1;
      for (let s = n.previousElementSibling; s; s = s.previousElementSibling) {
        if (dom.localName(s) === tag) i++;
      }
      parts.unshift(tag + ":nth-of-type(" + i + ")");
    }
    return parts.join(" > ");
  }

  function labelOf(el) {
    const labels = el.labels ? Array.from(el.labels) : [];
    return labels.length ? labels[0] : null;
  }

  function words(s) {
    return String(s == null ? "" : s).replace(/\s+/g, " ").trim();
  }

  function same(a, b) {
    return words(a).toLowerCase() === words(b).toLowerCase();
  }

  function kindOf(el) {
    const tag = dom.localName(el);
    if (tag === "textarea") return "textarea";
    if (tag === "select") return "select";
    if (tag === "input") {
      const t = (dom.attr(el, "type") || "").toLowerCase();
      if (t === "checkbox" || t === "radio" || t === "file" || t === "hidden") return t;
      if (t === "submit" || t === "reset" || t === "button" || t === "image") return "button";
      // Every other type (email, number, date, color, range, and types
      // the browser does not know, which it treats as text) takes a value.
      return "text";
    }
    if (el.isContentEditable) return "contenteditable";
    if (tag === "button") return "button";
    return "other";
  }

  function radioGroup(el) {
    if (!el.name) return [el];
    const scope = el.form || dom.doc(el);
    return Array.from(scope.querySelectorAll('input[type="radio"]')).filter(
      (r) => r.name === el.name && (r.form || null) === (el.form || null),
    );
  }

  function describeField(el, want) {
    const kind = kindOf(el);
    const out = {
      found: true,
      kind,
      type: dom.localName(el) === "input" ? (dom.attr(el, "type") || "text").toLowerCase() : dom.localName(el),
      disabled: !!(el.matches && dom.matches(el, ":disabled")),
      readonly: !!el.readOnly,
    };
    const label = labelOf(el);
    if (label) out.label = path(label);
    if (kind === "checkbox") out.checked = el.checked;
    if (kind === "select") {
      out.multiple = el.multiple;
      out.options = Array.from(el.options).slice(0, 50).map((o) => ({ value: o.value, label: words(o.label || o.text) }));
    }
    if (kind === "radio") {
      const group = radioGroup(el);
      out.options = group.slice(0, 50).map((r) => ({ value: r.value, label: words(labelOf(r) ? labelOf(r).textContent : "") }));
      let match = null;
      if (want === true) match = el;
      else if (typeof want === "string" || typeof want === "number") {
        match = group.find((r) => r.value === String(want)) ||
          group.find((r) => labelOf(r) && same(labelOf(r).textContent, want)) || null;
      }
      if (match) {
        out.pick = path(match);
        out.checked = match.checked;
        out.disabled = dom.matches(match, ":disabled");
        const ml = labelOf(match);
        out.label = ml ? path(ml) : "";
      }
    }
    return out;
  }

  const results = [];
  let last = null;
  for (const f of args.fields) {
    let el;
    if (f.ref) {
      // chromegateRefs is in scope when the probe is composed with the
      // registry; without it no ref can be resolved here.
      const hit = typeof chromegateRefs === "function" ? chromegateRefs(env).lookup(f.ref) : { error: "unsupported" };
      if (hit.error === "unsupported") {
        results.push({ queryable: false });
        continue;
      }
      if (!hit.el) {
        results.push({ found: false, ref_error: hit.error, why: hit.why || "" });
        continue;
      }
      el = hit.el;
    } else {
      try {
        el = dom.qs(document, f.selector);
      } catch (e) {
        results.push({ queryable: false });
        continue;
      }
    }
    if (!el) {
      results.push({ found: false });
      continue;
    }
    last = el;
    results.push(describeField(el, f.value));
  }
  const out = { fields: results };
  if (args.submit && last) {
    const form = last.form || dom.closest(last, "form");
    if (form) {
      const button = Array.from(form.elements).find(
        (b) => (dom.localName(b) === "button" && (dom.attr(b, "type") || "submit").toLowerCase() === "submit") ||
          (dom.localName(b) === "input" && ["submit", "image"].includes((dom.attr(b, "type") || "").toLowerCase())),
      );
      out.submit = { form: path(form), button: button && !button.disabled ? path(button) : "" };
    }
  }
  return out;
})
