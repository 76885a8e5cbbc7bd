import { test } from 'node:test';
import assert from 'node:assert/strict';
import { frameAt, frameOf, runRef, onTargetEvent, toPage, frameDoc, tokenOf, restoreFrames } from './frames.js';
import { TabState } from './tabstate.js';
import { fakeTab, cdpError } from './fakecdp.js';

// A tab whose main document's world hands over an iframe element, and a
// child session S1 (an out-of-process frame OOP) that answers in its own
// world (context 9); sessionSent records what went to child sessions.
function oopTab({ childAnswer = () => undefined } = {}) {
  const t = fakeTab({
    answer: (method, params) => {
      if (method === 'Runtime.callFunctionOn' && params.returnByValue === false) return { result: { subtype: 'node', objectId: 'o1' } };
      if (method === 'DOM.describeNode') return { node: { frameId: 'OOP' } };
      return undefined;
    },
  });
  const sessionSent = [];
  t.st.sendSession = async (sessionId, method, params) => {
    sessionSent.push({ sessionId, method, params });
    const r = await childAnswer(method, params);
    if (r !== undefined) return r;
    if (method === 'Page.createIsolatedWorld') return { executionContextId: 9 };
    return {};
  };
  onTargetEvent(t.st, 'Target.attachedToTarget', { sessionId: 'S1', targetInfo: { targetId: 'OOP', type: 'iframe' } });
  onTargetEvent(t.st, 'Target.attachedToTarget', { sessionId: 'W1', targetInfo: { targetId: 'WK', type: 'worker' } });
  return { ...t, sessionSent };
}

const scripts = { element: '(arg) => arg', frame: '(arg) => ({ url: "http://b.test/", origin: "http://b.test" })' };

test('an out-of-process frame gets a world on its own session, and its refs go there', async () => {
  const { st, sessionSent } = oopTab();
  assert.deepEqual([...st.children], [['OOP', 'S1']], 'only frames are kept, not workers');
  const fd = await frameOf(st, 'ka3', scripts);
  assert.equal(fd.sessionId, 'S1');
  assert.equal(fd.ctxId, 9);
  assert.equal(fd.owner, 'ka3');
  assert.match(fd.tok, /^[a-z]{2,}$/);
  assert.deepEqual(sessionSent.map((s) => s.method), ['Page.createIsolatedWorld']);
  assert.deepEqual(sessionSent[0].params, { frameId: 'OOP', worldName: 'chromegate' });
  assert.equal(frameDoc(st, fd.tok), fd);

  await runRef(st, fd.tok + '4', '(arg) => arg', [{ op: 'text' }]);
  const call = sessionSent.at(-1);
  assert.equal(call.method, 'Runtime.callFunctionOn');
  assert.equal(call.sessionId, 'S1');
  assert.equal(call.params.executionContextId, 9);
  assert.deepEqual(call.params.arguments.at(-1), { value: { doc: fd.tok } }, "the frame document's own token");
});

test("a frame document whose context is gone is REF_EXPIRED, forgotten, and never retried elsewhere", async () => {
  let goneNow = false;
  const { st, sent } = oopTab({
    childAnswer: (method) => {
      if (goneNow && method === 'Runtime.callFunctionOn') throw cdpError('Cannot find context with specified id');
      return undefined;
    },
  });
  const fd = await frameOf(st, 'ka3', scripts);
  goneNow = true;
  const before = sent.length;
  await assert.rejects(runRef(st, fd.tok + '1', '(arg) => arg', [{}]), (e) => e.code === 'REF_EXPIRED');
  assert.equal(frameDoc(st, fd.tok), null);
  assert.equal(sent.length, before, 'nothing ran in the main document instead');
});

test('a detached child session takes its frame documents along', async () => {
  const { st } = oopTab();
  const fd = await frameOf(st, 'ka3', scripts);
  onTargetEvent(st, 'Target.detachedFromTarget', { sessionId: 'S1' });
  assert.equal(frameDoc(st, fd.tok), null);
  assert.equal(st.children.size, 0);
});

test('an element that is not a frame is refused', async () => {
  const t = fakeTab({
    answer: (method, params) => {
      if (method === 'Runtime.callFunctionOn' && params.returnByValue === false) return { result: { subtype: 'node', objectId: 'o1' } };
      if (method === 'DOM.describeNode') return { node: { nodeName: 'BUTTON' } };
      return undefined;
    },
  });
  await assert.rejects(frameOf(t.st, 'ka3', scripts), (e) => e.code === 'BAD_ARGS');
  await assert.rejects(frameOf(t.st, 'KA3', scripts), (e) => e.code === 'BAD_ARGS');
});

test('a frame covered by the page around it takes no click through it', async () => {
  const { st } = oopTab();
  const fd = await frameOf(st, 'ka3', scripts);
  // the main document's world answers the owner op: covered
  st.send = async (method) => {
    if (method === 'Runtime.callFunctionOn') return { result: { value: { error: 'covered', why: 'a <div> of the page' } } };
    return {};
  };
  await assert.rejects(toPage(st, fd, 5, 5, { hit: true, frameSource: 'x' }), (e) => e.code === 'TIMEOUT');
  assert.equal(tokenOf('abc12'), 'abc');
});

test('frameAt follows the point into the frame of another origin under it', async () => {
  const t = fakeTab({
    answer: (method, params) => {
      if (method === 'Runtime.callFunctionOn' && params.returnByValue === false) return { result: { subtype: 'node', objectId: 'o1' } };
      if (method === 'Runtime.callFunctionOn' && params.arguments[0].value.op === 'at') return { result: { value: { ref: 'ka3', x: 5, y: 6 } } };
      if (method === 'DOM.describeNode') return { node: { frameId: 'OOP' } };
      return undefined;
    },
  });
  const sessionSent = [];
  t.st.sendSession = async (sessionId, method, params) => {
    sessionSent.push({ sessionId, method, params });
    if (method === 'Page.createIsolatedWorld') return { executionContextId: 9 };
    if (method === 'Runtime.callFunctionOn') return { result: { value: { doc: true } } };
    return {};
  };
  onTargetEvent(t.st, 'Target.attachedToTarget', { sessionId: 'S1', targetInfo: { targetId: 'OOP', type: 'iframe' } });
  const fd = await frameAt(t.st, 40, 50, scripts);
  assert.equal(fd.frameId, 'OOP');
  const asked = sessionSent.find((s) => s.method === 'Runtime.callFunctionOn');
  assert.deepEqual(asked.params.arguments[0].value, { op: 'at', x: 5, y: 6 }, "the point in the frame's viewport");

  const main = fakeTab({ answer: (method) => (method === 'Runtime.callFunctionOn' ? { result: { value: { doc: true } } } : undefined) });
  assert.equal(await frameAt(main.st, 1, 1, scripts), null);
});

test("a frame's document and child session outlive a service-worker restart: its refs still go to its world", async () => {
  const { st, store } = oopTab();
  await restoreFrames(st); // the attach, before anything was saved
  onTargetEvent(st, 'Target.attachedToTarget', { sessionId: 'S1', targetInfo: { targetId: 'OOP', type: 'iframe' } });
  const fd = await frameOf(st, 'ka3', scripts);
  await st.framesSaved;

  // The worker restarts: a new TabState on the same store, nothing in
  // memory, attached again.
  const sessionSent = [];
  const again = new TabState(st.tabId, {
    send: async () => ({}),
    sendSession: async (sessionId, method, params) => {
      sessionSent.push({ sessionId, method, params });
      return { result: { value: 'from the frame' } };
    },
    store,
  });
  assert.equal(frameDoc(again, fd.tok), null);
  await restoreFrames(again);
  assert.deepEqual(frameDoc(again, fd.tok), fd);
  assert.deepEqual([...again.children], [['OOP', 'S1']]);
  const got = await runRef(again, fd.tok + '4', '(arg) => arg', [{ op: 'text' }]);
  assert.equal(got, 'from the frame');
  assert.equal(sessionSent.at(-1).sessionId, 'S1');
  assert.equal(sessionSent.at(-1).params.executionContextId, fd.ctxId);

  // What the new worker learns wins over what was saved: a child session
  // reported again replaces the saved one.
  onTargetEvent(again, 'Target.attachedToTarget', { sessionId: 'S2', targetInfo: { targetId: 'OOP', type: 'iframe' } });
  await again.framesSaved;
  assert.deepEqual((await store.savedFrames(st.tabId)).children, [['OOP', 'S2']]);
  // A detach forgets the tab's frames, saved ones too.
  await store.forgetWorld(st.tabId);
  assert.equal(await store.savedFrames(st.tabId), null);
});

test('what a restarted worker saves never overwrites the saved frames before they are restored', async () => {
  const { st, store } = oopTab();
  await restoreFrames(st);
  const fd = await frameOf(st, 'ka3', scripts);
  await st.framesSaved;
  const again = new TabState(st.tabId, { send: async () => ({}), store });
  // Events of the new attach come before the restore.
  onTargetEvent(again, 'Target.attachedToTarget', { sessionId: 'S9', targetInfo: { targetId: 'OTHER', type: 'iframe' } });
  await again.framesSaved;
  assert.equal((await store.savedFrames(st.tabId)).docs[0].tok, fd.tok);
  await restoreFrames(again);
  await again.framesSaved;
  const saved = await store.savedFrames(st.tabId);
  assert.deepEqual(saved.docs.map((d) => d.tok), [fd.tok]);
  assert.deepEqual(saved.children, [['OTHER', 'S9'], ['OOP', 'S1']]);
});
