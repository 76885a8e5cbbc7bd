// Trusted input: mouse, keys, text and drags dispatched through the tab's
// CDP sender (csend, tabstate.js), as Playwright's input is.

import { frameDoc, senderOf, tokenOf } from './frames.js';
import { fail } from './errors.js';
import { keyEvents, keyDefinition, modifierEvents } from './keys.js';
import { aborted } from './deadline.js';
import { csend } from './tabstate.js';
import { targetOp } from './targets.js';
import { inWorld, fnDecl } from './world.js';

export const BUTTONS = { left: 1, right: 2, middle: 4 };

export function checkButton(b) {
  const name = String(b || 'left').toLowerCase();
  if (!(name in BUTTONS)) throw fail('BAD_ARGS', `button ${JSON.stringify(b)} is not one of left, right, middle`);
  return name;
}

// mouse dispatches one mouse event and remembers where the pointer is: a
// wheel turns where the pointer last was, as Playwright's does.
export async function mouse(c, type, x, y, extra = {}) {
  await csend(c, 'Input.dispatchMouseEvent', { type, x, y, ...extra });
  c.st.pointer = { x, y };
}

export async function click(c, p, button = 'left', count = 1) {
  await mouse(c, 'mouseMoved', p.x, p.y);
  for (let i = 1; i <= count; i++) {
    await mouse(c, 'mousePressed', p.x, p.y, { button, buttons: BUTTONS[button], clickCount: i });
    await mouse(c, 'mouseReleased', p.x, p.y, { button, buttons: 0, clickCount: i });
  }
}

export async function dispatchKeys(c, events) {
  for (const e of events) {
    if (e.insertText !== undefined) await csend(c, 'Input.insertText', { text: e.insertText });
    else await csend(c, 'Input.dispatchKeyEvent', e);
  }
}

export async function typeText(c, text) {
  for (const ch of text) {
    aborted(c.ctx);
    await dispatchKeys(c, keyDefinition(ch) ? keyEvents(ch) : [{ insertText: ch }]);
  }
}

export async function pressCombo(c, combo) {
  await dispatchKeys(c, modifierEvents(combo.modifiers, true));
  const evs = keyEvents(combo.key, combo.modifiers);
  await dispatchKeys(c, evs);
  await dispatchKeys(c, modifierEvents(combo.modifiers, false));
}

// fill replaces an element's value: set directly by the script for inputs
// whose value is not typed, else inserted over the selected content as one
// trusted input event (Delete for an empty value), as Playwright's fill.
export async function fillTarget(c, what, target, value) {
  const r = await targetOp(c, what, target, 'fill', { value });
  if (r.done) return;
  if (value === '') await pressCombo(c, { modifiers: [], key: 'Delete' });
  else await csend(c, 'Input.insertText', { text: value });
}

function pageFrames() {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, 100);
    requestAnimationFrame(() => requestAnimationFrame(() => {
      clearTimeout(t);
      resolve();
    }));
  });
}

// dragPoints drags with trusted mouse events from one point to another in
// steps; when the page starts an HTML drag, Chrome hands it over
// (Input.dragIntercepted) and the drag is finished with drag events.
// beforeDrop, if given, runs before anything is dropped or released at to;
// when it throws, the drag goes back and is released where it started.
export async function dragPoints(c, from, to, beforeDrop) {
  c.st.drag = null;
  await csend(c, 'Input.setInterceptDrags', { enabled: true });
  try {
    await mouse(c, 'mouseMoved', from.x, from.y);
    await mouse(c, 'mousePressed', from.x, from.y, { button: 'left', buttons: 1, clickCount: 1 });
    for (let i = 1; i <= 2; i++) {
      await mouse(c, 'mouseMoved', from.x + (5 * i) / 2, from.y + (5 * i) / 2, { button: 'left', buttons: 1 });
    }
    await inWorld(c.st, fnDecl(pageFrames), []);
    const sx = from.x + 5;
    const sy = from.y + 5;
    const data = c.st.drag;
    for (let i = 1; i <= 5; i++) {
      const x = sx + ((to.x - sx) * i) / 5;
      const y = sy + ((to.y - sy) * i) / 5;
      if (data) await csend(c, 'Input.dispatchDragEvent', { type: i === 1 ? 'dragEnter' : 'dragOver', x, y, data });
      else await mouse(c, 'mouseMoved', x, y, { button: 'left', buttons: 1 });
    }
    if (beforeDrop) {
      try {
        await beforeDrop();
      } catch (e) {
        if (data) await csend(c, 'Input.dispatchDragEvent', { type: 'dragCancel', x: from.x, y: from.y, data }).catch(() => {});
        await mouse(c, 'mouseMoved', from.x, from.y, { button: 'left', buttons: 1 });
        await mouse(c, 'mouseReleased', from.x, from.y, { button: 'left', buttons: 0, clickCount: 1 });
        throw e;
      }
    }
    if (data) {
      await csend(c, 'Input.dispatchDragEvent', { type: 'drop', x: to.x, y: to.y, data });
    }
    await mouse(c, 'mouseReleased', to.x, to.y, { button: 'left', buttons: 0, clickCount: 1 });
  } finally {
    c.st.drag = null;
    await csend(c, 'Input.setInterceptDrags', { enabled: false }).catch(() => {});
  }
}

// insertGuarded puts a text holding an operator's secret into the target
// in one step, with the server's insert script run on the element itself:
// only while the element's document is of origin (the one the policy
// allowed) and the element holds the focus. Never key by key. arg is the
// script's: {text, origin, replace, shown} (shown marks the field, see the
// server's SecretMark), or {unmark: true}, which takes the mark off.
export async function insertGuarded(c, what, target, arg) {
  const src = await c.st.store.serverScript('insert');
  const obj = await targetOp(c, what, target, 'element', {}, { byValue: false });
  // the element's own session: a frame's, for a frame's ref
  const fd = target.ref ? frameDoc(c.st, tokenOf(target.ref)) : null;
  const send = fd ? senderOf(c.st, fd) : (m, a) => csend(c, m, a);
  let r;
  try {
    r = await send('Runtime.callFunctionOn', {
      functionDeclaration: `function (arg) { return (${src})(this, arg); }`,
      objectId: obj.objectId,
      arguments: [{ value: arg }],
      returnByValue: true,
    });
  } finally {
    send('Runtime.releaseObject', { objectId: obj.objectId }).catch(() => {});
  }
  const v = (r && r.result && r.result.value) || {};
  if (v.done) return;
  const where = target.ref ? `ref ${target.ref}` : target.selector;
  if (v.error === 'notfillable') throw fail('BAD_ARGS', `${what} on ${where}: ${v.why}`);
  if (v.error === 'guard') {
    throw fail('POLICY_DENIED', `${what} on ${where}: the secret was not typed: ${v.why}`,
      'nothing was typed; look at the page (snapshot) and retry on the field of the page the secret is bound to');
  }
  throw fail('INTERNAL', `${what} on ${where}: the insert script gave no answer`);
}
