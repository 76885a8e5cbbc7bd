// landing: whether an action asked the tab's main frame to load another
// document, from the browser's own signal (the Navigation API's navigate
// event), so an acting call waits for a new document only when one comes.
//
// Called as fn(args, env):
//   {op: "arm"}                 → {token, seq, api, doc}: listen (once
//     per document) and start a new watch; token names this document's
//     watcher, seq the watch, doc the document's ref token (env.doc).
//   {op: "read", token, seq}    → after the page's pending tasks ran (a
//     form submission navigates in a later task than its click or key):
//     {other} when this is not the armed document (it was replaced), else
//     {cross, same, download, prevented, url} of the navigations asked
//     for since the watch began. token "" reads the last watch, whatever
//     document armed it (dialog_answer, which cannot arm: the dialog
//     holds the page); {unarmed} when no watch began in this document.
//
// It lives in chromegate's isolated world: page scripts can neither read
// nor forge its state. A page can still keep the event from this world's
// listener (stopImmediatePropagation in a listener it added first) or
// cancel the navigation; the caller then reads the page as it is, and the
// read is decided on the URL it was read from.
(function (args, env) {
  'use strict';
  let st = globalThis.chromegateLanding;
  if (!st) {
    const nav = globalThis.navigation;
    const seen = []; // {e, seq, settled}
    let seq = 0;
    const api = !!(nav && typeof nav.addEventListener === 'function');
    if (api) {
      // Capture listeners at the target run before bubbling ones, so a
      // page's ordinary listener cannot stop this one.
      nav.addEventListener('navigate', (e) => {
        if (!e.isTrusted) return; // made up by a page's script
        seen.push({ e, seq, settled: false });
        if (seen.length > 32) seen.shift();
      }, { capture: true });
      const settle = (e) => { if (e.isTrusted && seen.length) seen[seen.length - 1].settled = true; };
      nav.addEventListener('navigatesuccess', settle, { capture: true });
      nav.addEventListener('navigateerror', settle, { capture: true });
    }
    st = Object.freeze({
      token: String((env && env.doc) || '') + ':' + Math.random().toString(36).slice(2),
      api,
      arm() { return ++seq; },
      seq() { return seq; },
      since(n) {
        const out = { cross: false, same: false, download: false, prevented: false, url: '', seen: 0 };
        const busy = !!(nav && nav.transition);
        for (let i = 0; i < seen.length; i++) {
          const s = seen[i];
          if (s.seq !== n) continue;
          const e = s.e;
          out.seen++;
          if (e.defaultPrevented) { out.prevented = true; continue; }
          if (e.downloadRequest !== null && e.downloadRequest !== undefined) { out.download = true; continue; }
          // An intercepted navigation (navigation.intercept) stays in the
          // document: it settles, or is the transition under way.
          const intercepted = s.settled || (busy && i === seen.length - 1);
          if (e.destination.sameDocument || intercepted) { out.same = true; continue; }
          out.cross = true;
          out.url = String(e.destination.url || '');
        }
        return out;
      },
    });
    Object.defineProperty(globalThis, 'chromegateLanding', { value: st });
  }
  if (args && args.op === 'arm') {
    return { token: st.token, seq: st.arm(), api: st.api, doc: String((env && env.doc) || '') };
  }
  const token = String((args && args.token) || '');
  if (token !== '' && token !== st.token) return { other: true };
  if (token === '' && st.seq() === 0) return { unarmed: true };
  const n = token === '' ? st.seq() : Number(args.seq);
  // Let the page's pending tasks run: a timer turn, then a message turn.
  return new Promise((resolve) => {
    setTimeout(() => {
      const ch = new MessageChannel();
      ch.port1.onmessage = () => { ch.port1.close(); resolve(st.since(n)); };
      ch.port2.postMessage(0);
    }, 0);
  });
})
