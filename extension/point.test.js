import { test } from 'node:test';
import assert from 'node:assert/strict';
import { frameAt, same, inherit } from './point.js';

// A fake CDP sender: a main frame with a same-process child, and an
// out-of-process frame known only as a target.
function fakeSend(nodeAt) {
  return async (method, params) => {
    switch (method) {
      case 'DOM.getNodeForLocation':
        return nodeAt(params);
      case 'DOM.describeNode':
        return params.backendNodeId === 9 ? { node: { nodeName: 'IFRAME', frameId: 'OOP' } } : { node: { nodeName: 'BUTTON' } };
      case 'Page.getFrameTree':
        return {
          frameTree: {
            frame: { id: 'MAIN', url: 'http://allowed.test/', securityOrigin: 'http://allowed.test' },
            childFrames: [{ frame: { id: 'KID', url: 'about:srcdoc', securityOrigin: 'http://allowed.test' } }],
          },
        };
      case 'Target.getTargetInfo':
        if (params.targetId !== 'OOP') throw new Error('no such target');
        return { targetInfo: { targetId: 'OOP', type: 'iframe', url: 'http://other.test/widget' } };
      default:
        throw new Error(`unexpected ${method}`);
    }
  };
}

test('frameAt: the main frame, a same-process frame, an out-of-process frame', async () => {
  const main = await frameAt(fakeSend(() => ({ backendNodeId: 1, frameId: 'MAIN' })), { x: 1, y: 1 });
  assert.deepEqual(main, { frameId: 'MAIN', mainFrame: true, url: 'http://allowed.test/', origin: 'http://allowed.test' });
  const kid = await frameAt(fakeSend(() => ({ backendNodeId: 2, frameId: 'KID' })), { x: 1, y: 1 });
  assert.deepEqual(kid, { frameId: 'KID', mainFrame: false, url: 'about:srcdoc', origin: 'http://allowed.test' });
  const oop = await frameAt(fakeSend(() => ({ backendNodeId: 9, frameId: 'MAIN' })), { x: 1, y: 1 });
  assert.deepEqual(oop, { frameId: 'OOP', mainFrame: false, url: 'http://other.test/widget', origin: '' });
});

test('frameAt fails closed: no frame, an unknown frame, a failing hit test', async () => {
  for (const at of [() => ({ backendNodeId: 1 }), () => ({ backendNodeId: 1, frameId: 'GONE' }), () => { throw new Error('no'); }]) {
    await assert.rejects(frameAt(fakeSend(at), { x: 1, y: 2 }), { code: 'POLICY_DENIED' });
  }
});

test('same: a document is its frame, URL and origin', () => {
  const a = { frameId: 'F', url: 'http://a/', origin: 'http://a' };
  assert.ok(same(a, { ...a }));
  assert.ok(!same(a, { ...a, frameId: 'G' }));
  assert.ok(!same(a, { ...a, url: 'http://a/x' }));
  assert.ok(!same(a, undefined));
});

test('inherit: an about:srcdoc frame the script entered has its origin; nothing else changes', () => {
  const srcdoc = { url: 'about:srcdoc', origin: '://' };
  assert.equal(inherit(srcdoc, { docURL: 'about:srcdoc', origin: 'http://a.test' }), 'http://a.test');
  assert.equal(inherit(srcdoc, { docURL: 'about:srcdoc', origin: 'http://a.test', frame: true }), '://');
  assert.equal(inherit(srcdoc, { docURL: 'about:blank', origin: 'http://a.test' }), '://');
  assert.equal(inherit(srcdoc, { docURL: 'about:srcdoc', origin: 'null' }), '://');
  assert.equal(inherit({ url: 'http://b.test/', origin: 'http://b.test' }, { docURL: 'http://b.test/', origin: 'http://a.test' }), 'http://b.test');
  assert.equal(inherit({ url: 'about:blank', origin: 'http://c.test' }, { docURL: 'about:blank', origin: 'http://a.test' }), 'http://c.test');
});
