import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Router, checkHandlers } from './router.js';
import { METHODS } from './methods.js';
import { fail } from './errors.js';

// A router whose sent frames are collected, decoded.
function harness(handlers, opts = {}) {
  const sent = [];
  const logs = [];
  const router = new Router(handlers, {
    send: (text) => sent.push(JSON.parse(text)),
    log: (level, msg) => logs.push([level, msg]),
    ...opts,
  });
  return { router, sent, logs };
}

const cmd = (id, method, params = {}, extra = {}) => ({ v: 1, type: 'command', id, method, tabId: '', params, ...extra });

test('every id is answered exactly once, with its own result, when calls overlap', async () => {
  const { router, sent } = harness({
    echo: async (p) => {
      await new Promise((r) => setTimeout(r, p.wait));
      return { n: p.n };
    },
  }, { methods: ['echo'] });
  const ids = Array.from({ length: 20 }, (_, i) => 'c' + i);
  await Promise.all(ids.map((id, i) => router.handle(cmd(id, 'echo', { n: i, wait: (i * 7) % 13 }))));
  assert.equal(sent.length, ids.length);
  const byId = new Map(sent.map((f) => [f.id, f]));
  assert.equal(byId.size, ids.length, 'no id answered twice');
  ids.forEach((id, i) => assert.deepEqual(byId.get(id), { v: 1, type: 'result', id, data: { n: i } }));
  assert.equal(router.pending, 0);
});

test('a handler that throws is answered with an error frame; the router keeps serving', async () => {
  const { router, sent } = harness({
    typed: async () => { throw fail('SELECTOR_NOT_FOUND', 'nothing matches #x', 'check the selector'); },
    plain: async () => { throw new Error('boom'); },
    sync: () => { throw 'a string'; },
    ok: async () => ({ fine: true }),
  }, { methods: ['typed', 'plain', 'sync', 'ok'] });
  await router.handle(cmd('a', 'typed'));
  await router.handle(cmd('b', 'plain'));
  await router.handle(cmd('c', 'sync'));
  await router.handle(cmd('d', 'ok'));
  assert.deepEqual(sent[0], { v: 1, type: 'error', id: 'a', error: { code: 'SELECTOR_NOT_FOUND', message: 'nothing matches #x', hint: 'check the selector' } });
  assert.equal(sent[1].type, 'error');
  assert.equal(sent[1].error.code, 'INTERNAL');
  assert.match(sent[1].error.message, /boom/);
  assert.equal(sent[2].error.code, 'INTERNAL');
  assert.match(sent[2].error.message, /a string/);
  assert.deepEqual(sent[3], { v: 1, type: 'result', id: 'd', data: { fine: true } });
});

test('an unknown method is a BAD_ARGS error for its id', async () => {
  const { router, sent } = harness({ tabs: async () => [] }, { methods: ['tabs'] });
  await router.handle(cmd('u1', 'frobnicate'));
  await router.handle(cmd('u2', 'toString')); // inherited, not a handler
  await router.handle({ v: 1, type: 'command', id: 'u3' }); // no method
  assert.deepEqual(sent.map((f) => [f.id, f.type, f.error.code]), [['u1', 'error', 'BAD_ARGS'], ['u2', 'error', 'BAD_ARGS'], ['u3', 'error', 'BAD_ARGS']]);
  assert.match(sent[0].error.message, /frobnicate/);
});

test('a result with no JSON form becomes an INTERNAL error for the same id', async () => {
  const cyclic = {};
  cyclic.self = cyclic;
  const { router, sent } = harness({
    big: async () => ({ n: 10n }),
    cycle: async () => cyclic,
    undef: async () => undefined,
  }, { methods: ['big', 'cycle', 'undef'] });
  await router.handle(cmd('b', 'big'));
  await router.handle(cmd('c', 'cycle'));
  await router.handle(cmd('u', 'undef'));
  assert.deepEqual(sent.map((f) => [f.id, f.type]), [['b', 'error'], ['c', 'error'], ['u', 'result']]);
  assert.equal(sent[0].error.code, 'INTERNAL');
  assert.equal(sent[1].error.code, 'INTERNAL');
  assert.deepEqual(sent[2].data, {});
});

test('a handler that hangs is answered TIMEOUT once, and its late result is dropped', async () => {
  let release;
  let sawAbort = false;
  const { router, sent } = harness({
    hang: (p, ctx) => new Promise((resolve) => {
      ctx.signal.addEventListener('abort', () => { sawAbort = true; });
      release = () => resolve({ late: true });
    }),
  }, { methods: ['hang'] });
  await router.handle(cmd('h', 'hang', {}, { timeoutMs: 10 }));
  release();
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(sent.length, 1);
  assert.equal(sent[0].error.code, 'TIMEOUT');
  assert.ok(sawAbort, 'the handler was told through its signal');
});

test('cancel answers the id now and aborts the handler; a duplicate id in flight is dropped', async () => {
  let aborted = false;
  const { router, sent } = harness({
    slow: (p, ctx) => new Promise((resolve) => {
      ctx.signal.addEventListener('abort', () => { aborted = true; resolve({ after: 'abort' }); });
    }),
  }, { methods: ['slow'] });
  const first = router.handle(cmd('s', 'slow'));
  const dup = router.handle(cmd('s', 'slow'));
  assert.equal(router.cancel('s'), true);
  assert.equal(router.cancel('nope'), false);
  await Promise.all([first, dup]);
  assert.ok(aborted);
  assert.equal(sent.length, 1);
  assert.deepEqual([sent[0].id, sent[0].error.code], ['s', 'TIMEOUT']);
});

test('abortAll fails every call in flight with EXTENSION_DISCONNECTED', async () => {
  const { router, sent } = harness({ wait: () => new Promise(() => {}) }, { methods: ['wait'] });
  const all = ['x', 'y', 'z'].map((id) => router.handle(cmd(id, 'wait')));
  router.abortAll();
  await Promise.all(all);
  assert.deepEqual(sent.map((f) => [f.id, f.error.code]).sort(), [['x', 'EXTENSION_DISCONNECTED'], ['y', 'EXTENSION_DISCONNECTED'], ['z', 'EXTENSION_DISCONNECTED']]);
});

test('a send that throws does not make handle reject', async () => {
  const router = new Router({ m: async () => 1 }, { send: () => { throw new Error('socket closed'); }, methods: ['m'] });
  await router.handle(cmd('a', 'm'));
  await router.handle(null);
  await router.handle({ type: 'command' });
  assert.equal(router.pending, 0);
});

test('handlers get params, the tab id and a deadline', async () => {
  let got;
  const { router } = harness({ m: async (p, ctx) => { got = { p, ctx }; return null; } }, { methods: ['m'], now: () => 1000 });
  await router.handle(cmd('a', 'm', { url: 'x' }, { tabId: '7', timeoutMs: 500 }));
  assert.deepEqual(got.p, { url: 'x' });
  assert.equal(got.ctx.tabId, '7');
  assert.equal(got.ctx.deadline, 1500);
  assert.equal(got.ctx.method, 'm');
});

test('start-up check: missing and extra handlers are reported loudly', () => {
  const logs = [];
  const r = new Router({ tabs: async () => [], bogus: async () => 1 }, { send() {}, log: (l, m) => logs.push([l, m]), methods: ['tabs', 'click'] });
  assert.deepEqual(r.missing, ['click']);
  assert.deepEqual(r.extra, ['bogus']);
  assert.ok(logs.some(([l, m]) => l === 'error' && m.includes('click')));
});

test('start-up check: the wire methods are exactly the table of PROTOCOL.md', () => {
  const doc = readFileSync(new URL('./PROTOCOL.md', import.meta.url), 'utf8');
  const table = [];
  for (const line of doc.split('\n')) {
    const m = /^\| ([a-zA-Z, ]+) \| /.exec(line);
    if (!m || m[1].trim() === 'method') continue;
    table.push(...m[1].split(',').map((s) => s.trim()));
  }
  assert.deepEqual([...table].sort(), [...METHODS].sort());
  assert.deepEqual(checkHandlers(Object.fromEntries(table.map((m) => [m, () => {}]))), { missing: [], extra: [] });
});

test('the handlers the service worker routes (cdp.js) are exactly the wire methods', async () => {
  // sw.js builds its Router on cdp.handlers; a method in methods.js
  // without a handler, or a handler for a method the list lacks, fails
  // here before the router's start-up check would log it in the browser.
  // The Go side checks its own list against methods.js
  // (executor/ext/wire TestMethodsMatchTheExtension).
  const { handlers } = await import('./cdp.js');
  assert.deepEqual(checkHandlers(handlers), { missing: [], extra: [] });
  const sw = readFileSync(new URL('./sw.js', import.meta.url), 'utf8');
  assert.match(sw, /new Router\(cdp\.handlers,/, 'sw.js no longer routes cdp.handlers: point this test at what it routes');
});
