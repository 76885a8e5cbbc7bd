import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decode, encode, frames, validate, CLOSE, MAX_FRAME_BYTES } from './frame.js';

test('frames round-trip through encode and decode', () => {
  const cases = [
    frames.hello({ token: 'ab'.repeat(32) }, { id: 'x', version: '0.1.0', browser: 'UA' }),
    frames.hello({ code: 'ABCD-EFGH' }, { id: 'x', version: '0.1.0', browser: 'UA' }),
    frames.result('c1', { tabId: '3', url: 'https://example.com/', dialogs: [{ type: 'alert', message: 'é ✓', action: 'accepted' }] }),
    frames.result('c2', [1, 'two', null, true]),
    frames.error('c3', { code: 'TIMEOUT', message: 'slow', hint: 'retry' }),
    frames.ping('p1'),
    frames.pong('p1'),
    frames.event('tabClosed', { tabId: '9' }),
    { v: 1, type: 'command', id: 'c4', method: 'click', tabId: '', params: { selector: '#a' }, timeoutMs: 30000 },
  ];
  for (const f of cases) {
    const { frame, error } = decode(encode(f));
    assert.equal(error, undefined);
    assert.deepEqual(frame, f);
  }
});

test('encode adds v and a result without data carries {}', () => {
  assert.deepEqual(JSON.parse(encode({ type: 'pong', id: 'p' })), { v: 1, type: 'pong', id: 'p' });
  assert.deepEqual(JSON.parse(encode(frames.result('c', undefined))), { v: 1, type: 'result', id: 'c', data: {} });
});

test('decode rejects what is not a v1 frame object, with close 4400', () => {
  const bad = [
    ['[1,2]', /not a JSON object/],
    ['"hello"', /not a JSON object/],
    ['null', /not a JSON object/],
    ['42', /not a JSON object/],
    ['{"v":2,"type":"ping","id":"p"}', /version 2/],
    ['{"v":"1","type":"ping","id":"p"}', /version "1"/],
    ['{"type":"ping","id":"p"}', /version undefined/],
    ['{"v":1}', /no type/],
    ['{"v":1,"type":"command","method":"tabs"}', /no id/],
    ['{"v":1,"type":"command","id":"c"}', /no method/],
    ['{v:1}', /not valid JSON/],
    ['', /not valid JSON/],
  ];
  for (const [text, re] of bad) {
    const r = decode(text);
    assert.equal(r.frame, undefined, text);
    assert.match(r.error, re, text);
    assert.equal(r.close, CLOSE.PROTOCOL);
  }
  assert.match(decode(new ArrayBuffer(4)).error, /not a text message/);
});

test('decode rejects an oversized frame before parsing it', () => {
  const big = JSON.stringify({ v: 1, type: 'event', event: 'x', data: 'a'.repeat(200) });
  assert.match(decode(big, 100).error, /over the 100 byte limit/);
  // multi-byte text counts in UTF-8 bytes
  const wide = JSON.stringify({ v: 1, type: 'event', event: 'x', data: '✓'.repeat(40) });
  assert.ok(wide.length < 100);
  assert.match(decode(wide, 100).error, /over the/);
  assert.ok(decode(big).frame, 'the default limit is far above a small frame');
  assert.equal(MAX_FRAME_BYTES, 64 * 1024 * 1024);
});

test('unknown frame types are valid (forward compatible)', () => {
  assert.equal(validate({ v: 1, type: 'futureThing', anything: 1 }), '');
});

test('encode refuses a malformed frame or one with no JSON form', () => {
  assert.throws(() => encode({ type: 'result' }), /no id/);
  assert.throws(() => encode({ type: 'result', id: 'x', data: 1n }));
});
