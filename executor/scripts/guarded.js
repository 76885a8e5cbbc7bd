// The outcome of the click element.js's point op guarded (guard: true):
// {verdict: "ok" | "missed" | "" (no press seen), page: what received a
// missed press, the page's words}. It ends the guard.
() => {
  const g = globalThis.chromegateClickGuard;
  if (!g) return { verdict: '' };
  g.stop();
  globalThis.chromegateClickGuard = undefined;
  return { verdict: g.verdict, page: g.page };
}
