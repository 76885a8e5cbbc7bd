// Key definitions for Input.dispatchKeyEvent (a US keyboard, as Playwright
// uses), and the parsing of a press's key and modifiers. Pure.

import { fail } from './errors.js';

// Modifier bits of Input.dispatchKeyEvent / dispatchMouseEvent.
export const MOD = Object.freeze({ Alt: 1, Control: 2, Meta: 4, Shift: 8 });

const MODIFIER_NAMES = {
  alt: 'Alt', option: 'Alt',
  control: 'Control', ctrl: 'Control',
  meta: 'Meta', cmd: 'Meta', command: 'Meta', super: 'Meta',
  shift: 'Shift',
  controlormeta: 'ControlOrMeta',
};

// name -> {key, code, keyCode, text?, shiftKey?, location?}
const LAYOUT = new Map();

function def(code, keyCode, key, shiftKey, text, location) {
  const d = { key, code, keyCode };
  if (shiftKey !== undefined) d.shiftKey = shiftKey;
  if (text !== undefined) d.text = text;
  if (location) d.location = location;
  LAYOUT.set(code, d);
  if (!LAYOUT.has(key)) LAYOUT.set(key, d);
  if (shiftKey !== undefined && !LAYOUT.has(shiftKey)) LAYOUT.set(shiftKey, { ...d, key: shiftKey, text: text !== undefined ? shiftKey : undefined, shifted: true });
}

for (let i = 0; i < 26; i++) {
  const c = String.fromCharCode(97 + i);
  def('Key' + c.toUpperCase(), 65 + i, c, c.toUpperCase(), c);
}
')!@#$%^&*('.split('').forEach((s, i) => def('Digit' + i, 48 + i, String(i), s, String(i)));
[
  ['Minus', 189, '-', '_'], ['Equal', 187, '=', '+'], ['BracketLeft', 219, '[', '{'], ['BracketRight', 221, ']', '}'],
  ['Backslash', 220, '\\', '|'], ['Semicolon', 186, ';', ':'], ['Quote', 222, "'", '"'], ['Backquote', 192, '`', '~'],
  ['Comma', 188, ',', '<'], ['Period', 190, '.', '>'], ['Slash', 191, '/', '?'],
].forEach(([code, kc, k, s]) => def(code, kc, k, s, k));
def('Space', 32, ' ', undefined, ' ');
def('Enter', 13, 'Enter', undefined, '\r');
LAYOUT.set('\n', LAYOUT.get('Enter'));
LAYOUT.set('\r', LAYOUT.get('Enter'));
def('Tab', 9, 'Tab');
LAYOUT.set('\t', LAYOUT.get('Tab'));
[
  ['Backspace', 8], ['Delete', 46], ['Escape', 27], ['ArrowLeft', 37], ['ArrowUp', 38], ['ArrowRight', 39],
  ['ArrowDown', 40], ['Home', 36], ['End', 35], ['PageUp', 33], ['PageDown', 34], ['Insert', 45],
  ['CapsLock', 20], ['Pause', 19], ['ContextMenu', 93], ['NumLock', 144], ['ScrollLock', 145], ['PrintScreen', 44],
].forEach(([k, kc]) => def(k, kc, k));
for (let i = 1; i <= 12; i++) def('F' + i, 111 + i, 'F' + i);
def('ShiftLeft', 16, 'Shift', undefined, undefined, 1);
def('ControlLeft', 17, 'Control', undefined, undefined, 1);
def('AltLeft', 18, 'Alt', undefined, undefined, 1);
def('MetaLeft', 91, 'Meta', undefined, undefined, 1);
LAYOUT.set('Esc', LAYOUT.get('Escape'));

// keyDefinition returns how to dispatch one key name (a key such as
// "Enter" or "a", or a code such as "KeyA"), or null when the layout lacks it.
export function keyDefinition(name) {
  return LAYOUT.get(name) || null;
}

// normalizeModifier maps a modifier's many names to Alt, Control, Meta or
// Shift; ControlOrMeta is Meta on macOS, else Control.
export function normalizeModifier(m, isMac = false) {
  const n = MODIFIER_NAMES[String(m).toLowerCase()];
  if (!n) return '';
  if (n === 'ControlOrMeta') return isMac ? 'Meta' : 'Control';
  return n;
}

// parseCombo turns a press's key ("Enter", "Control+Shift+A", "+") and
// modifiers into the modifiers to hold and the key to press. It throws
// BAD_ARGS for an empty key, an unknown modifier or an unknown key.
export function parseCombo(key, modifiers = [], isMac = false) {
  if (typeof key !== 'string' || key === '') {
    throw fail('BAD_ARGS', 'key is empty', 'pass a key such as Enter, Tab, ArrowDown, a or F5');
  }
  const held = [];
  const add = (m) => {
    const n = normalizeModifier(m, isMac);
    if (!n) throw fail('BAD_ARGS', `modifier ${JSON.stringify(m)} is not one of Alt, Control, Meta, Shift`);
    if (!held.includes(n)) held.push(n);
  };
  for (const m of modifiers || []) add(m);
  // "Control+a" in the key itself, as Playwright reads it; "+" alone is a key.
  let parts = key === '+' ? ['+'] : key.split('+');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts = [...parts.slice(0, -2), '+'];
  const last = parts.pop();
  for (const m of parts) add(m);
  let name = last;
  // Shift+a is what a keyboard does for "A": press KeyA with Shift held.
  if (held.includes('Shift') && name.length === 1 && name >= 'a' && name <= 'z') name = 'Key' + name.toUpperCase();
  const d = keyDefinition(name);
  if (!d && [...name].length !== 1) {
    throw fail('BAD_ARGS', `key ${JSON.stringify(last)} is not a key name`, 'use a key such as Enter, Tab, Escape, ArrowDown, Backspace, F5, a or KeyA');
  }
  return { modifiers: held, key: name };
}

// modifierMask is the bit mask of held modifiers.
export function modifierMask(held) {
  return held.reduce((m, n) => m | (MOD[n] || 0), 0);
}

// keyEvents returns the Input.dispatchKeyEvent parameters pressing key
// with held modifiers produces: keyDown (or rawKeyDown when no text) then
// keyUp. A character outside the layout is {insertText}.
export function keyEvents(name, held = []) {
  const mask = modifierMask(held);
  const base = keyDefinition(name);
  if (!base) return [{ insertText: name }];
  let d = base;
  const shift = held.includes('Shift');
  if (shift && base.shiftKey !== undefined && !base.shifted) d = { ...base, key: base.shiftKey, text: base.text !== undefined ? base.shiftKey : undefined };
  // With a modifier other than Shift held, keys type no text (Control+a selects).
  const otherMods = held.some((m) => m !== 'Shift');
  const text = otherMods ? undefined : d.text;
  const common = { modifiers: mask, windowsVirtualKeyCode: d.keyCode, code: d.code, key: d.key };
  if (d.location) common.location = d.location;
  const down = { type: text ? 'keyDown' : 'rawKeyDown', ...common };
  if (text) {
    down.text = text;
    down.unmodifiedText = text;
  }
  return [down, { type: 'keyUp', ...common }];
}

// modifierEvents returns the key events that press (down) or release the
// held modifiers, in order, with the mask growing or shrinking as a
// keyboard's would.
export function modifierEvents(held, down) {
  const out = [];
  const order = down ? held : [...held].reverse();
  let mask = down ? 0 : modifierMask(held);
  for (const m of order) {
    const d = keyDefinition(m);
    if (down) mask |= MOD[m];
    else mask &= ~MOD[m];
    out.push({ type: down ? 'rawKeyDown' : 'keyUp', modifiers: mask, windowsVirtualKeyCode: d.keyCode, code: d.code, key: d.key, location: d.location });
  }
  return out;
}

// keyTypes reports whether pressing combo (parseCombo's result) would type
// or delete text in a field — a character, Space, Backspace or Delete with
// no modifier but Shift — as opposed to a key a read-only field also takes
// (Tab, Enter, arrows, shortcuts). press refuses the former on a read-only
// field.
export function keyTypes(combo) {
  if (combo.modifiers.some((m) => m !== 'Shift')) return false;
  if (combo.key === 'Backspace' || combo.key === 'Delete') return true;
  const d = keyDefinition(combo.key);
  if (!d) return true; // a character outside the layout is inserted as text
  return d.text !== undefined && d.key !== 'Enter';
}
