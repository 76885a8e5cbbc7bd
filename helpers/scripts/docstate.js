// docstate: which document the tab's main frame holds (the token its refs
// carry, env.doc) and whether it has loaded (its load event, subresources
// included). Called as fn(args, env) → {doc, loaded}. Cheap: it reads no
// DOM, for watching a new document come in.
//
// args.wait (ms, at most 2000) makes it wait, without polling, for what the
// caller waits for: in a document of args.old (one being replaced) until
// it is gone, which ends the call with the document's world; in another
// one until it has loaded. It answers when that happens or the time is up,
// whichever comes first. A page cannot hold it: readyState is the
// document's own, and the timer is this world's.
(function (args, env) {
  "use strict";
  const doc = String((env && env.doc) || '');
  const state = () => ({ doc, loaded: document.readyState === 'complete' });
  const wait = Math.min(Number(args && args.wait) || 0, 2000);
  const old = Array.isArray(args && args.old) && args.old.includes(doc);
  if (wait <= 0 || doc === '' || (!old && document.readyState === 'complete')) {
    return state();
  }
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      document.removeEventListener('readystatechange', changed);
      resolve(state());
    };
    const changed = () => {
      if (document.readyState === 'complete') done();
    };
    const timer = setTimeout(done, wait);
    if (!old) document.addEventListener('readystatechange', changed);
  });
})
