// storage: reads or writes the Web Storage of the tab's document, in
// chromegate's isolated world (which shares the document's storage, not its
// globals). Called as fn(args) with
//   args = {op: "read", local: bool}
//        → {origin, localStorage?: [{name, value}], sessionStorage: [...]}
//   args = {op: "write", origin, localStorage: [...], sessionStorage: [...]}
//        → {origin, written: bool}
// A write happens only while the document is still of args.origin (the tab
// may have moved since it was listed). Storage the document may not use
// (an opaque origin) reads as empty and is never written.
(function (args) {
  "use strict";
  const origin = location.origin;
  function store(name) {
    try {
      return globalThis[name];
    } catch (e) {
      return null;
    }
  }
  function read(s) {
    const out = [];
    if (!s) return out;
    for (let i = 0; i < s.length; i++) {
      const name = s.key(i);
      out.push({ name, value: s.getItem(name) });
    }
    return out;
  }
  if (args.op === "read") {
    const out = { origin, sessionStorage: read(store("sessionStorage")) };
    if (args.local) out.localStorage = read(store("localStorage"));
    return out;
  }
  if (origin !== args.origin) return { origin, written: false };
  const local = store("localStorage");
  const session = store("sessionStorage");
  if ((args.localStorage || []).length && !local) return { origin, written: false };
  if ((args.sessionStorage || []).length && !session) return { origin, written: false };
  for (const { name, value } of args.localStorage || []) local.setItem(name, value);
  for (const { name, value } of args.sessionStorage || []) session.setItem(name, value);
  return { origin, written: true };
})
