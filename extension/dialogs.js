// JavaScript dialogs (alert, confirm, prompt, beforeunload), decided by the
// caller, never defaulted: the semantics of the Go CDP backend
// (executor/cdp/dialog.go). A dialog stays open, its page waiting, until
// the server answers it (answerDialog); while it is open the page's
// renderer is blocked (Runtime.evaluate, Input.dispatchMouseEvent and a
// load's milestones wait for it), so a call races its work against "a
// dialog opened on this tab" (race), and a call on a tab with an open
// dialog fails at once with DIALOG_OPEN. Pure: a TabState (tabstate.js)
// and the call's context are all it touches.

import { fail } from './errors.js';

// DIALOG_GRACE is how long a call whose tab just opened a dialog still
// waits for its own work: a dialog a handler opens after the action's own
// work is not a reason to lose the action's result.
export const DIALOG_GRACE = 100;

// ELSEWHERE_GRACE is how long a call waits while another driven tab has a
// dialog open before it says so (at most half the time the call has
// left): a page in that tab's renderer (its opener, a same-site popup) is
// blocked by it too.
export const ELSEWHERE_GRACE = 1000;

// The kinds of call (what a dialog the call raises means to it).
export const READ = 'read'; // the result is lost: DIALOG_OPEN
export const ACT = 'act'; // the dialog is the action's result, reported open
export const ANSWER = 'answer'; // runs with the dialog open: answers it

// record is the Executor's Dialog for a Page.javascriptDialogOpening event.
export function record(params) {
  const rec = { type: String(params.type || ''), message: String(params.message || ''), action: 'open', url: String(params.url || '') };
  if (rec.type === 'prompt' && params.defaultPrompt) rec.default = String(params.defaultPrompt);
  return rec;
}

// opened keeps a dialog as open on its tab (and reported by the tab's next
// result). A page blocked on a dialog cannot open another, so one the tab
// still holds was answered by someone else (another debugger client, the
// user): the new one takes its place. It returns false for a tab being
// left (leaveDialog): the caller dismisses that one.
export function opened(st, rec) {
  if (st.leaving > 0) return false;
  st.dialog = rec;
  st.dialogSeq += 1;
  if (st.dialogs.length >= 50) st.dialogs.shift();
  st.dialogs.push(rec);
  st.notify();
  return true;
}

// answer sends Page.handleJavaScriptDialog (send) for the tab's dialog:
// the Page.javascriptDialogClosed it causes is expected, and does not
// close the dialog the page may open next (it can come after that one's
// opening).
export async function answer(st, send, args) {
  st.closing += 1;
  try {
    await send(args);
  } catch (e) {
    st.closing -= 1; // nothing was showing: no event follows
    throw e;
  }
}

// closed handles a Page.javascriptDialogClosed: one of the extension's own
// answers, or the user answering the dialog in their window, which the
// tab then no longer holds.
export function closed(st) {
  if (st.closing > 0) {
    st.closing -= 1;
    return;
  }
  if (!st.dialog) return;
  st.dialog = null;
  st.notify();
}

// leave dismisses the tab's open dialog, if any, for a navigation off its
// page (NavigateParams.leaveDialog); send is Page.handleJavaScriptDialog.
export async function leave(st, send) {
  if (!st.dialog) return;
  st.dialog = null;
  await answer(st, send, { accept: false }).catch(() => {});
}

// words is a dialog's words as a fenced note shows them (executor.DialogWords).
export function words(d) {
  if (d.type === 'prompt' && d.default) return `${d.type}: ${JSON.stringify(d.message)} (default ${JSON.stringify(d.default)})`;
  return `${d.type}: ${JSON.stringify(d.message)}`;
}

// tabRef names a raw tab id in an error's words, for the Go side to stamp
// (executor/ext stamps every {tab:N} of a DIALOG_OPEN error with the
// session's id of tab N).
export function tabRef(id) {
  return `{tab:${String(id).replace(/[^0-9]/g, '')}}`;
}

// hint says what to call next about a dialog open on raw tab id
// (executor.DialogHint).
export function hint(id, type, what) {
  let h = `answer it: dialog_answer {tab_id: "${tabRef(id)}", accept: true|false}`;
  if (type === 'prompt') h += ' (prompt_text to type an answer)';
  if (type === 'beforeunload') h += '; accept leaves the page and lets the navigation go on, dismiss stays';
  if (what) h += `; then call ${what.split(' ')[0]} again if it is still needed`;
  return h;
}

// openError is the DIALOG_OPEN error of a call on raw tab id, whose page
// waits on d (raised: the call itself opened it). The dialog's words are
// the page's: in page.
export function openError(what, id, d, raised) {
  const msg = raised
    ? `${what} opened ${d.type === 'alert' ? 'an' : 'a'} ${d.type} dialog: the page waits for an answer and the call's result is lost`
    : `${what}: the page waits for an answer to a ${d.type} dialog and can do nothing else until then`;
  return fail('DIALOG_OPEN', msg, hint(id, d.type, what), words(d));
}

// elsewhereError is the DIALOG_OPEN error of a call held by a dialog on
// another tab: that tab and the dialog's type, never its words (a call on
// that tab tells them, decided on its page).
export function elsewhereError(what, id, d, kind = READ) {
  if (kind === ACT) {
    // The action may have been done (a click that opened the popup whose
    // dialog now holds the page): not one to repeat blindly.
    return fail('DIALOG_OPEN', `${what} may have acted, but tab ${tabRef(id)} has an open ${d.type} dialog, which holds this page too (they share a renderer)`,
      hint(id, d.type, '') + '; then check the page before acting again');
  }
  return fail('DIALOG_OPEN', `${what}: tab ${tabRef(id)} has an open ${d.type} dialog, which holds this page too (they share a renderer)`,
    hint(id, d.type, what));
}

// PROBE_MS bounds the probe of whether a page answers at all.
export const PROBE_MS = 300;

// race settles with work, or as soon as a dialog opens on the call's tab
// (a READ call rejects with DIALOG_OPEN, the others resolve: the dialog is
// in their page state), or, while another tab holds a dialog
// (elsewhere() returns [id, dialog] of one), after ELSEWHERE_GRACE with
// DIALOG_OPEN naming it. work left behind settles on its own, its result
// dropped. watch(fn) registers fn for dialogs opening on any tab and
// returns its removal. responsive() says whether the call's page answers a
// script now (no page that shares the held tab's renderer does).
export function race(c, kind, what, work, { elsewhere = () => null, watch = () => () => {}, responsive = async () => false } = {}) {
  const st = c.st;
  const seq = st.dialogSeq;
  // A dialog another tab already held when the call began may have kept it
  // from acting; one that opened during an action is the action's
  // consequence (a click that opened a popup that asks something).
  const heldBefore = !!elsewhere();
  return new Promise((resolve, reject) => {
    let graceTimer = null;
    let elseTimer = null;
    let over = false;
    const end = (fn, v) => {
      if (over) return;
      over = true;
      st.waiters.delete(poke);
      unwatch();
      clearTimeout(graceTimer);
      clearTimeout(elseTimer);
      fn(v);
    };
    const interrupt = () => {
      if (kind !== READ) return end(resolve, undefined);
      const d = st.dialog;
      st.dialogs = []; // told by the error, not again in a later result
      end(reject, openError(what, String(c.tabId), d, true));
    };
    const poke = () => {
      if (over || graceTimer || !st.dialog || st.dialogSeq === seq) return;
      graceTimer = setTimeout(interrupt, DIALOG_GRACE);
    };
    const other = () => {
      if (over || elseTimer || kind === ANSWER) return;
      if (!elsewhere()) return;
      const left = c.ctx && c.ctx.deadline ? (c.ctx.deadline - Date.now()) / 2 : ELSEWHERE_GRACE;
      elseTimer = setTimeout(async () => {
        // A page in another renderer than the tab holding the dialog goes
        // on, and the call with it: a slow call is not a held one.
        const o = elsewhere();
        if (o && !over && (await responsive())) {
          elseTimer = null;
          other();
          return;
        }
        if (over) return;
        if (o && kind === ACT && !heldBefore) end(resolve, undefined); // acted; the next call is told
        else if (o) end(reject, elsewhereError(what, o[0], o[1], kind));
        else elseTimer = null;
      }, Math.max(Math.min(ELSEWHERE_GRACE, left), 1));
    };
    st.waiters.add(poke);
    const unwatch = watch(other);
    Promise.resolve(work).then(
      (v) => end(resolve, v),
      (e) => {
        // An action whose work failed because a dialog blocked it still
        // reports the dialog.
        if (st.dialog && st.dialogSeq !== seq) interrupt();
        else end(reject, e);
      },
    );
    poke();
    other();
  });
}
