import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { evalSource, bareValue, pageError, isSyntaxError } from './evaluate.js';
import { fakeTab } from './fakecdp.js';

// The server's page scripts (executor/scripts), as welcome hands them
// over: without their leading comment lines (executor.stripComments).
function serverScript(name) {
  const lines = readFileSync(new URL(`../executor/scripts/${name}.js`, import.meta.url), 'utf8').split('\n');
  while (lines.length && lines[0].trim().startsWith('//')) lines.shift();
  return lines.join('\n').trim();
}

// run evaluates what evalSource composes, as Runtime.evaluate would, in
// node with a document that has a title.
async function run(expression, opts = { awaitPromise: false, timeoutMs: 1000 }) {
  globalThis.document = { title: 'T' };
  try {
    // eslint-disable-next-line no-eval
    return await (0, eval)(evalSource(serverScript('eval'), serverScript('jsonsafe'), expression, opts));
  } finally {
    delete globalThis.document;
  }
}

test("eval composes the server's eval.js and jsonsafe.js into a JSON-safe value and the title", async () => {
  const cases = [
    ['1 + 1', 2],
    ['undefined', null],
    ['[NaN, Infinity, -Infinity, -0]', ['NaN', 'Infinity', '-Infinity', 0]],
    ['({u: undefined, n: null, f() {}})', { n: null }],
    ['(() => { const o = {a: 1}; o.o = o; return o; })()', { a: 1, o: '[Circular]' }],
    ['new Date(0)', '1970-01-01T00:00:00.000Z'],
    ['[5n, 2n ** 70n]', [5, '1180591620717411303424']],
    ['() => 7', 7],
    ['1 // a trailing comment', 1],
    ['Promise.resolve(3)', '[object Promise]'],
  ];
  for (const [expr, want] of cases) {
    const got = await run(expr);
    assert.deepEqual(got, { v: want, t: 'T' }, expr);
  }
  assert.deepEqual(await run('Promise.resolve(3)', { awaitPromise: true, timeoutMs: 1000 }), { v: 3, t: 'T' });
  await assert.rejects(run('new Promise(() => {})', { awaitPromise: true, timeoutMs: 20 }), /the promise did not settle within 20 ms/);
  // Statements are a syntax error in the composed source: the handler
  // evaluates them bare.
  assert.throws(() => new Function(evalSource(serverScript('eval'), serverScript('jsonsafe'), 'let a = 1; a', {})), SyntaxError);
});

test('a bare value is made JSON-safe in the page by the same script', async () => {
  const { c, sent } = fakeTab({
    answer: (m) => {
      if (m === 'Runtime.evaluate') return { result: { type: 'object', objectId: 'global' } };
      if (m === 'Runtime.callFunctionOn') return { result: { value: 'NaN' } };
      return undefined;
    },
  });
  assert.equal(await bareValue(c, { type: 'number', value: 4 }, 'SAFE'), 4);
  assert.equal(sent.length, 0, 'a plain value needs no round trip');
  assert.equal(await bareValue(c, { type: 'number', unserializableValue: 'NaN' }, 'SAFE'), 'NaN');
  const call = sent.find((s) => s.method === 'Runtime.callFunctionOn');
  assert.deepEqual(call.params.arguments, [{ unserializableValue: 'NaN' }]);
  assert.ok(call.params.functionDeclaration.includes('(SAFE)'));
  sent.length = 0;
  await bareValue(c, { type: 'object', objectId: 'obj-9' }, 'SAFE');
  assert.equal(sent[0].params.objectId, 'obj-9');
  assert.deepEqual(sent[0].params.arguments, []);
  assert.ok(sent.some((s) => s.method === 'Runtime.releaseObject' && s.params.objectId === 'obj-9'));
});

test('page errors read as the page would print them', () => {
  assert.equal(pageError({ exception: { description: 'Error: boom\n    at x' } }), 'boom');
  assert.equal(pageError({ exception: { description: 'Uncaught ReferenceError: q is not defined' } }), 'ReferenceError: q is not defined');
  assert.equal(pageError({ exception: { value: 'thrown string' } }), 'thrown string');
  assert.equal(isSyntaxError({ exception: { className: 'SyntaxError' } }), true);
  assert.equal(isSyntaxError({ exception: { className: 'TypeError', description: 'TypeError: x' } }), false);
});
