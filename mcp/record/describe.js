// describe: what the element a ref names is, for a recipe that must find it
// again without the ref (refs die with their document). Runs in chromegate's
// isolated world, composed with the ref registry (executor.WithRefs).
// Called as fn(args, env) with args = {refs: [ref, ...]}; returns one entry
// per ref: null when the ref does not resolve, else
//   {tag, type, role, name, label, id, name_attr, testid, aria_label, placeholder}
(function (args, env) {
  "use strict";
  const reg = chromegateRefs(env);
  const words = (s) => String(s == null ? "" : s).replace(/\s+/g, " ").trim().slice(0, 200);
  const implicit = {
    a: (el) => (el.hasAttribute("href") ? "link" : ""),
    button: () => "button",
    select: (el) => (el.multiple || el.size > 1 ? "listbox" : "combobox"),
    textarea: () => "textbox",
    h1: () => "heading", h2: () => "heading", h3: () => "heading",
    h4: () => "heading", h5: () => "heading", h6: () => "heading",
    img: () => "img",
    input: (el) => {
      const t = (el.getAttribute("type") || "text").toLowerCase();
      if (t === "checkbox") return "checkbox";
      if (t === "radio") return "radio";
      if (t === "submit" || t === "button" || t === "reset" || t === "image") return "button";
      if (t === "range") return "slider";
      if (t === "number") return "spinbutton";
      if (t === "search") return el.hasAttribute("list") ? "combobox" : "searchbox";
      if (t === "hidden" || t === "file" || t === "color" || t === "date" || t === "password") return "";
      return el.hasAttribute("list") ? "combobox" : "textbox";
    },
  };
  function roleOf(el) {
    const explicit = words(el.getAttribute("role")).split(" ")[0];
    if (explicit) return explicit;
    const f = implicit[el.localName];
    return f ? f(el) : "";
  }
  function labelText(el) {
    const labels = el.labels ? Array.from(el.labels) : [];
    return words(labels.map((l) => l.textContent).join(" "));
  }
  function nameOf(el) {
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      const t = by.split(/\s+/).map((id) => el.ownerDocument.getElementById(id)).filter(Boolean).map((n) => n.textContent).join(" ");
      if (words(t)) return words(t);
    }
    if (words(el.getAttribute("aria-label"))) return words(el.getAttribute("aria-label"));
    const l = labelText(el);
    if (l) return l;
    if (el.localName === "input") {
      const t = (el.getAttribute("type") || "").toLowerCase();
      if (t === "submit" || t === "button" || t === "reset") return words(el.value);
      if (t === "image") return words(el.getAttribute("alt"));
    }
    if (el.localName === "img") return words(el.getAttribute("alt"));
    const r = roleOf(el);
    if (r === "button" || r === "link" || r === "heading" || r === "checkbox" || r === "radio" || r === "tab" || r === "menuitem" || r === "option") {
      return words(el.textContent);
    }
    return words(el.getAttribute("title") || el.getAttribute("placeholder"));
  }
  return (args.refs || []).map((ref) => {
    const found = reg.lookup(ref);
    if (!found.el) return null;
    const el = found.el;
    const a = (n) => words(el.getAttribute(n));
    return {
      tag: el.localName,
      type: a("type"),
      role: roleOf(el),
      name: nameOf(el),
      label: labelText(el),
      id: el.id && el.ownerDocument.querySelectorAll("#" + CSS.escape(el.id)).length === 1 ? el.id : "",
      name_attr: a("name"),
      testid: a("data-testid"),
      aria_label: a("aria-label"),
      placeholder: a("placeholder"),
    };
  });
})
