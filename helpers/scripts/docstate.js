// docstate: which document the tab's main frame holds (the token its refs
// carry, env.doc) and whether it has loaded (its load event, subresources
// included). Called as fn(args, env) → {doc, loaded}. Cheap: it reads no
// DOM, for polling while a new document comes in.
(function (args, env) {
  "use strict";
  return { doc: String((env && env.doc) || ''), loaded: document.readyState === 'complete' };
})
