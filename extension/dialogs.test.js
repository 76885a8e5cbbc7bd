import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as dialogs from './dialogs.js';
import { WireError } from './errors.js';
import { fakeTab } from './fakecdp.js';

// Dialogs are never answered for the caller: a call on a tab races its
// work against a dialog opening, driven here by fake dialog events.

const confirmEvent = { type: 'confirm', message: 'Delete all 1,204 records? This cannot be undone.', url: 'http://a.test/' };

const never = () => new Promise(() => {});

async function rejection(p) {
  try {
    await p;
  } catch (e) {
    return e;
  }
  assert.fail('the call did not fail');
}

test('a dialog is recorded open, with a prompt\'s default, and reported once', () => {
  const { st } = fakeTab();
  const rec = dialogs.record({ type: 'prompt', message: 'name?', defaultPrompt: 'anon', url: 'http://a.test/' });
  assert.deepEqual(rec, { type: 'prompt', message: 'name?', action: 'open', url: 'http://a.test/', default: 'anon' });
  assert.equal(dialogs.opened(st, rec), true);
  assert.equal(st.dialog, rec);
  assert.deepEqual(st.dialogs, [rec]);
  // A second one while the first is held: the first was answered by
  // someone else (a blocked page cannot open another); the new one holds.
  assert.equal(dialogs.opened(st, dialogs.record(confirmEvent)), true);
  assert.equal(st.dialog.type, 'confirm');
  dialogs.closed(st);
  assert.equal(st.dialog, null);
  // A tab being left (leaveDialog) holds none.
  st.leaving = 1;
  assert.equal(dialogs.opened(st, dialogs.record(confirmEvent)), false);
});

test('a read that opens a dialog fails with DIALOG_OPEN, its words in page, the tab named for the Go side', async () => {
  const { st, c } = fakeTab({ tabId: 12 });
  const p = dialogs.race(c, dialogs.READ, 'eval', never());
  dialogs.opened(st, dialogs.record(confirmEvent));
  const e = await rejection(p);
  assert.ok(e instanceof WireError);
  assert.equal(e.code, 'DIALOG_OPEN');
  assert.match(e.message, /^eval opened a confirm dialog/);
  assert.equal(e.page, 'confirm: "Delete all 1,204 records? This cannot be undone."');
  assert.match(e.hint, /dialog_answer \{tab_id: "\{tab:12\}", accept: true\|false\}/);
  assert.doesNotMatch(e.message + e.hint, /Delete/, 'the page\'s words only in page');
  assert.deepEqual(st.dialogs, [], 'told by the error, not again by a later result');
});

test('an action that opens a dialog returns with it open', async () => {
  const { st, c } = fakeTab();
  const p = dialogs.race(c, dialogs.ACT, 'click', never());
  dialogs.opened(st, dialogs.record(confirmEvent));
  assert.equal(await p, undefined);
  assert.equal(st.dialogs.length, 1, 'reported by the call\'s page state');
});

test('work that finishes within the grace keeps its result; a failure caused by the dialog is the dialog', async () => {
  const { st, c } = fakeTab();
  let finish;
  const p = dialogs.race(c, dialogs.READ, 'eval', new Promise((r) => (finish = r)));
  dialogs.opened(st, dialogs.record(confirmEvent));
  finish(42);
  assert.equal(await p, 42);

  const t2 = fakeTab();
  let fail;
  const p2 = dialogs.race(t2.c, dialogs.ACT, 'navigate', new Promise((_, r) => (fail = r)));
  dialogs.opened(t2.st, dialogs.record({ type: 'beforeunload', message: '', url: 'http://a.test/' }));
  fail(new Error('Navigation interrupted'));
  assert.equal(await p2, undefined);
});

test('an answer is not interrupted by the dialog it answers, but is by a new one', async () => {
  const { st, c } = fakeTab();
  dialogs.opened(st, dialogs.record(confirmEvent));
  let finish;
  const p = dialogs.race(c, dialogs.ANSWER, 'dialog_answer', new Promise((r) => (finish = r)));
  await new Promise((r) => setTimeout(r, dialogs.DIALOG_GRACE * 2));
  finish('answered');
  assert.equal(await p, 'answered');

  st.dialog = null; // answered
  const p2 = dialogs.race(c, dialogs.ANSWER, 'dialog_answer', never());
  dialogs.opened(st, dialogs.record({ type: 'alert', message: 'again', url: 'http://a.test/' }));
  assert.equal(await p2, undefined);
});

test('a call held by another tab\'s dialog says so, naming the tab and not the words', async () => {
  const { c } = fakeTab();
  let other = null;
  const watchers = new Set();
  const p = dialogs.race(c, dialogs.READ, 'get_text', never(), {
    elsewhere: () => other,
    watch: (fn) => {
      watchers.add(fn);
      return () => watchers.delete(fn);
    },
  });
  other = ['9', { type: 'alert', message: 'SECRET of the popup' }];
  for (const fn of watchers) fn();
  const start = Date.now();
  const e = await rejection(p);
  assert.ok(Date.now() - start >= dialogs.ELSEWHERE_GRACE - 50);
  assert.equal(e.code, 'DIALOG_OPEN');
  assert.match(e.message, /tab \{tab:9\} has an open alert dialog/);
  assert.doesNotMatch(e.message + e.hint + e.page, /SECRET/);
  assert.equal(watchers.size, 0, 'the watcher is removed');
});

test('a call that finishes is not held by another tab\'s dialog', async () => {
  const { c } = fakeTab();
  const p = dialogs.race(c, dialogs.READ, 'get_text', Promise.resolve('text'), { elsewhere: () => ['9', { type: 'alert', message: 'x' }] });
  assert.equal(await p, 'text');
});

test('hints say the next call for each kind of dialog', () => {
  assert.match(dialogs.hint('3', 'beforeunload', 'navigate'), /accept leaves the page and lets the navigation go on, dismiss stays; then call navigate again/);
  assert.match(dialogs.hint('3', 'prompt', ''), /prompt_text/);
  assert.equal(dialogs.words({ type: 'prompt', message: 'name?', default: 'anon' }), 'prompt: "name?" (default "anon")');
});

test('leaving a page dismisses its dialog, never accepts it', async () => {
  const { st } = fakeTab();
  dialogs.opened(st, dialogs.record(confirmEvent));
  const sent = [];
  await dialogs.leave(st, async (args) => sent.push(args));
  assert.deepEqual(sent, [{ accept: false }]);
  assert.equal(st.dialog, null);
});

test('an action held by another tab\'s dialog says it may have acted; one that opened during it is its result', async () => {
  const t0 = fakeTab();
  let other = null;
  const p = dialogs.race(t0.c, dialogs.ACT, 'click', never(), { elsewhere: () => other, watch: (fn) => ((other = ['9', { type: 'alert', message: 'x' }]), fn(), () => {}) });
  assert.equal(await p, undefined);
  const { c } = fakeTab();
  const e = await rejection(dialogs.race(c, dialogs.ACT, 'click', never(), { elsewhere: () => ['9', { type: 'confirm', message: 'x' }] }));
  assert.match(e.message, /^click may have acted, but tab \{tab:9\} has an open confirm dialog/);
  assert.match(e.hint, /check the page before acting again/);
});

test('the closing of the extension\'s own answer does not close the next dialog; the user\'s answer does', async () => {
  const { st } = fakeTab();
  dialogs.opened(st, dialogs.record(confirmEvent));
  st.dialog = null;
  await dialogs.answer(st, async () => {}, { accept: false });
  dialogs.opened(st, dialogs.record({ type: 'confirm', message: 'again', url: 'http://a.test/' }));
  dialogs.closed(st); // the first one's, late
  assert.equal(st.dialog && st.dialog.message, 'again');
  dialogs.closed(st); // the user answered it in the window
  assert.equal(st.dialog, null);
  // An answer that finds nothing showing expects no closing.
  await assert.rejects(dialogs.answer(st, async () => { throw new Error('No dialog is showing'); }, { accept: true }));
  assert.equal(st.closing, 0);
});

test('a call on a page that still answers is not held by another tab\'s dialog', async () => {
  const { c } = fakeTab();
  let probes = 0;
  const work = new Promise((r) => setTimeout(() => r('slow but done'), dialogs.ELSEWHERE_GRACE + 300));
  const p = dialogs.race(c, dialogs.READ, 'wait_for', work, {
    elsewhere: () => ['9', { type: 'alert', message: 'x' }],
    responsive: async () => (probes++, true),
  });
  assert.equal(await p, 'slow but done');
  assert.ok(probes >= 1, 'the page was probed');
});
