import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Egress, describe, resourceType, originOf, wsOrigin, sessionRules,
  RULE_POPUP, RULE_WS_BLOCK, RULE_WS_ALLOW, FETCH_PATTERNS, AUTO_ATTACH,
} from './egress.js';

// A fake browser and server around an Egress: CDP commands and frames sent
// are recorded; decide answers are given by the test.
function harness(opts = {}) {
  const sent = [];
  const cmds = [];
  const rules = { current: [], updates: 0 };
  const closed = [];
  const announced = [];
  let connected = opts.connected !== false;
  const tabURLs = new Map(Object.entries(opts.tabURLs || {}).map(([k, v]) => [Number(k), v]));
  const e = new Egress({
    send: (f) => {
      if (!connected) throw new Error('not connected');
      sent.push(f);
      if (opts.decide) queueMicrotask(() => e.onDecision({ type: 'decision', id: f.id, ...opts.decide(f.request) }));
    },
    cdp: async (target, method, params) => {
      cmds.push({ target, method, params });
      if (method === 'Page.getFrameTree') return { frameTree: { frame: { id: 'MAIN', url: opts.url || 'about:blank' } } };
      if (opts.cdpFail && opts.cdpFail(target, method)) throw new Error(opts.cdpFail(target, method));
      return {};
    },
    dnr: {
      update: async ({ removeRuleIds, addRules }) => {
        rules.current = rules.current.filter((r) => !removeRuleIds.includes(r.id)).concat(addRules);
        rules.updates++;
      },
      ids: async () => rules.current.map((r) => r.id),
    },
    attach: async (tabId) => e.hook(tabId),
    tab: async (tabId) => ({ id: tabId, url: tabURLs.get(tabId) || '' }),
    tabs: async () => (opts.open || []).map((id) => ({ id })),
    close: async (tabId) => closed.push(tabId),
    announce: (tabId) => {
      announced.push({ tabId, hidden: e.hidden(tabId), navigated: cmds.some((c) => c.target.tabId === tabId && c.method === 'Page.navigate') });
    },
    timeoutMs: opts.timeoutMs || 1000,
    popupURLMs: 200,
  });
  return { e, sent, cmds, rules, closed, announced, down: () => { connected = false; } };
}

const paused = (id, url, type = 'Image', frameId = 'MAIN', extra = {}) => ({
  requestId: id, frameId, resourceType: type, request: { url, method: 'GET' }, ...extra,
});

// settle lets the promise chains of an event run.
const settle = () => new Promise((r) => setTimeout(r, 30));

const outcome = (cmds, requestId) => cmds.find((c) => c.params && c.params.requestId === requestId && c.method !== 'Page.getFrameTree');

test('resource types are Playwright\'s lower-case names', () => {
  const cases = {
    Document: 'document', Stylesheet: 'stylesheet', Image: 'image', Media: 'media', Font: 'font', Script: 'script',
    XHR: 'xhr', Fetch: 'fetch', EventSource: 'eventsource', WebSocket: 'websocket', Manifest: 'manifest', Ping: 'ping',
    Other: 'other', TextTrack: 'texttrack', Prefetch: 'other', CSPViolationReport: 'other', Preflight: 'other', toString: 'other',
  };
  for (const [cdp, want] of Object.entries(cases)) assert.equal(resourceType(cdp), want, cdp);
});

test('describe: a document is a navigation, top-level only in the top frame', () => {
  assert.deepEqual(describe(paused('1', 'https://a.test/x?y', 'Document'), { topLevel: true, pageOrigin: 'https://p.test' }), {
    url: 'https://a.test/x?y', method: 'GET', resourceType: 'document', navigation: true, topLevel: true, frameOrigin: '', pageOrigin: 'https://p.test',
  });
  const img = describe(paused('2', 'https://a.test/i.png'), { topLevel: true });
  assert.equal(img.navigation, false);
  assert.equal(img.topLevel, false, 'a subresource is never top-level');
  assert.equal(describe({ resourceType: 'Ping', request: { url: 'https://b.test/', method: 'POST' } }).method, 'POST');
});

test('origins: web and WebSocket URLs only', () => {
  assert.equal(originOf('https://A.test:443/x'), 'https://a.test');
  assert.equal(originOf('http://a.test:8080/x'), 'http://a.test:8080');
  assert.equal(originOf('data:text/html,x'), '');
  assert.equal(originOf('nonsense'), '');
  assert.equal(wsOrigin('http://a.test:8080/p'), 'ws://a.test:8080/');
  assert.equal(wsOrigin('https://a.test/p'), 'wss://a.test/');
  assert.equal(wsOrigin('about:blank'), '');
});

test('session rules name only driven tabs, and hold popups only from driven hosts', () => {
  assert.deepEqual(sessionRules({ driven: [], known: [1, 2], initiators: ['a.test'], ws: ['ws://a.test/'] }), [], 'no driven tab: no rule at all');
  const rules = sessionRules({ driven: [5, 3, 5], known: [9, 3, 5], initiators: ['a.test', 'a.test'], ws: ['wss://a.test/'] });
  const byId = new Map(rules.map((r) => [r.id, r]));
  assert.deepEqual(byId.get(RULE_POPUP).condition, { resourceTypes: ['main_frame'], initiatorDomains: ['a.test'], excludedTabIds: [3, 5, 9] });
  assert.equal(byId.get(RULE_POPUP).action.type, 'block');
  assert.deepEqual(byId.get(RULE_WS_BLOCK).condition, { resourceTypes: ['websocket'], tabIds: [3, 5] });
  assert.deepEqual(byId.get(RULE_WS_ALLOW), { id: RULE_WS_ALLOW, priority: 2, action: { type: 'allow' },
    condition: { urlFilter: '|wss://a.test/', resourceTypes: ['websocket'], tabIds: [3, 5] } });
  for (const r of rules) {
    assert.ok(r.condition.tabIds || r.condition.excludedTabIds, `rule ${r.id} is limited to tabs`);
  }
  assert.ok(!sessionRules({ driven: [1], initiators: [] }).some((r) => r.id === RULE_POPUP), 'no initiator: no popup rule (an empty list is not allowed)');
});

test('hook: Fetch on every request and children held, before anything else', async () => {
  const { e, cmds } = harness({ decide: () => ({ allow: true }) });
  await e.hook(7);
  assert.deepEqual(cmds.slice(0, 2).map((c) => [c.target, c.method, c.params]), [
    [{ tabId: 7 }, 'Fetch.enable', { patterns: FETCH_PATTERNS }],
    [{ tabId: 7 }, 'Target.setAutoAttach', AUTO_ATTACH],
  ]);
  assert.ok(e.drives(7));
  assert.ok(!e.drives(8));
});

test('a hook that fails leaves the tab undriven', async () => {
  const { e } = harness({ cdpFail: (t, m) => (m === 'Fetch.enable' ? 'no' : '') });
  await assert.rejects(e.hook(7));
  assert.ok(!e.drives(7));
});

test('paused requests are decided: allowed continue, denied fail as blocked', async () => {
  const { e, sent, cmds } = harness({ url: 'https://a.test/', decide: (r) => ({ allow: !r.url.includes('evil'), reason: 'no' }) });
  await e.hook(7);
  e.onEvent({ tabId: 7 }, 'Fetch.requestPaused', paused('r1', 'https://a.test/ok.png'));
  e.onEvent({ tabId: 7 }, 'Fetch.requestPaused', paused('r2', 'https://evil.test/x.png'));
  await settle();
  assert.equal(outcome(cmds, 'r1').method, 'Fetch.continueRequest');
  assert.deepEqual(outcome(cmds, 'r2').params, { requestId: 'r2', errorReason: 'BlockedByClient' });
  const asked = sent.filter((f) => f.type === 'decide').map((f) => f.request.url);
  assert.ok(asked.includes('https://a.test/ok.png') && asked.includes('https://evil.test/x.png'));
  assert.ok(sent.every((f) => f.v === 1 && /^d\d+$/.test(f.id)));
});

test('a tab that is not driven is never touched', async () => {
  const { e, sent, cmds } = harness({ decide: () => ({ allow: false }) });
  e.onEvent({ tabId: 9 }, 'Fetch.requestPaused', paused('r1', 'https://evil.test/'));
  e.onEvent({ tabId: 9 }, 'Target.attachedToTarget', { sessionId: 'S', targetInfo: { type: 'iframe' } });
  await settle();
  assert.equal(sent.length, 0);
  assert.equal(cmds.length, 0);
});

test('fail closed: no answer in time, a socket that is down, a malformed answer', async () => {
  {
    const { e, cmds } = harness({ timeoutMs: 50 }); // the server never answers
    await e.hook(7);
    e.onEvent({ tabId: 7 }, 'Fetch.requestPaused', paused('r1', 'https://a.test/'));
    await new Promise((r) => setTimeout(r, 120));
    assert.equal(outcome(cmds, 'r1').method, 'Fetch.failRequest');
  }
  {
    const h = harness({ decide: () => ({ allow: true }) });
    await h.e.hook(7);
    h.down();
    h.e.onEvent({ tabId: 7 }, 'Fetch.requestPaused', paused('r1', 'https://a.test/'));
    await settle();
    assert.equal(outcome(h.cmds, 'r1').method, 'Fetch.failRequest');
  }
  {
    const { e, cmds } = harness({ decide: () => ({ allow: 'yes' }) });
    await e.hook(7);
    e.onEvent({ tabId: 7 }, 'Fetch.requestPaused', paused('r1', 'https://a.test/'));
    await settle();
    assert.equal(outcome(cmds, 'r1').method, 'Fetch.failRequest', 'only allow: true allows');
  }
  {
    const { e, cmds } = harness({ timeoutMs: 5000 });
    await e.hook(7);
    e.onEvent({ tabId: 7 }, 'Fetch.requestPaused', paused('r1', 'https://a.test/'));
    await settle();
    e.abortAll();
    await settle();
    assert.equal(outcome(cmds, 'r1').method, 'Fetch.failRequest', 'the socket closed while waiting');
  }
});

test('every redirect hop is decided on its own', async () => {
  const { e, cmds } = harness({ decide: (r) => ({ allow: !r.url.includes('evil') }) });
  await e.hook(7);
  e.onEvent({ tabId: 7 }, 'Fetch.requestPaused', paused('r1', 'https://a.test/go'));
  await settle();
  e.onEvent({ tabId: 7 }, 'Fetch.requestPaused', paused('r2', 'https://evil.test/landing', 'Image', 'MAIN', { redirectedRequestId: 'r1' }));
  await settle();
  assert.equal(outcome(cmds, 'r1').method, 'Fetch.continueRequest');
  assert.equal(outcome(cmds, 'r2').method, 'Fetch.failRequest');
});

test('top-level documents: page origin learnt, WebSocket origin decided, rules in place before the load', async () => {
  const { e, sent, cmds, rules } = harness({ decide: (r) => ({ allow: true }) });
  await e.hook(7);
  e.onEvent({ tabId: 7 }, 'Fetch.requestPaused', paused('r1', 'http://a.test:81/page', 'Document'));
  await settle();
  const reqs = sent.map((f) => f.request);
  assert.deepEqual(reqs[0], { url: 'http://a.test:81/page', method: 'GET', resourceType: 'document', navigation: true, topLevel: true, frameOrigin: '', pageOrigin: '' });
  assert.deepEqual(reqs[1], { url: 'ws://a.test:81/', method: 'GET', resourceType: 'websocket', navigation: false, topLevel: false, frameOrigin: 'http://a.test:81', pageOrigin: 'http://a.test:81' });
  const ids = rules.current.map((r) => r.id).sort((a, b) => a - b);
  assert.deepEqual(ids, [RULE_POPUP, RULE_WS_BLOCK, RULE_WS_ALLOW]);
  assert.equal(outcome(cmds, 'r1').method, 'Fetch.continueRequest');
  // a subresource now carries the page's origin
  e.onEvent({ tabId: 7 }, 'Fetch.requestPaused', paused('r2', 'https://cdn.test/x.js', 'Script'));
  await settle();
  assert.equal(sent.at(-1).request.pageOrigin, 'http://a.test:81');
  assert.equal(sent.at(-1).request.frameOrigin, 'http://a.test:81');
  // a frame's document is a navigation, not top-level
  e.onEvent({ tabId: 7 }, 'Fetch.requestPaused', paused('r3', 'https://f.test/', 'Document', 'CHILD'));
  await settle();
  assert.equal(sent.at(-1).request.topLevel, false);
  assert.equal(sent.at(-1).request.navigation, true);
});

test('children: frames get Fetch before they run; workers just run; a frame that cannot be hooked stays held', async () => {
  const { e, cmds } = harness({ cdpFail: (t, m) => (t.sessionId === 'W' && m === 'Fetch.enable' ? "'Fetch.enable' wasn't found" : t.sessionId === 'BAD' && m === 'Fetch.enable' ? 'broken' : '') });
  await e.hook(7);
  const before = cmds.length;
  e.onEvent({ tabId: 7 }, 'Target.attachedToTarget', { sessionId: 'F', targetInfo: { type: 'iframe' }, waitingForDebugger: true });
  e.onEvent({ tabId: 7, sessionId: 'F' }, 'Target.attachedToTarget', { sessionId: 'W', targetInfo: { type: 'worker' }, waitingForDebugger: true });
  e.onEvent({ tabId: 7 }, 'Target.attachedToTarget', { sessionId: 'BAD', targetInfo: { type: 'iframe' }, waitingForDebugger: true });
  await settle();
  const by = (s) => cmds.slice(before).filter((c) => c.target.sessionId === s).map((c) => c.method);
  assert.deepEqual(by('F'), ['Fetch.enable', 'Target.setAutoAttach', 'Runtime.runIfWaitingForDebugger']);
  assert.deepEqual(by('W'), ['Fetch.enable', 'Target.setAutoAttach', 'Runtime.runIfWaitingForDebugger']);
  assert.deepEqual(by('BAD'), ['Fetch.enable']);
  // a child's paused request is answered in the child's session
  e.onEvent({ tabId: 7, sessionId: 'F' }, 'Fetch.requestPaused', paused('r9', 'https://x.test/'));
  await new Promise((r) => setTimeout(r, 1100)); // no decision: fails closed
  assert.deepEqual(outcome(cmds, 'r9').target, { tabId: 7, sessionId: 'F' });
});

test('popups: hidden, hooked, decided; denied closed, allowed loaded by the extension', async () => {
  const { e, cmds, closed, rules, announced } = harness({
    open: [1, 7], url: 'https://a.test/',
    tabURLs: { 20: 'https://evil.test/p', 21: 'https://a.test/ok' },
    decide: (r) => ({ allow: !r.url.includes('evil') }),
  });
  await e.hook(7);
  const popupRule = () => rules.current.find((r) => r.id === RULE_POPUP);
  assert.deepEqual(popupRule().condition.excludedTabIds, [1, 7], 'every tab open is excluded: only new ones are held');

  const denied = e.onTabCreated({ id: 20, openerTabId: 7 });
  assert.ok(e.hidden(20));
  // its own first load, if Fetch sees it, fails: the extension loads the decided URL itself
  e.onEvent({ tabId: 20 }, 'Fetch.requestPaused', paused('p1', 'https://evil.test/p', 'Document', 'MAIN'));
  await denied;
  await settle();
  assert.equal(outcome(cmds, 'p1').method, 'Fetch.failRequest');
  assert.deepEqual(closed, [20]);
  assert.ok(!e.drives(20));

  await e.onTabCreated({ id: 21, openerTabId: 7 });
  assert.ok(!e.hidden(21));
  assert.ok(e.drives(21));
  assert.deepEqual(cmds.filter((c) => c.target.tabId === 21 && c.method === 'Page.navigate').map((c) => c.params.url), ['https://a.test/ok']);
  assert.ok(popupRule().condition.excludedTabIds.includes(21), 'a decided popup is no longer held');
  // The server learns of the allowed popup only, once listed and loading
  // its decided page (a hidden tab is TAB_NOT_FOUND to every call).
  assert.deepEqual(announced, [{ tabId: 21, hidden: false, navigated: true }]);
});

test('a tab the user opens is only remembered, never hooked or held', async () => {
  const { e, cmds, closed, rules } = harness({ open: [7], url: 'https://a.test/', decide: () => ({ allow: true }) });
  await e.hook(7);
  const n = cmds.length;
  await e.onTabCreated({ id: 30 }); // no opener
  await e.onTabCreated({ id: 31, openerTabId: 30 }); // opened by the user's tab
  assert.equal(cmds.length, n);
  assert.deepEqual(closed, []);
  assert.ok(!e.drives(30) && !e.drives(31));
  const rule = rules.current.find((r) => r.id === RULE_POPUP);
  assert.ok(rule.condition.excludedTabIds.includes(30) && rule.condition.excludedTabIds.includes(31));
  for (const r of rules.current) if (r.condition.tabIds) assert.deepEqual(r.condition.tabIds, [7]);
});

test('rules are dropped when the last driven tab goes', async () => {
  const { e, rules } = harness({ open: [7], url: 'https://a.test/', decide: () => ({ allow: true }) });
  await e.hook(7);
  assert.ok(rules.current.length > 0);
  e.release(7);
  await settle();
  assert.deepEqual(rules.current, []);
});
