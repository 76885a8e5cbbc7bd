import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkURL, checkWaitUntil, gotoURL, historyNav, settle, waitEvent, waitLoader } from './navigation.js';
import { fakeTab, commit, milestone, tick } from './fakecdp.js';

// The navigation waits, driven by fake debugger events: a wait ends on the
// event that should end it, and not before.

const navStatusAnswer = (status) => (method) => (method === 'Runtime.callFunctionOn' ? { result: { value: status } } : undefined);

// settled reports whether p has settled after the pending events ran.
async function settled(p) {
  let done = false;
  p.then(() => (done = true), () => (done = true));
  await tick(5);
  return done;
}

test('navigate waits for the new document to load, not the old one, and reports its status', async () => {
  const { st, c, sent } = fakeTab({
    answer: (method, params) => {
      if (method === 'Page.navigate') return { frameId: 'F', loaderId: 'L2' };
      return navStatusAnswer(201)(method, params);
    },
  });
  milestone(st, 'L1', 'load'); // the page before: long loaded
  const p = gotoURL(c, 'http://x/next', '');
  assert.equal(await settled(p), false, 'resolved on the old document');
  commit(st, 'L2');
  milestone(st, 'L2', 'DOMContentLoaded');
  assert.equal(await settled(p), false, 'resolved before load');
  milestone(st, 'L2', 'load');
  assert.equal(await p, 201);
  assert.deepEqual(sent[0], { method: 'Page.navigate', params: { url: 'http://x/next' } });
  assert.equal(c.acted, true, 'a navigation is an action: the call is not run again');
});

test('waitUntil domcontentloaded ends at DOMContentLoaded; networkidle waits for networkIdle', async () => {
  for (const [w, name] of [['domcontentloaded', 'DOMContentLoaded'], ['networkidle', 'networkIdle']]) {
    const { st, c } = fakeTab({ answer: (m) => (m === 'Page.navigate' ? { loaderId: 'L2' } : navStatusAnswer(200)(m)) });
    const p = gotoURL(c, 'http://x/', w);
    commit(st, 'L2');
    milestone(st, 'L2', 'load');
    if (w === 'networkidle') assert.equal(await settled(p), false, 'networkidle ended at load');
    milestone(st, 'L2', name);
    assert.equal(await p, 200, w);
  }
});

test('a document replaced before it loaded (a redirect by script) ends the wait when its successor loads', async () => {
  const { st, c } = fakeTab({ answer: (m) => (m === 'Page.navigate' ? { loaderId: 'L2' } : navStatusAnswer(200)(m)) });
  const p = gotoURL(c, 'http://x/', '');
  commit(st, 'L2');
  commit(st, 'L3');
  assert.equal(await settled(p), false);
  milestone(st, 'L3', 'load');
  assert.equal(await p, 200);
});

test('a same-document navigation needs no wait; a failed one is BAD_ARGS, a download hinted', async () => {
  let answer = { frameId: 'F' };
  const { c } = fakeTab({ answer: (m) => (m === 'Page.navigate' ? answer : undefined) });
  assert.equal(await gotoURL(c, 'http://x/#a', ''), 0);
  answer = { frameId: 'F', loaderId: 'L9', errorText: 'net::ERR_NAME_NOT_RESOLVED' };
  await assert.rejects(gotoURL(c, 'http://nowhere.invalid/', ''), (e) => e.code === 'BAD_ARGS' && /ERR_NAME_NOT_RESOLVED/.test(e.message));
  answer = { frameId: 'F', errorText: 'net::ERR_ABORTED' };
  await assert.rejects(gotoURL(c, 'http://x/file.zip', ''), (e) => e.code === 'BAD_ARGS' && /download_file/.test(e.hint));
});

test('a load that never comes is TIMEOUT within the call, naming the milestone', async () => {
  const { c } = fakeTab({ ms: 300, answer: (m) => (m === 'Page.navigate' ? { loaderId: 'L2' } : undefined) });
  const start = Date.now();
  await assert.rejects(gotoURL(c, 'http://x/slow', 'domcontentloaded'),
    (e) => e.code === 'TIMEOUT' && e.message.includes('"domcontentloaded"') && e.message.includes('http://x/slow'));
  assert.ok(Date.now() - start < 300, 'the wait outlived the call');
});

test('a detach during the wait is DETACHED; a cancelled call is TIMEOUT', async () => {
  const { st, c } = fakeTab();
  const p = waitLoader(c, 'L2', '', 'navigation to', 'http://x/');
  st.attached = false;
  st.notify();
  await assert.rejects(p, (e) => e.code === 'DETACHED');

  const ac = new AbortController();
  const t = fakeTab();
  t.c.ctx.signal = ac.signal;
  const q = waitEvent(t.c, () => false, () => new Error('not this'));
  ac.abort();
  await assert.rejects(q, (e) => e.code === 'TIMEOUT' && /cancelled/.test(e.message));
});

test('back waits for the commit, then its load; a page from the back/forward cache needs no load', async () => {
  const { st, c, sent } = fakeTab({
    answer: (m) => {
      if (m === 'Page.getNavigationHistory') return { currentIndex: 1, entries: [{ id: 1, url: 'http://x/a' }, { id: 2, url: 'http://x/b' }] };
      return navStatusAnswer(200)(m);
    },
  });
  let p = historyNav(c, 'back', '', () => c.st.send('Page.navigateToHistoryEntry', { entryId: 1 }));
  await tick(5);
  assert.ok(sent.some((s) => s.method === 'Page.navigateToHistoryEntry'));
  commit(st, 'L2');
  assert.equal(await settled(p), false, 'ended at the commit, before load');
  milestone(st, 'L2', 'load');
  assert.equal(await p, 200);

  p = historyNav(c, 'forward', '', async () => {});
  await tick(5);
  commit(st, 'L3', { type: 'BackForwardCacheRestore' });
  assert.equal(await p, 200);

  p = historyNav(c, 'back', '', async () => {});
  await tick(5);
  st.onEvent('Page.navigatedWithinDocument', { frameId: 'F', url: 'http://x/b#top' });
  assert.equal(await p, 0, 'a same-document step');
});

test('after input: no navigation ends at once; a navigation the input started is waited for until it commits', async () => {
  const { st, c } = fakeTab();
  let before = { navRequests: st.navRequests, commitSeq: st.commitSeq };
  const start = Date.now();
  await settle(c, before);
  assert.ok(Date.now() - start < 100, 'waited with no navigation');

  before = { navRequests: st.navRequests, commitSeq: st.commitSeq };
  st.onEvent('Page.frameRequestedNavigation', { frameId: 'F', disposition: 'currentTab' });
  const p = settle(c, before);
  assert.equal(await settled(p), false, 'ended before the commit');
  commit(st, 'L2');
  await p;

  // A navigation that commits nothing (a download) ends when loading stops.
  before = { navRequests: st.navRequests, commitSeq: st.commitSeq };
  st.onEvent('Page.frameStartedNavigating', { frameId: 'F' });
  const q = settle(c, before);
  st.onEvent('Page.frameStoppedLoading', { frameId: 'F' });
  const t0 = Date.now();
  await q;
  assert.ok(Date.now() - t0 < 1000);
});

test('another frame or a new tab does not count as the page navigating', () => {
  const { st } = fakeTab();
  st.onEvent('Page.frameRequestedNavigation', { frameId: 'child', disposition: 'currentTab' });
  st.onEvent('Page.frameRequestedNavigation', { frameId: 'F', disposition: 'newTab' });
  st.onEvent('Page.frameNavigated', { frame: { id: 'child', parentId: 'F', loaderId: 'C1', url: 'http://x/frame' } });
  assert.equal(st.navRequests, 0);
  assert.equal(st.commitSeq, 0);
  assert.equal(st.loaderId, 'L1');
});

test('waitUntil and URLs are checked before anything is sent', () => {
  assert.throws(() => checkWaitUntil('commit'), (e) => e.code === 'BAD_ARGS');
  for (const w of [undefined, '', 'load', 'domcontentloaded', 'networkidle']) checkWaitUntil(w);
  for (const bad of ['example.com', '/relative', '', 'http//x']) assert.throws(() => checkURL(bad), (e) => e.code === 'BAD_ARGS', bad);
  for (const good of ['https://example.com/', 'about:blank', 'data:text/html,hi']) checkURL(good);
});
