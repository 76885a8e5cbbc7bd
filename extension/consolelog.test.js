import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConsoleLogs, TabConsole, level, cut, MAX_TEXT, MAX_STACK, MAX_ENTRIES } from './consolelog.js';
import { pdfArgs } from './cdp.js';

const frame = (url, line, col, fn = 'f') => ({ functionName: fn, url, lineNumber: line - 1, columnNumber: col - 1 });

test('levels as the cdp backend names them', () => {
  assert.deepEqual(['log', 'debug', 'info', 'warning', 'error', 'assert', 'trace', 'table'].map(level),
    ['log', 'debug', 'info', 'warn', 'error', 'error', 'log', 'log']);
});

test('a console call: its arguments joined, its source, a stack for errors', () => {
  const l = new TabConsole({ now: () => 42 });
  l.onEvent('Runtime.executionContextCreated', { context: { id: 7, origin: 'https://a.test', auxData: { frameId: 'F', isDefault: true } } });
  l.onEvent('Runtime.consoleAPICalled', {
    executionContextId: 7,
    type: 'error',
    args: [{ type: 'string', value: 'bad' }, { type: 'number', value: 3 }, { type: 'object', description: 'Object' }, { type: 'undefined' }],
    stackTrace: { callFrames: [frame('https://a.test/app.js', 4, 9), frame('https://a.test/app.js', 10, 1, '')] },
  }, 2, 'https://a.test/', 'F');
  l.onEvent('Runtime.consoleAPICalled', { type: 'log', args: [{ type: 'string', value: 'hi' }] }, 2, 'https://a.test/');
  const { messages, nav } = l.list(2, 1);
  assert.equal(nav, 2);
  assert.deepEqual(messages[0], {
    id: '1', level: 'error', text: 'bad 3 Object undefined', url: 'https://a.test/app.js', line: 4, column: 9,
    stack: '    at f (https://a.test/app.js:4:9)\n    at <anonymous> (https://a.test/app.js:10:1)',
    page: 'https://a.test/', nav: 2, timeMs: 42, doc: { url: 'https://a.test/', origin: 'https://a.test', main: true },
  });
  assert.equal(messages[1].stack, undefined);
  assert.equal(messages[1].doc, undefined, 'a message of a context never seen names no document');
});

test('a message is the document\'s whose execution context logged it, not its script URL', () => {
  const l = new TabConsole({ now: () => 1 });
  l.onEvent('Runtime.executionContextCreated', { context: { id: 1, origin: 'https://a.test', auxData: { frameId: 'M', isDefault: true } } });
  l.onEvent('Runtime.executionContextCreated', { context: { id: 2, origin: 'https://evil.test', auxData: { frameId: 'E', isDefault: true } } });
  // an about:srcdoc child of the evil frame: its parent's origin
  l.onEvent('Runtime.executionContextCreated', { context: { id: 3, origin: 'https://evil.test', auxData: { frameId: 'S', isDefault: true } } });
  const forged = { callFrames: [frame('https://a.test/app.js', 1, 1)] };
  l.onEvent('Runtime.consoleAPICalled', { executionContextId: 2, type: 'log', args: [{ type: 'string', value: 'x' }], stackTrace: forged }, 1, 'https://a.test/', 'M');
  l.onEvent('Runtime.consoleAPICalled', { executionContextId: 3, type: 'log', args: [{ type: 'string', value: 'y' }] }, 1, 'https://a.test/', 'M');
  l.onEvent('Runtime.exceptionThrown', { exceptionDetails: { executionContextId: 2, text: 'Uncaught', exception: { type: 'string', value: 'z' } } }, 1, 'https://a.test/', 'M');
  l.onEvent('Runtime.executionContextsCleared', {});
  l.onEvent('Runtime.consoleAPICalled', { executionContextId: 1, type: 'log', args: [] }, 1, 'https://a.test/', 'M');
  const ms = l.list(1, 1).messages;
  assert.deepEqual(ms.map((m) => m.doc), [{ origin: 'https://evil.test' }, { origin: 'https://evil.test' }, { origin: 'https://evil.test' }, undefined]);
  assert.equal(ms[0].url, 'https://a.test/app.js', 'the script URL is kept as the source, and decides nothing');
});

test('an uncaught exception and an unhandled rejection', () => {
  const l = new TabConsole();
  l.onEvent('Runtime.exceptionThrown', { exceptionDetails: {
    text: 'Uncaught', exception: { type: 'object', subtype: 'error', description: 'Error: boom\n    at f (https://a.test/a.js:3:9)' },
    stackTrace: { callFrames: [frame('https://a.test/a.js', 3, 9)] },
  } }, 0, 'https://a.test/');
  l.onEvent('Runtime.exceptionThrown', { exceptionDetails: {
    text: 'Uncaught (in promise)', exception: { type: 'string', value: 'nope' }, url: 'https://a.test/', lineNumber: 0, columnNumber: 4,
  } }, 0, 'https://a.test/');
  const [a, b] = l.list(0, 1).messages;
  assert.equal(a.exception, true);
  assert.equal(a.level, 'error');
  assert.equal(a.text, 'Uncaught Error: boom');
  assert.equal(a.stack, '    at f (https://a.test/a.js:3:9)');
  assert.deepEqual([a.url, a.line, a.column], ['https://a.test/a.js', 3, 9]);
  assert.equal(b.text, 'Uncaught (in promise) nope');
  assert.deepEqual([b.url, b.line, b.column], ['https://a.test/', 1, 5]);
});

test('a page that logs a million times, or megabytes at once, stays bounded', () => {
  const l = new TabConsole();
  const huge = 'x'.repeat(10 * 1024 * 1024);
  for (let i = 0; i < 1_000_000; i++) {
    l.onEvent('Runtime.consoleAPICalled', { type: 'log', args: [{ type: 'string', value: i === 0 ? huge : 'm' + i }] }, 1, '');
  }
  l.onEvent('Runtime.exceptionThrown', { exceptionDetails: { exception: { description: 'Error: ' + huge } } }, 1, '');
  const { messages, dropped } = l.list(1, 1);
  assert.equal(messages.length, MAX_ENTRIES);
  assert.equal(dropped, 1_000_000 + 1 - MAX_ENTRIES);
  assert.ok(l.ring.every((m) => m.text.length <= MAX_TEXT && (m.stack || '').length <= MAX_STACK));
  const last = messages[messages.length - 1];
  assert.ok(last.textBytes > 10 * 1024 * 1024 && last.text.length <= MAX_TEXT);
});

test('cut keeps whole characters', () => {
  const s = 'é'.repeat(MAX_TEXT);
  const c = cut(s, MAX_TEXT);
  assert.equal(c.bytes, 2 * MAX_TEXT);
  assert.equal(new TextEncoder().encode(c.text).length, MAX_TEXT);
  assert.deepEqual(cut('short', MAX_TEXT), { text: 'short', bytes: 0 });
});

test('generations: a navigation starts a new listing; old ones are let go', () => {
  const logs = new ConsoleLogs();
  for (let nav = 0; nav < 15; nav++) logs.onEvent(7, 'Runtime.consoleAPICalled', { type: 'log', args: [] }, nav, '');
  logs.onEvent(7, 'Runtime.executionContextCreated', {}, 15, '');
  logs.onEvent(7, 'Runtime.consoleAPICalled', null, 14, ''); // malformed: ignored, never thrown
  assert.equal(logs.tab(7).list(14, 1).messages.length, 2);
  assert.equal(logs.tab(7).list(14, 100).messages.length, 11);
  assert.equal(logs.tab(7).list(15, 1).messages.length, 0);
  logs.forget(7);
  assert.equal(logs.tab(7).list(14, 1).messages.length, 0);
});

test('pdf arguments: paper, scale and ranges checked', () => {
  assert.deepEqual(pdfArgs({ format: 'A4', landscape: true, ranges: '1 - 2, 5' }), {
    landscape: true, printBackground: false, scale: 1, paperWidth: 8.27, paperHeight: 11.7, pageRanges: '1-2,5',
    marginTop: 0.4, marginBottom: 0.4, marginLeft: 0.4, marginRight: 0.4, preferCSSPageSize: false,
  });
  for (const p of [{ format: 'B5' }, { scale: 3 }, { ranges: '1;2' }]) assert.throws(() => pdfArgs(p), { code: 'BAD_ARGS' });
});
