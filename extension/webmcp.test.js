import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boundEvent, boundValue, OUTPUT_MAX, SCHEMA_MAX } from './webmcp.js';

test('a page tool result over the bound is cut, and says how long it was', () => {
  const big = 'x'.repeat(OUTPUT_MAX * 3);
  const ev = boundEvent('WebMCP.toolResponded', { invocationId: 'i', status: 'Completed', output: { content: [{ type: 'text', text: big }] } });
  assert.equal(ev.invocationId, 'i');
  assert.equal(ev.outputCut, JSON.stringify({ content: [{ type: 'text', text: big }] }).length);
  assert.ok(JSON.stringify(ev.output).length <= OUTPUT_MAX + 64);
  assert.equal(ev.output.content[0].type, 'text');
});

test('a small result passes as it is', () => {
  const ev = boundEvent('WebMCP.toolResponded', { invocationId: 'i', status: 'Completed', output: 5 });
  assert.equal(ev.output, 5);
  assert.equal(ev.outputCut, undefined);
});

test('a cyclic or deep value does not throw', () => {
  const a = {};
  a.a = a;
  assert.equal(boundValue(a, 100).cut, true);
  let deep = 'end';
  for (let i = 0; i < 5000; i++) deep = [deep];
  const b = boundValue(deep, 100);
  assert.equal(b.cut, true);
  assert.ok(JSON.stringify(b.value).length < 400);
});

test('registered tools: texts cut, a huge schema dropped, at most 200', () => {
  const tools = Array.from({ length: 500 }, (_, i) => ({ name: 't' + i, description: 'd'.repeat(20000), inputSchema: { type: 'object', enum: Array.from({ length: SCHEMA_MAX }, (_, j) => j) } }));
  const ev = boundEvent('WebMCP.toolsAdded', { tools });
  assert.equal(ev.tools.length, 200);
  assert.ok(ev.tools[0].description.length <= 2001);
  assert.equal(ev.tools[0].inputSchema, undefined);
  assert.equal(ev.tools[0].schemaTooLarge, true);
});

test('a call\'s own bound is smaller', () => {
  const ev = boundEvent('WebMCP.toolResponded', { status: 'Completed', output: 'z'.repeat(5000) }, 1000);
  assert.equal(ev.outputCut, 5002);
  assert.ok(ev.output.length <= 1001);
});
