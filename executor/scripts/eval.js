// Runs a model-supplied expression for eval, on both backends. Each side
// composes the call as (<this file>)(opts, () => (\n<expression>\n), <jsonsafe.js>)
// (executor.EvalSource, and the extension's evalSource), the expression
// on lines of its own so a trailing // comment cannot eat the rest. When
// that is a syntax error (statements such as `let a = 1; a`), the backend
// evaluates the expression bare, the way Playwright does, and makes its
// value JSON-safe with jsonsafe.js.
//
// Like Playwright, a function value is called. A promise is awaited only
// when asked (and then raced against the call's deadline so that a promise
// that never settles cannot hold the call); otherwise it is described.
// The value comes back JSON-safe and the title in the same round trip.
//
// opts.expect, when set, is the URL the call was decided on: the
// expression runs only while the document is still there (window and its
// location are unforgeable: a page cannot fake its URL to this check).
(opts, thunk, safe) => {
  if (opts.expect && window.location.href !== opts.expect) return { moved: true };
  let value = thunk();
  if (typeof value === 'function') value = value();
  const done = (v) => ({ v: safe(v), t: document.title });
  if (value && typeof value.then === 'function') {
    if (!opts.awaitPromise) {
      value.then(undefined, () => {});
      return done('[object Promise]');
    }
    let timer;
    const deadline = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the promise did not settle within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    });
    return Promise.race([value, deadline]).then(
      (v) => { clearTimeout(timer); return done(v); },
      (e) => { clearTimeout(timer); throw e; });
  }
  return done(value);
}
