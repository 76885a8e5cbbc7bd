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
  function path(el) {
    if (!el || !el.ownerDocument) return "";
    const doc = el.ownerDocument;
    const parts = [];
    for (let n = el; n && n.nodeType === 1; n = n.parentElement) {
      if (n.id) {
        const byId = "#" + CSS.escape(n.id);
        if (doc.querySelectorAll(byId).length === 1) {
          parts.unshift(byId);
          return parts.join(" > ");
        }
      }
      const tag = n.localName;
      if (tag === "html") {
        parts.unshift("html");
        break;
      }
      let i = 1;
      for (let s = n.previousElementSibling; s; s = s.previousElementSibling) {
        if (s.localName === tag) i++;
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
    const tag = el.localName;
    if (tag === "textarea") return "textarea";
    if (tag === "select") return "select";
    if (tag === "input") {
      const t = (el.getAttribute("type") || "").toLowerCase();
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
    const scope = el.form || el.ownerDocument;
    return Array.from(scope.querySelectorAll('input[type="radio"]')).filter(
      (r) => r.name === el.name && (r.form || null) === (el.form || null),
    );
  }

  function describeField(el, want) {
    const kind = kindOf(el);
    const out = {
      found: true,
      kind,
      type: el.localName === "input" ? (el.getAttribute("type") || "text").toLowerCase() : el.localName,
      disabled: !!(el.matches && el.matches(":disabled")),
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
        out.disabled = match.matches(":disabled");
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
        el = document.querySelector(f.selector);
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
    const form = last.form || last.closest("form");
    if (form) {
      const button = Array.from(form.elements).find(
        (b) => (b.localName === "button" && (b.getAttribute("type") || "submit").toLowerCase() === "submit") ||
          (b.localName === "input" && ["submit", "image"].includes((b.getAttribute("type") || "").toLowerCase())),
      );
      out.submit = { form: path(form), button: button && !button.disabled ? path(button) : "" };
    }
  }
  return out;
})
