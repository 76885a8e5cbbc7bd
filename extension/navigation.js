// Navigation: starting one and waiting for it, on the events the tab's
// state keeps (tabstate.js): a document's milestone (load,
// DOMContentLoaded, networkIdle), the commit a history step leads to, the
// navigation an input started. Every command goes through the tab's
// injected send, so node tests drive the waits with fake events.

import { fail } from './errors.js';
import * as tabs from './tabs.js';
import { budget, sleep, aborted } from './deadline.js';
import { csend } from './tabstate.js';
import { inWorld, fnDecl } from './world.js';

export const MILESTONES = { '': 'load', load: 'load', domcontentloaded: 'DOMContentLoaded', networkidle: 'networkIdle' };

export function checkWaitUntil(w) {
  if (w !== undefined && w !== '' && !(w in MILESTONES)) {
    throw fail('BAD_ARGS', `waitUntil ${JSON.stringify(w)} is not one of load, domcontentloaded, networkidle`);
  }
}

export function checkURL(raw) {
  let u;
  try {
    u = new URL(raw);
  } catch {
    u = null;
  }
  if (!u || typeof raw !== 'string' || !/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(raw)) {
    throw fail('BAD_ARGS', `${JSON.stringify(raw)} is not an absolute URL`, 'pass a full URL such as https://example.com/');
  }
}

// waitFor resolves when check() is true, re-checking on every navigation
// event of the tab, or rejects with err() at the deadline.
export function waitEvent(c, check, err) {
  return new Promise((resolve, reject) => {
    let timer;
    const done = (fn, v) => {
      c.st.waiters.delete(poke);
      clearTimeout(timer);
      fn(v);
    };
    const poke = () => {
      let v;
      try {
        v = check();
      } catch (e) {
        done(reject, e);
        return;
      }
      if (v) done(resolve, v);
    };
    c.st.waiters.add(poke);
    timer = setTimeout(() => done(reject, err()), budget(c.ctx));
    if (c.ctx.signal) c.ctx.signal.addEventListener('abort', () => done(reject, fail('TIMEOUT', 'the server cancelled the call')), { once: true });
    poke();
  });
}

function navTimeout(c, what, target, w) {
  return () => fail('TIMEOUT', `${what} ${target} did not reach "${w || 'load'}" in time`,
    'the page may be usable anyway: try get_text or wait_for; or retry with waitUntil domcontentloaded');
}

// waitLoader waits for the milestone of a document (loaderId), or of a
// later one that replaced it.
// The document that was current when the wait began never counts: its
// milestones are long past.
export function waitLoader(c, loaderId, w, what, target, since = c.st.commitSeq) {
  const name = MILESTONES[w || ''];
  return waitEvent(c, () => {
    if (!c.st.attached) throw fail('DETACHED', `the debugger was detached from tab ${c.tabId} during ${what}`, 'retry the call');
    const seen = c.st.lifecycle.get(loaderId);
    if (seen && seen.has(name)) return true;
    if (c.st.loaderId === loaderId) return false;
    const curSeq = c.st.commits.get(c.st.loaderId) || 0;
    const targetSeq = c.st.commits.get(loaderId) || since;
    const cur = c.st.lifecycle.get(c.st.loaderId);
    return curSeq > Math.max(since, targetSeq) && !!cur && cur.has(name);
  }, navTimeout(c, what, target, w));
}

// settle waits, after input, for a navigation of the tab the input started
// to commit (as Playwright's actions do), so the call reports the page it
// led to and the server's policy decides on the page the tab landed on (a
// click that leaves the allowlist must be seen to have left). It never
// fails the call: a navigation that does not commit within SETTLE_MS (a
// slow server) is left to the next call's landing check.
export const SETTLE_MS = 5000;

export async function settle(c, before) {
  c = { ...c, ctx: { ...c.ctx, deadline: Math.min(c.ctx.deadline, Date.now() + SETTLE_MS) } };
  if (c.st.navRequests === before.navRequests) {
    // one round trip delivers the events the input caused
    await c.st.send('Page.getNavigationHistory').catch(() => {});
  }
  if (c.st.navRequests === before.navRequests || c.st.commitSeq !== before.commitSeq) return;
  // A navigation that commits nothing (a download, a 204) only stops
  // loading; but a stop may also come just before the commit.
  await waitEvent(c, () => c.st.commitSeq !== before.commitSeq || c.st.stopsSinceRequest > 0, () => null).catch(() => {});
  if (c.st.commitSeq !== before.commitSeq) return;
  const grace = { ...c, ctx: { ...c.ctx, deadline: Math.min(c.ctx.deadline, Date.now() + 400) } };
  await waitEvent(grace, () => c.st.commitSeq !== before.commitSeq, () => null).catch(() => {});
}

function pageNavStatus() {
  const e = performance.getEntriesByType('navigation')[0];
  return e && typeof e.responseStatus === 'number' ? e.responseStatus : 0;
}

// navStatus is the HTTP status of the tab's document (0 when none).
export async function navStatus(c) {
  try {
    return Number(await inWorld(c.st, fnDecl(pageNavStatus), [])) || 0;
  } catch {
    return 0;
  }
}

export async function gotoURL(c, url, w) {
  c.title = undefined;
  const since = c.st.commitSeq;
  const r = await csend(c, 'Page.navigate', { url });
  if (r.errorText) {
    const code = /net::ERR_[A-Z_]+/.exec(r.errorText);
    if (code && code[0] === 'net::ERR_ABORTED' && !r.loaderId) {
      throw fail('BAD_ARGS', `navigation to ${url} failed: ${code[0]} (it may have started a download)`, 'use download_file with this URL');
    }
    throw fail('BAD_ARGS', `navigation to ${url} failed: ${code ? code[0] : r.errorText}`, 'check the URL; is the server up?');
  }
  if (!r.loaderId) return 0; // same-document
  await waitLoader(c, r.loaderId, w, 'navigation to', url, since);
  return navStatus(c);
}

// leaveRestricted navigates a tab the debugger may not attach to with
// chrome.tabs, and waits until the new page has committed.
export const RESTRICTED = /^(chrome|chrome-untrusted|devtools|edge|chrome-extension|chrome-search):/i;

export async function leaveRestricted(ctx, id, url) {
  await chrome.tabs.update(id, { url });
  const until = Date.now() + budget(ctx);
  for (;;) {
    aborted(ctx);
    const t = await tabs.get(id);
    if (!t.pendingUrl && t.url && (RESTRICTED.test(url) ? t.status === 'complete' : !RESTRICTED.test(t.url))) return;
    if (Date.now() >= until) {
      throw fail('TIMEOUT', `navigation to ${url} did not commit in time`, 'retry with a larger timeout_ms');
    }
    await sleep(50);
  }
}

// historyNav triggers a navigation whose document is not known up front
// (back, forward, reload) and waits for it: the next main-frame commit,
// then its milestone. A same-document step or a page restored from the
// back/forward cache needs no wait.
export async function historyNav(c, what, w, trigger) {
  const before = { sameDoc: c.st.sameDoc || 0, lastNav: c.st.lastNav, commitSeq: c.st.commitSeq };
  let target = '';
  try {
    const h = await csend(c, 'Page.getNavigationHistory');
    target = 'of ' + h.entries[h.currentIndex].url;
  } catch {
    // only for the message
  }
  await trigger();
  const committed = await waitEvent(c, () => {
    if (c.st.lastNav !== before.lastNav) return { nav: c.st.lastNav };
    if ((c.st.sameDoc || 0) !== before.sameDoc) return { same: true };
    return null;
  }, navTimeout(c, what, target, w));
  if (committed.same) return 0;
  if (committed.nav.type === 'BackForwardCacheRestore') return navStatus(c);
  await waitLoader(c, committed.nav.loaderId, w, what, target, before.commitSeq);
  return navStatus(c);
}

export function withStatus(st, status) {
  if (status) st.status = status;
  return st;
}
