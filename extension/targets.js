// Targets: a selector or a ref, checked, described, and acted on with an
// op of the server's element script in the isolated world, its failures
// mapped to the contract's errors. A call c is {st, ctx, start}: st is the
// tab's state with its injected send and store (tabstate.js).

import { fail } from './errors.js';
import { budget } from './deadline.js';
import { runSource } from './world.js';
import { runRef, frameDoc, tokenOf, toPage } from './frames.js';

export function validateTarget(t, label = '') {
  const pre = label ? label + ': ' : '';
  const sel = t && typeof t.selector === 'string' ? t.selector : '';
  const ref = t && typeof t.ref === 'string' ? t.ref : '';
  if (sel && ref) throw fail('BAD_ARGS', pre + 'both selector and ref are set', 'pass exactly one of selector or ref');
  if (!sel && !ref) throw fail('BAD_ARGS', pre + 'neither selector nor ref is set', 'pass exactly one of selector or ref');
  // The engine below only queries the main frame's document; a selector
  // naming Playwright's frame step is refused here as the server refuses
  // it (executor.CheckSelector), should one ever get this far.
  if (/internal:control/i.test(sel)) {
    throw fail('BAD_ARGS', pre + `selectors cannot enter frames; ${JSON.stringify(sel)} steps into a frame`,
      "act on the page's own elements; for a same-origin frame take a snapshot and use its refs");
  }
  return { selector: sel, ref };
}

export function isZero(t) {
  return !t || (!t.selector && !t.ref);
}

export function describeTarget(t) {
  return t.ref ? 'ref ' + t.ref : 'selector ' + t.selector;
}

// refError is a ref the page's registry refused ("malformed", "expired"
// with why "navigated" or "removed", "unknown"). The server words it
// (executor.RefError, from the error's ref field); the code and message
// here are only what an older server would show.
export function refError(ref, failure, why) {
  return fail(failure === 'expired' ? 'REF_EXPIRED' : 'BAD_ARGS', `ref ${JSON.stringify(ref)}: ${failure}${why ? ' (' + why + ')' : ''}`, '', '',
    { ref: String(ref), failure: String(failure), why: String(why || '') });
}

// targetOp runs an op of the element script on a target: a ref directly, a
// selector after waiting for it to match. It maps the script's failures to
// the contract's errors and returns its result.
export async function targetOp(c, what, target, op, extra = {}, { byValue = true } = {}) {
  const t = validateTarget(target);
  const s = await c.st.store.scripts();
  let r;
  if (t.ref) {
    if (!/^[a-z]+[0-9]+$/.test(t.ref)) throw refError(t.ref, 'malformed', '');
    r = await runRef(c.st, t.ref, s.element, [{ op, ref: t.ref, ...extra }], { byValue });
  } else {
    const waitMs = Math.max(budget(c.ctx) - 50, 0);
    r = await runSource(c.st, s.selector, [{ selector: t.selector, waitMs, op, opArg: { op, ...extra } }], { byValue });
  }
  if (!byValue) {
    if (r && r.subtype === 'node' && r.objectId) return r;
    // not an element: the script's {error, why}
    await targetOp(c, what, target, 'state');
    throw fail('INTERNAL', `${what} on ${describeTarget(t)}: the element script gave no element`);
  }
  const err = r && typeof r === 'object' ? r.error : '';
  if (!err) return r;
  const why = r.why || '';
  const took = Date.now() - c.start;
  switch (err) {
    case 'timeout':
      throw fail('TIMEOUT', `${what}: the element of ${describeTarget(t)} did not become actionable within ${took} ms (${why})`,
        'it may be hidden, disabled or covered; scroll to it, close what covers it, or wait_for it', r.page || '');
    case 'notfillable':
    case 'notselect':
      throw fail('BAD_ARGS', `${what} on ${describeTarget(t)}: ${why}`, '', r.page || '');
    case 'notfound':
      throw fail('SELECTOR_NOT_FOUND', `${what}: nothing matches ${describeTarget(t)} (waited ${took} ms)`, 'check the selector, or wait_for it to appear first');
    case 'badselector':
      throw fail('BAD_ARGS', `${what}: invalid selector: ${why}`,
        'use a CSS selector, or a Playwright selector such as text=Sign in or role=button[name="OK"]');
    case 'expired':
      if (why === 'navigated' && t.ref && !(await c.st.store.issuedToken(t.ref.replace(/[0-9]+$/, '')))) throw refError(t.ref, 'unknown', '');
      throw refError(t.ref || t.selector, err, why);
    case 'malformed':
    case 'unknown':
      throw refError(t.ref, err, why);
    default:
      throw fail('INTERNAL', `${what} on ${describeTarget(t)}: the element script failed: ${err} ${why}`);
  }
}

// targetPoint is where a click or a hover on the target goes, in the top
// frame's viewport. A point of a frame of another origin is brought to
// the page's through each frame element, each of which must be where the
// point is (a page that covers a frame gets nothing through it).
export async function targetPoint(c, what, target, click, extra = {}) {
  const p = await targetOp(c, what, target, 'point', { button: !!click, timeoutMs: budget(c.ctx), ...extra });
  const fd = target.ref ? frameDoc(c.st, tokenOf(target.ref)) : null;
  if (!fd) return { x: p.x, y: p.y };
  const frameSource = await c.st.store.serverScript('frame');
  const q = await toPage(c.st, fd, p.x, p.y, { hit: true, reveal: true, frameSource });
  // The browser routes input into another renderer's frame by what was
  // last drawn: a frame the page drew nothing with since it loaded or
  // moved is not yet where it shows (executor/cdp's refPoint waits the
  // same). A frame of the page's own renderer is hit-tested by it.
  if (fd.sessionId) await runSource(c.st, await c.st.store.serverScript('point'), [{ op: 'drawn' }]);
  return { x: q.x, y: q.y };
}

// targetRect is the target's box in the top frame's viewport, scrolled
// into view.
export async function targetRect(c, what, target) {
  const r = await targetOp(c, what, target, 'rect');
  const fd = target.ref ? frameDoc(c.st, tokenOf(target.ref)) : null;
  if (!fd) return r;
  const frameSource = await c.st.store.serverScript('frame');
  const q = await toPage(c.st, fd, r.x, r.y, { reveal: true, frameSource });
  return { ...r, x: q.x, y: q.y };
}

// clickTarget clicks the target with clickAt(point). A selector's click is
// watched by the element script's guard (as the CDP backend's is): a
// press that lands on anything but the element (something moved onto the
// point, or the element away) is stopped before the page's listeners, and
// the click is checked and tried again, as Playwright does, until the
// call's budget is spent.
export async function clickTarget(c, target, clickAt) {
  const t = validateTarget(target);
  if (t.ref) {
    await clickAt(await targetPoint(c, 'click', t, true));
    return;
  }
  for (;;) {
    await clickAt(await targetPoint(c, 'click', t, true, { guard: true }));
    const s = await c.st.store.scripts();
    let g;
    try {
      g = await runSource(c.st, s.element, [{ op: 'guarded', ref: '_' }]);
    } catch {
      return; // the document went away with the click: it landed
    }
    // (a dialog the click opened holds the page: the call has its answer)
    if (!g || g.verdict !== 'missed' || c.st.dialog) return;
    if (budget(c.ctx) <= 100) {
      throw fail('TIMEOUT', `click: the element of ${describeTarget(t)} did not become actionable within ${Date.now() - c.start} ms (another element received the click at the element's point)`,
        'it may be hidden, disabled or covered; scroll to it, close what covers it, or wait_for it', g.page || '');
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
