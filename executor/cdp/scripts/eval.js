// Wraps a model-supplied expression. Go splices the expression in place of
// the marker line, on lines of its own, so a trailing // comment cannot eat
// the rest. The expression is evaluated as an expression; when that is a
// syntax error (statements such as `let a = 1; a`), Go evaluates it bare,
// the way Playwright does.
//
// Like Playwright, a function value is called. A promise is awaited only
// when asked (and then raced against the call's deadline so that a promise
// that never settles cannot hold the call); otherwise it is described.
// The title comes back in the same round trip.
(opts) => {
  let value = (
/*EXPRESSION*/
  );
  if (typeof value === 'function') value = value();
  const done = (v) => ({ v, t: document.title });
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
