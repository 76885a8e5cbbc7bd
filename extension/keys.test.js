import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCombo, keyEvents, modifierEvents, MOD } from './keys.js';

test('parseCombo reads modifiers from the list and from the key', () => {
  assert.deepEqual(parseCombo('Enter'), { modifiers: [], key: 'Enter' });
  assert.deepEqual(parseCombo('a', ['ctrl']), { modifiers: ['Control'], key: 'a' });
  assert.deepEqual(parseCombo('Control+Shift+a'), { modifiers: ['Control', 'Shift'], key: 'KeyA' });
  assert.deepEqual(parseCombo('+'), { modifiers: [], key: '+' });
  assert.deepEqual(parseCombo('Shift++'), { modifiers: ['Shift'], key: '+' });
  assert.deepEqual(parseCombo('a', ['ControlOrMeta'], true), { modifiers: ['Meta'], key: 'a' });
  assert.deepEqual(parseCombo('é'), { modifiers: [], key: 'é' });
});

test('parseCombo refuses an empty key, an unknown modifier or key name', () => {
  assert.throws(() => parseCombo(''), (e) => e.code === 'BAD_ARGS' && /empty/.test(e.message));
  assert.throws(() => parseCombo('a', ['Hyper']), (e) => e.code === 'BAD_ARGS' && /Hyper/.test(e.message));
  assert.throws(() => parseCombo('Enterr'), (e) => e.code === 'BAD_ARGS' && /Enterr/.test(e.message));
});

test('keyEvents: text keys type text, others are raw, modifiers suppress text', () => {
  const [down, up] = keyEvents('Enter');
  assert.deepEqual(down, { type: 'keyDown', modifiers: 0, windowsVirtualKeyCode: 13, code: 'Enter', key: 'Enter', text: '\r', unmodifiedText: '\r' });
  assert.equal(up.type, 'keyUp');
  assert.equal(keyEvents('ArrowDown')[0].type, 'rawKeyDown');
  assert.equal(keyEvents('A')[0].text, 'A');
  assert.equal(keyEvents('A')[0].code, 'KeyA');
  const shifted = keyEvents('KeyA', ['Shift'])[0];
  assert.deepEqual([shifted.key, shifted.text, shifted.modifiers], ['A', 'A', MOD.Shift]);
  const ctrl = keyEvents('a', ['Control'])[0];
  assert.deepEqual([ctrl.type, ctrl.text, ctrl.modifiers], ['rawKeyDown', undefined, MOD.Control]);
  assert.deepEqual(keyEvents('é'), [{ insertText: 'é' }]);
});

test('modifierEvents press in order and release in reverse', () => {
  const down = modifierEvents(['Control', 'Shift'], true);
  assert.deepEqual(down.map((e) => [e.key, e.modifiers]), [['Control', MOD.Control], ['Shift', MOD.Control | MOD.Shift]]);
  const up = modifierEvents(['Control', 'Shift'], false);
  assert.deepEqual(up.map((e) => [e.key, e.modifiers]), [['Shift', MOD.Control], ['Control', 0]]);
});

test('keyTypes: characters, Space, Backspace and Delete type; Enter, Tab and shortcuts do not', async () => {
  const { keyTypes } = await import('./keys.js');
  for (const k of ['a', 'KeyA', 'Digit1', '/', ' ', 'Space', 'Backspace', 'Delete', 'é']) {
    assert.equal(keyTypes(parseCombo(k)), true, k);
  }
  assert.equal(keyTypes(parseCombo('a', ['Shift'])), true, 'Shift+a');
  for (const [k, mods] of [['Enter', []], ['Tab', []], ['ArrowDown', []], ['a', ['Control']], ['Escape', []], ['F5', []]]) {
    assert.equal(keyTypes(parseCombo(k, mods)), false, mods.concat(k).join('+'));
  }
});

test('parseCombo names an unknown key', () => {
  assert.throws(() => parseCombo('Entr'), (e) => e.code === 'BAD_ARGS' && /"Entr"/.test(e.message));
});
