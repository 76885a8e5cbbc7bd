// Every event the extension's sources emit is one of protocol v1's EVENTS
// (methods.js), which the server's own list is tested against in Go: an
// event added on one side only fails a test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { EVENTS } from './methods.js';

const dir = new URL('.', import.meta.url);
const sources = readdirSync(dir).filter((f) => f.endsWith('.js') && !f.endsWith('.test.js') && f !== 'fakecdp.js');

test('every emitted event is in EVENTS, and every event in EVENTS is emitted', () => {
  const seen = new Set();
  for (const f of sources) {
    const src = readFileSync(new URL(f, dir), 'utf8');
    for (const m of src.matchAll(/\b(?:emit|conn\.event)\(\s*'([A-Za-z]+)'/g)) {
      assert.ok(EVENTS.includes(m[1]), `${f} emits '${m[1]}', which EVENTS does not list`);
      seen.add(m[1]);
    }
  }
  assert.deepEqual([...seen].sort(), [...EVENTS].sort(), 'an event in EVENTS that no source emits');
});
