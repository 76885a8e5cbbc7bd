import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateTarget, describeTarget, targetOp, targetPoint } from './targets.js';
import { inWorld, runSource } from './world.js';
import { errorPayload } from './errors.js';
import { fakeTab, commit, cdpError } from './fakecdp.js';

// The target operations over a fake CDP sender: the element script's
// answers (what Runtime.callFunctionOn gives) become the contract's errors.

// scriptAnswer makes Runtime.callFunctionOn give reply(arg, env) as the
// script's value.
const scriptAnswer = (reply) => (method, params) => {
  if (method !== 'Runtime.callFunctionOn') return undefined;
  const args = params.arguments.map((a) => a.value);
  return { result: { value: reply(args[0], args[args.length - 1]) } };
};

test('a target is one of selector or ref, and never steps into a frame', () => {
  assert.deepEqual(validateTarget({ selector: '#a' }), { selector: '#a', ref: '' });
  assert.deepEqual(validateTarget({ ref: 'kq1' }), { selector: '', ref: 'kq1' });
  for (const bad of [{}, null, { selector: '#a', ref: 'kq1' }, { selector: 'iframe >> internal:control=enter-frame >> #x' }]) {
    assert.throws(() => validateTarget(bad), (e) => e.code === 'BAD_ARGS');
  }
  assert.equal(describeTarget({ ref: 'kq1' }), 'ref kq1');
  assert.equal(describeTarget({ selector: '#a' }), 'selector #a');
});

test('a ref op runs the element script in the isolated world with the document token', async () => {
  const { c, sent } = fakeTab({ answer: scriptAnswer((arg) => ({ text: 'hello ' + arg.ref })) });
  const r = await targetOp(c, 'get_text', { ref: 'kq12' }, 'text');
  assert.deepEqual(r, { text: 'hello kq12' });
  const world = sent.find((s) => s.method === 'Page.createIsolatedWorld');
  assert.deepEqual(world.params, { frameId: 'F', worldName: 'chromegate' });
  const call = sent.find((s) => s.method === 'Runtime.callFunctionOn');
  assert.equal(call.params.executionContextId, 5);
  assert.deepEqual(call.params.arguments[0].value, { op: 'text', ref: 'kq12' });
  assert.match(call.params.arguments[1].value.doc, /^[a-z]{2,}$/);
});

test('a selector op waits in the page for what is left of the call, less a margin', async () => {
  const { c, sent } = fakeTab({ ms: 5000, answer: scriptAnswer(() => ({ x: 3, y: 4 })) });
  assert.deepEqual(await targetPoint(c, 'click', { selector: 'text=Go' }, true), { x: 3, y: 4 });
  const arg = sent.find((s) => s.method === 'Runtime.callFunctionOn').params.arguments[0].value;
  assert.equal(arg.selector, 'text=Go');
  assert.equal(arg.op, 'point');
  assert.equal(arg.opArg.button, true);
  assert.ok(arg.waitMs > 2000 && arg.waitMs < 5000, `waitMs ${arg.waitMs}`);
});

test("the element script's failures are the contract's errors", async () => {
  const cases = [
    [{ error: 'notfound' }, { selector: '#x' }, 'SELECTOR_NOT_FOUND', /nothing matches selector #x/],
    [{ error: 'timeout', why: 'covered by <div>', page: 'Cookie banner' }, { selector: '#x' }, 'TIMEOUT', /did not become actionable/],
    [{ error: 'badselector', why: 'bad' }, { selector: '##' }, 'BAD_ARGS', /invalid selector/],
    [{ error: 'notfillable', why: 'the element is a <div>' }, { ref: 'kq1' }, 'BAD_ARGS', /<div>/],
    [{ error: 'weird', why: 'x' }, { ref: 'kq1' }, 'INTERNAL', /weird/],
  ];
  for (const [reply, target, code, msg] of cases) {
    const { c } = fakeTab({ answer: scriptAnswer(() => reply) });
    await assert.rejects(targetOp(c, 'click', target, 'point'), (e) => {
      assert.equal(e.code, code, JSON.stringify(reply));
      assert.match(e.message, msg);
      if (reply.page) assert.equal(e.page, reply.page, 'the page\'s words go fenced, not in the message');
      return true;
    });
  }
});

test('a refused ref goes to the server as error.ref, for the server to word', async () => {
  // removed from the page
  let t = fakeTab({ answer: scriptAnswer(() => ({ error: 'expired', why: 'removed' })) });
  await assert.rejects(targetOp(t.c, 'click', { ref: 'kq1' }, 'point'), (e) => {
    assert.deepEqual(errorPayload(e).ref, { ref: 'kq1', failure: 'expired', why: 'removed' });
    assert.equal(e.code, 'REF_EXPIRED');
    return true;
  });
  // of an earlier document this extension issued: expired
  t = fakeTab({ answer: scriptAnswer(() => ({ error: 'expired', why: 'navigated' })) });
  const old = await t.store.nextDocToken();
  await assert.rejects(targetOp(t.c, 'click', { ref: old + '3' }, 'point'),
    (e) => e.ref.failure === 'expired' && e.ref.why === 'navigated');
  // with a token never issued: unknown
  await assert.rejects(targetOp(t.c, 'click', { ref: 'zzzzzzzz3' }, 'point'), (e) => e.ref.failure === 'unknown' && e.code === 'BAD_ARGS');
  // malformed: refused before anything is sent
  t = fakeTab();
  await assert.rejects(targetOp(t.c, 'click', { ref: '12' }, 'point'), (e) => e.ref.failure === 'malformed');
  assert.equal(t.sent.length, 0);
});

test('a script is sent once per document; later calls run a stub', async () => {
  const { st, c, sent } = fakeTab({
    answer: (method, params) => {
      if (method !== 'Runtime.callFunctionOn') return undefined;
      return { result: { value: { ok: params.functionDeclaration.length } } };
    },
  });
  await targetOp(c, 'get_text', { ref: 'kq1' }, 'text');
  await targetOp(c, 'get_text', { ref: 'kq1' }, 'text');
  const decls = sent.filter((s) => s.method === 'Runtime.callFunctionOn').map((s) => s.params.functionDeclaration);
  assert.equal(decls.length, 2);
  assert.ok(decls[0].includes('(arg, env) => arg'), 'the first call carries the script');
  assert.ok(!decls[1].includes('(arg, env) => arg') && decls[1].length < 300, 'the second call is a stub');
  // a new document: a new world, the script sent again
  commit(st, 'L2');
  await targetOp(c, 'get_text', { ref: 'kq1' }, 'text');
  const worlds = sent.filter((s) => s.method === 'Page.createIsolatedWorld');
  assert.equal(worlds.length, 2);
  assert.ok(sent.at(-1).params.functionDeclaration.includes('(arg, env) => arg'));
});

test('a world destroyed under a call (a navigation) is made again once; an exception is EVAL_FAILED', async () => {
  let n = 0;
  const { sent, st } = fakeTab({
    answer: (method) => {
      if (method === 'Page.createIsolatedWorld') return { executionContextId: 10 + n };
      if (method !== 'Runtime.callFunctionOn') return undefined;
      n++;
      if (n === 1) throw cdpError('Cannot find context with specified id');
      return { result: { value: 'ok' } };
    },
  });
  assert.equal(await inWorld(st, '() => 1', []), 'ok');
  assert.equal(sent.filter((s) => s.method === 'Page.createIsolatedWorld').length, 2);
  const ex = fakeTab({
    answer: (method) => (method === 'Runtime.callFunctionOn'
      ? { exceptionDetails: { exception: { description: 'TypeError: x is not a function\n    at <anonymous>' } } } : undefined),
  });
  await assert.rejects(runSource(ex.st, '(a) => a', [1]), (e) => e.code === 'EVAL_FAILED' && e.message.endsWith('TypeError: x is not a function'));
});

test('an element handle (set_files) comes back as the RemoteObject; a missing element says why', async () => {
  const node = { type: 'object', subtype: 'node', objectId: 'obj-1' };
  let t = fakeTab({ answer: (m) => (m === 'Runtime.callFunctionOn' ? { result: node } : undefined) });
  assert.deepEqual(await targetOp(t.c, 'set_files', { ref: 'kq1' }, 'element', {}, { byValue: false }), node);
  t = fakeTab({
    answer: (m, p) => {
      if (m !== 'Runtime.callFunctionOn') return undefined;
      return p.returnByValue ? { result: { value: { error: 'expired', why: 'removed' } } } : { result: { type: 'object', value: {} } };
    },
  });
  await assert.rejects(targetOp(t.c, 'set_files', { ref: 'kq1' }, 'element', {}, { byValue: false }), (e) => e.ref && e.ref.why === 'removed');
});
