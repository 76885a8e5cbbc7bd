// linkrefs: the ref of every link, so extract_links can name each one for
// click and the other target-taking tools. Runs in chromegate's isolated
// world composed with the ref registry (executor.WithRefs). Called as
// fn({selector, ref}, env): the scope, a CSS selector or a ref, or neither
// for the whole document. Returns [[absolute href, ref], ...] in document
// order, or null when the scope cannot be found here.
(function (args, env) {
  "use strict";
  const dom = chromegateDOM();
  const reg = chromegateRefs(env);
  let root = document;
  if (args && args.ref) {
    const hit = reg.lookup(args.ref);
    if (!hit.el) return null;
    root = hit.el;
  } else if (args && args.selector) {
    try {
      root = dom.qs(document, args.selector);
    } catch (e) {
      return null;
    }
    if (!root) return null;
  }
  const out = [];
  const links = dom.qsa(root, "a[href], area[href]");
  if (root !== document && root.matches && dom.matches(root, "a[href], area[href]")) out.push([root.href, reg.refFor(root)]);
  for (const a of links) {
    if (out.length >= 5000) break;
    out.push([a.href, reg.refFor(a)]);
  }
  return out;
})
