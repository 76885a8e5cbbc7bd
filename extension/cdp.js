// The chrome.debugger executor: every wire method, acting on the user's
// tabs through CDP 1.3 with the semantics of the Go CDP backend
// (executor/cdp). The handlers are written in the modules beside this
// one, one job each: session.js (debugger sessions, calls on a tab),
// tabstate.js (a tab's state and its CDP sender), store.js, world.js
// (the isolated world), targets.js, input.js, navigation.js,
// evaluate.js, image.js, downloads.js, cookies.js, capture.js.

import { fail, WireError } from './errors.js';
import { parseCombo, keyTypes, modifierMask } from './keys.js';
import * as tabs from './tabs.js';
import { textBody } from './netlog.js';
import { POLL_MS, budget, bounded, sleep, aborted } from './deadline.js';
import { csend } from './tabstate.js';
import { inWorld, runSource, fnDecl } from './world.js';
import { validateTarget, isZero, describeTarget, refError, targetOp, targetPoint, clickTarget } from './targets.js';
import { frameAt, frameDoc, frameOf, gone, runIn, runRef, senderOf, toPage, tokenOf, where } from './frames.js';
import { checkButton, mouse, click, typeText, pressCombo, fillTarget, dragPoints, insertGuarded } from './input.js';
import { checkWaitUntil, checkURL, waitLoader, waitEvent, navStatus, gotoURL, RESTRICTED, leaveRestricted, historyNav, withStatus } from './navigation.js';
import { evalSource, bareValue, pageError, isSyntaxError } from './evaluate.js';
import { onDownloadCreated, nextDownload } from './downloads.js';
import { toCDPCookie, fromCDPCookie } from './cookies.js';
import * as dialogs from './dialogs.js';
import * as emulate from './emulate.js';
import * as point from './point.js';
import * as capture from './capture.js';
import {
  store, states, state, netlogs, consolelogs, send, onTab, setScripts, setEmitter, setHook, attach, announce, detachAll, attachedTabs,
  onEvent, onDetach, onTabRemoved, onAttached, onLeftBlank,
} from './session.js';

// A tab the debugger attaches to gets the emulation in force.
onAttached(async (tabId) => {
  const e = emulate.emulation();
  if (!emulate.isZero(e)) await emulate.apply((m, p) => send(tabId, m, p), e);
});

// A tab's first page gets the emulation again as it commits: Chrome may
// keep the overrides sent to the initial empty document (a new tab's or a
// popup's about:blank) on record yet not pass them to the renderer of the
// first page (seen under load: a new tab at the window's own size, in
// light mode). The viewport is cleared first, as Chrome ignores an
// override equal to the one it has on record.
onLeftBlank(async (tabId) => {
  const e = emulate.emulation();
  if (emulate.isZero(e)) return;
  await send(tabId, 'Emulation.clearDeviceMetricsOverride', {});
  await emulate.apply((m, p) => send(tabId, m, p), e);
});

// What sw.js wires to Chrome's events and the connection.
export {
  setScripts, setEmitter, setHook, attach, announce, detachAll, attachedTabs, onEvent, onDetach, onTabRemoved,
  onDownloadCreated,
};

// onAction is onTab for an action or a navigation: a dialog it raises is
// its result, reported open (dialogs.js).
const onAction = (ctx, what, fn) => onTab(ctx, what, fn, dialogs.ACT);

async function history(params, ctx, what, delta) {
  checkWaitUntil(params.waitUntil);
  let status = 0;
  const st = await onAction(ctx, what, async (c) => {
    if (delta === 0) {
      status = await historyNav(c, what, params.waitUntil, () => csend(c, 'Page.reload', {}));
      return;
    }
    const h = await csend(c, 'Page.getNavigationHistory');
    const entry = h.entries[h.currentIndex + delta];
    if (!entry) return; // no history that way: the current page
    status = await historyNav(c, what, params.waitUntil, () => csend(c, 'Page.navigateToHistoryEntry', { entryId: entry.id }));
  });
  return withStatus(st, status);
}

async function userAgentInfo() {
  const ua = navigator.userAgent;
  let full = [];
  try {
    // the reduced user agent says 156.0.0.0; the full version is asked for
    full = (await navigator.userAgentData.getHighEntropyValues(['fullVersionList'])).fullVersionList || [];
  } catch {
    // not offered: the user agent's version stands
  }
  const edge = /Edg\/([0-9.]+)/.exec(ua);
  const chrome = /Chrom(?:e|ium)\/([0-9.]+)/.exec(ua);
  const brands = (navigator.userAgentData && navigator.userAgentData.brands) || [];
  let browser = 'chromium';
  if (edge) browser = 'edge';
  else if (brands.some((b) => b.brand === 'Google Chrome')) browser = 'chrome';
  let version = edge ? edge[1] : chrome ? chrome[1] : '';
  const brand = full.find((b) => b.brand === (browser === 'edge' ? 'Microsoft Edge' : browser === 'chrome' ? 'Google Chrome' : 'Chromium'));
  if (brand && brand.version) version = brand.version;
  return { browser, version, userAgent: ua };
}

async function tabInfo(id, { origin = false } = {}) {
  const t = await tabs.get(id);
  const sel = await tabs.selectedId();
  const out = tabs.wire(t, sel);
  const st = states.get(id);
  if (st && st.attached) {
    // the committed URL, as the browser has it now
    try {
      const h = await send(id, 'Page.getNavigationHistory');
      const e = h.entries[h.currentIndex];
      out.url = e.url;
      out.title = tabs.displayTitle(e.title, e.url);
    } catch {
      // the tab's own view stands
    }
  }
  if (st && st.dialog) {
    // The page answers nothing until its dialog is: decided as opaque
    // where the URL does not carry the origin.
    out.dialog = st.dialog;
    if (origin && originHidden(out.url)) out.origin = 'null';
    return out;
  }
  if (origin && originHidden(out.url)) out.origin = await documentOrigin(id);
  return out;
}

// originHidden is executor.OriginHidden: the URL does not carry the
// document's security origin.
function originHidden(url) {
  const m = /^([a-z][a-z0-9+.-]*):/i.exec(String(url || ''));
  return !m || ['about', 'data', 'javascript', 'blob', 'filesystem'].includes(m[1].toLowerCase());
}

// documentOrigin is executor.Tab.Origin: the origin the browser gave the
// tab's document, read in the isolated world (where no page script can
// replace self.origin); for an opaque one, 'null' if a page could have
// written into it (the tab has an opener), else '' (about:blank as the
// browser made it). An about:blank this extension navigated to or opened
// has the extension's own origin, which no page shares: also ''.
async function documentOrigin(id) {
  const st = await attach(id);
  const origin = await inWorld(st, fnDecl(() => self.origin), []);
  if (typeof origin !== 'string' || !origin) return 'null';
  if (origin === self.location.origin) return '';
  if (origin !== 'null') return origin;
  let opener;
  try {
    const info = await send(id, 'Target.getTargetInfo');
    opener = !!(info && info.targetInfo && info.targetInfo.openerId);
  } catch {
    const t = await tabs.get(id);
    opener = t.openerTabId !== undefined;
  }
  return opener ? 'null' : '';
}

async function cookieTab() {
  const id = await tabs.resolve('');
  try {
    await attach(id);
    return id;
  } catch (e) {
    // the selected tab may be chrome:// or held by DevTools: any other one
    for (const t of await tabs.all()) {
      if (t.id === id) continue;
      try {
        await attach(t.id);
        return t.id;
      } catch {
        // next
      }
    }
    throw e;
  }
}

function pageContent() {
  let s = '';
  if (document.doctype) s = new XMLSerializer().serializeToString(document.doctype);
  if (document.documentElement) s += document.documentElement.outerHTML;
  return s;
}

const WEBMCP_COMMANDS = new Set(['WebMCP.enable', 'WebMCP.disable', 'WebMCP.invokeTool', 'WebMCP.cancelInvocation',
  'Page.getFrameTree', 'Runtime.evaluate']);

export const handlers = {
  async tabs() {
    const list = await tabs.list();
    for (const t of list) {
      const st = states.get(Number(t.id));
      if (st && st.dialog) t.dialog = st.dialog; // the page waits on it
    }
    return list;
  },

  async tabInfo(p, ctx) {
    return tabInfo(await tabs.resolve(ctx.tabId), { origin: true });
  },

  async selectTab(p, ctx) {
    const id = await tabs.resolve(ctx.tabId);
    await tabs.select(id);
    return tabInfo(id);
  },

  async newTab(p, ctx) {
    checkWaitUntil(p.waitUntil);
    if (p.url) checkURL(p.url);
    const id = await tabs.open();
    if (p.url) await handlers.navigate({ url: p.url, waitUntil: p.waitUntil }, { ...ctx, tabId: String(id) });
    return tabInfo(id);
  },

  async closeTab(p, ctx) {
    let id;
    if (!ctx.tabId) {
      id = await tabs.selectedId();
      if (id === null) throw fail('TAB_NOT_FOUND', 'there is no open tab to close');
    } else {
      id = tabs.parseId(ctx.tabId);
    }
    await tabs.close(id);
    states.delete(id);
    return {};
  },

  async navigate(p, ctx) {
    checkWaitUntil(p.waitUntil);
    checkURL(p.url);
    let status = 0;
    try {
      if (p.leaveDialog) {
        // The server's own way off a page outside the policy: the tab's
        // dialog, and any the page opens as it is left, dismissed.
        const st = await onTab(ctx, 'navigate', async (c) => {
          c.st.leaving += 1;
          try {
            await dialogs.leave(c.st, (args) => csend(c, 'Page.handleJavaScriptDialog', args));
            status = await gotoURL(c, p.url, p.waitUntil);
          } finally {
            c.st.leaving -= 1;
          }
        }, dialogs.ANSWER);
        return withStatus(st, status);
      }
      const st = await onAction(ctx, 'navigate', async (c) => {
        status = await gotoURL(c, p.url, p.waitUntil);
      });
      return withStatus(st, status);
    } catch (e) {
      if (!e.restricted && !(e.code === 'DETACHED' && RESTRICTED.test(p.url))) throw e;
    }
    // The tab shows a page no debugger may attach to (the New Tab page,
    // chrome://settings), or is to show one: chrome.tabs navigates it, then
    // the debugger takes over on the new page, if it may.
    const id = await tabs.resolve(ctx.tabId);
    await leaveRestricted(ctx, id, p.url);
    if (RESTRICTED.test(p.url)) {
      const t = await tabs.get(id);
      return { tabId: String(id), url: t.url || p.url, title: tabs.displayTitle(t.title, t.url || '') };
    }
    const st = await onAction({ ...ctx, tabId: String(id) }, 'navigate', async (c) => {
      await waitLoader(c, c.st.loaderId, p.waitUntil, 'navigation to', p.url, -1);
      status = await navStatus(c);
    });
    return withStatus(st, status);
  },

  back: (p, ctx) => history(p, ctx, 'back', -1),
  forward: (p, ctx) => history(p, ctx, 'forward', 1),
  reload: (p, ctx) => history(p, ctx, 'reload', 0),

  async click(p, ctx) {
    const button = checkButton(p.button);
    const count = p.count || 1;
    if (!Number.isInteger(count) || count < 1 || count > 3) throw fail('BAD_ARGS', `count ${p.count} is not 1, 2 or 3`);
    validateTarget(p);
    return onAction(ctx, 'click', (c) => clickTarget(c, p, (pt) => click(c, pt, button, count)));
  },

  async type(p, ctx) {
    validateTarget(p);
    const text = typeof p.text === 'string' ? p.text : '';
    return onAction(ctx, 'type', async (c) => {
      if (p.onlyOrigin) {
        // A text holding an operator's secret: whole, guarded.
        await insertGuarded(c, 'type', p, { text, origin: String(p.onlyOrigin), replace: !!p.clear, shown: String(p.shown || '') });
      } else {
        if (p.clear) await fillTarget(c, 'type', p, '');
        if (p.clear && p.unmark) await insertGuarded(c, 'type', p, { unmark: true });
        else await targetOp(c, 'type', p, 'focus', { edit: 'text' });
        if (text) await typeText(c, text);
      }
      if (p.pressEnter) await pressCombo(c, { modifiers: [], key: 'Enter' });
    });
  },

  async fill(p, ctx) {
    validateTarget(p);
    const value = typeof p.value === 'string' ? p.value : '';
    if (p.onlyOrigin) {
      return onAction(ctx, 'fill', (c) => insertGuarded(c, 'fill', p, { text: value, origin: String(p.onlyOrigin), replace: true, shown: String(p.shown || '') }));
    }
    return onAction(ctx, 'fill', async (c) => {
      await fillTarget(c, 'fill', p, value);
      if (p.unmark) await insertGuarded(c, 'fill', p, { unmark: true });
    });
  },

  async press(p, ctx) {
    const combo = parseCombo(p.key, p.modifiers || [], /Mac/.test(navigator.platform));
    if (!isZero(p.target)) validateTarget(p.target);
    return onAction(ctx, 'press', async (c) => {
      if (!isZero(p.target)) await targetOp(c, 'press', p.target, 'focus', { edit: keyTypes(combo) ? 'text' : 'key' });
      await pressCombo(c, combo);
    });
  },

  async hover(p, ctx) {
    validateTarget(p);
    return onAction(ctx, 'hover', async (c) => {
      const pt = await targetPoint(c, 'hover', p, false);
      await mouse(c, 'mouseMoved', pt.x, pt.y);
    });
  },

  async scroll(p, ctx) {
    if (!isZero(p.target)) {
      validateTarget(p.target);
      return onAction(ctx, 'scroll', (c) => targetOp(c, 'scroll', p.target, 'scroll'));
    }
    if (!p.dx && !p.dy) throw fail('BAD_ARGS', 'scroll needs a target or a non-zero dx/dy');
    return onAction(ctx, 'scroll', async (c) => {
      const start = await inWorld(c.st, await c.st.store.serverScript('scrollpos'), []);
      const at = c.st.pointer || { x: 0, y: 0 };
      await mouse(c, 'mouseWheel', at.x, at.y, { deltaX: p.dx || 0, deltaY: p.dy || 0 });
      await inWorld(c.st, await c.st.store.serverScript('scrollsettle'), [start]);
    });
  },

  async selectOption(p, ctx) {
    validateTarget(p);
    if (!Array.isArray(p.values) || p.values.length === 0) {
      throw fail('BAD_ARGS', 'values is empty', 'pass the value or label of at least one option');
    }
    let selected = [];
    const st = await onAction(ctx, 'select_option', async (c) => {
      const r = await targetOp(c, 'select_option', p, 'select', { values: p.values.map(String) });
      // The options are the page's words: fenced by the server (page),
      // never in the message or the hint (executor/scripts/select.js).
      let avail = (r.available || []).join(', ');
      if (r.more) avail += ', …';
      if (r.ambiguous && r.ambiguous.length) {
        throw fail('BAD_ARGS', `select_option: the cut label ${JSON.stringify(r.ambiguous[0])} stands for several options`,
          "pass one option's whole label or its value; snapshot with the select's ref lists them whole", 'the options it may stand for: ' + avail);
      }
      if (r.missing && r.missing.length) {
        throw fail('BAD_ARGS', `select_option: no option has the value or label "${r.missing.join('", "')}"`,
          "pass the value or label of one of the options; the closest are listed below, and snapshot with the select's ref lists them all", 'the closest options: ' + avail);
      }
      selected = Array.isArray(r.selected) ? r.selected : [];
    });
    st.selected = selected;
    return st;
  },

  async setFiles(p, ctx) {
    validateTarget(p);
    const files = Array.isArray(p.paths) ? p.paths.map(String) : [];
    return onAction(ctx, 'set_files', async (c) => {
      const obj = await targetOp(c, 'set_files', p, 'element', {}, { byValue: false });
      // the element's own session: a frame's, for a frame's ref
      const fd = p.ref ? frameDoc(c.st, tokenOf(p.ref)) : null;
      const send = fd ? senderOf(c.st, fd) : (m, a) => csend(c, m, a);
      try {
        c.acted = true;
        await send('DOM.setFileInputFiles', { files, objectId: obj.objectId });
      } catch (e) {
        if (e instanceof WireError) throw e;
        throw fail('BAD_ARGS', `set_files on ${describeTarget(validateTarget(p))}: ${e.message}`,
          /not allowed/i.test(e.message) ? 'allow the extension "Allow access to file URLs" in chrome://extensions' : 'the target must be an <input type=file>');
      } finally {
        send('Runtime.releaseObject', { objectId: obj.objectId }).catch(() => {});
      }
    });
  },

  async drag(p, ctx) {
    try {
      validateTarget(p.from);
    } catch (e) {
      throw fail('BAD_ARGS', 'from: ' + e.message, e.hint);
    }
    try {
      validateTarget(p.to);
    } catch (e) {
      throw fail('BAD_ARGS', 'to: ' + e.message, e.hint);
    }
    return onAction(ctx, 'drag', async (c) => {
      const from = await targetPoint(c, 'drag (from)', p.from, false);
      const to = await targetPoint(c, 'drag (to)', p.to, false);
      await dragPoints(c, from, to);
    });
  },

  async text(p, ctx) {
    let text = '';
    if (!isZero(p.target)) validateTarget(p.target);
    const st = await onTab(ctx, 'get_text', async (c) => {
      if (isZero(p.target)) {
        const [t, title] = await inWorld(c.st, await c.st.store.serverScript('text'), []);
        text = t;
        c.title = title;
        return;
      }
      text = (await targetOp(c, 'get_text', p.target, 'text')).text;
    });
    st.text = text ?? '';
    return st;
  },

  async html(p, ctx) {
    let text = '';
    if (!isZero(p.target)) validateTarget(p.target);
    const st = await onTab(ctx, 'get_html', async (c) => {
      if (isZero(p.target)) text = await inWorld(c.st, fnDecl(pageContent), []);
      else text = (await targetOp(c, 'get_html', p.target, 'html', { outer: !!p.outer })).text;
    });
    st.text = text ?? '';
    return st;
  },

  screenshot: capture.screenshot,

  async eval(p, ctx) {
    if (typeof p.expression !== 'string' || !p.expression.trim()) throw fail('BAD_ARGS', 'expression is empty');
    let res = { ok: false };
    const st = await onTab(ctx, 'eval', async (c) => {
      const opts = { awaitPromise: !!p.awaitPromise, timeoutMs: budget(ctx) };
      const safe = await c.st.store.serverScript('jsonsafe');
      let r = await csend(c, 'Runtime.evaluate', {
        expression: evalSource(await c.st.store.serverScript('eval'), safe, p.expression, opts), returnByValue: true, awaitPromise: true, userGesture: true,
      });
      if (r.exceptionDetails && isSyntaxError(r.exceptionDetails)) {
        // Statements, not an expression: evaluate them bare (a promise they
        // produce is awaited), then make the value JSON-safe.
        r = await csend(c, 'Runtime.evaluate', { expression: p.expression, awaitPromise: true, userGesture: true, replMode: true });
        if (!r.exceptionDetails) {
          res = { ok: true, value: await bareValue(c, r.result || {}, safe) };
          return;
        }
      }
      if (r.exceptionDetails) {
        const msg = pageError(r.exceptionDetails);
        if (msg.includes('the promise did not settle within')) {
          throw fail('TIMEOUT', 'eval: the promise did not settle before the deadline', 'retry with a larger timeout_ms, or evaluate without awaitPromise');
        }
        res = { ok: false, error: msg };
        return;
      }
      const v = (r.result && r.result.value) || {};
      if (typeof v.t === 'string') c.title = v.t;
      res = { ok: true, value: v.v ?? null };
    });
    return { ...st, ...res };
  },

  async waitFor(p, ctx) {
    const hasTarget = !isZero(p.target);
    const hasText = typeof p.text === 'string' && p.text !== '';
    if (hasTarget === hasText) throw fail('BAD_ARGS', 'pass exactly one of target or text');
    if (hasTarget) validateTarget(p.target);
    let desc;
    if (hasText) desc = `the text ${JSON.stringify(p.text)} to ${p.gone ? 'disappear' : 'appear'}`;
    else if (p.gone) desc = describeTarget(p.target) + ' to disappear or be hidden';
    else if (p.visible) desc = describeTarget(p.target) + ' to be visible';
    else desc = describeTarget(p.target) + ' to appear';
    const start = Date.now();
    const st = await onTab(ctx, 'wait_for ' + desc, async (c) => {
      const s = hasTarget ? await c.st.store.scripts() : null;
      const hasTextSrc = hasText ? await c.st.store.serverScript('hastext') : '';
      const check = async () => {
        if (hasText) return (await inWorld(c.st, hasTextSrc, [p.text])) !== !!p.gone;
        let r;
        if (p.target.ref) {
          if (!/^[a-z]+[0-9]+$/.test(p.target.ref)) throw refError(p.target.ref, 'malformed', '');
          r = await runRef(c.st, p.target.ref, s.element, [{ op: 'state', ref: p.target.ref }]);
          if (r && r.error) {
            if (r.why === 'navigated' && !(await c.st.store.issuedToken(p.target.ref.replace(/[0-9]+$/, '')))) throw refError(p.target.ref, 'unknown', '');
            throw refError(p.target.ref, r.error, r.why);
          }
        } else {
          r = await runSource(c.st, s.selector, [{ selector: p.target.selector, op: 'probe' }]);
          if (r && r.error === 'badselector') {
            throw fail('BAD_ARGS', `wait_for: invalid selector: ${r.why}`, 'use a CSS selector, or a Playwright selector such as text=Sign in or role=button[name="OK"]');
          }
        }
        if (p.gone) return !r.visible;
        if (p.visible) return !!r.visible;
        return !!r.attached;
      };
      const until = Date.now() + budget(ctx);
      let lastErr;
      for (;;) {
        aborted(ctx);
        let ok = false;
        try {
          ok = await check();
        } catch (e) {
          if (e instanceof WireError) throw e;
          lastErr = e; // a navigation replaced the document mid-check
        }
        if (ok) return;
        if (Date.now() >= until) {
          const why = lastErr ? ` (last check failed: ${String(lastErr.message || lastErr).split('\n')[0]})` : '';
          throw fail('TIMEOUT', `waited ${Date.now() - start} ms for ${desc}${why}`,
            'retry with a larger timeout_ms, or check the condition with get_text or screenshot');
        }
        await sleep(Math.min(POLL_MS, Math.max(until - Date.now(), 1)));
      }
    });
    st.elapsedMs = Date.now() - start;
    return st;
  },

  // webmcp runs one command of the WebMCP domain (or what following page
  // tools needs) on a tab, for the server's page-tool tracking. Only these
  // commands pass; Runtime.evaluate only of the server's own page-tools
  // script (welcome.scripts.webmcp), in the page's main world, where
  // polyfills live. Its answer comes back as the command's reply, which
  // the page cannot forge or see.
  async webmcp(p, ctx) {
    const method = String(p.method || '');
    const params = p.params && typeof p.params === 'object' ? p.params : {};
    if (!WEBMCP_COMMANDS.has(method)) throw fail('BAD_ARGS', `webmcp does not run ${method}`);
    if (method === 'Runtime.evaluate') {
      const src = await store.script('webmcp');
      if (!src || typeof params.expression !== 'string' || !params.expression.startsWith('(' + src + ')(')) {
        throw fail('BAD_ARGS', 'webmcp evaluates only the server\'s page-tools script', 'update chromegate and the extension together');
      }
    }
    const tabId = await tabs.resolve(ctx.tabId);
    // The server's bound on what a tool of this tab returns (onEvent).
    if (method === 'WebMCP.invokeTool' && Number(p.maxOutput) > 0) state(tabId).webmcpMax = Number(p.maxOutput);
    await bounded(ctx, 'webmcp', attach(tabId), Date.now());
    return await send(tabId, method, params);
  },

  async network(p, ctx) {
    let out;
    const st = await onTab(ctx, 'network_requests', async (c) => {
      out = netlogs.tab(c.tabId).list(p.navigations);
    });
    return { ...st, ...out };
  },

  async console(p, ctx) {
    let out;
    const st = await onTab(ctx, 'console_messages', async (c) => {
      out = consolelogs.tab(c.tabId).list(netlogs.tab(c.tabId).nav, p.navigations);
    });
    return { ...st, ...out };
  },

  pdf: capture.pdf,

  async networkEntry(p, ctx) {
    const out = {};
    const st = await onTab(ctx, 'network_request', async (c) => {
      const log = netlogs.tab(c.tabId);
      // Set-Cookie and the cookies sent come in ExtraInfo events, which
      // may follow the request's end: wait for them a moment, so that the
      // headers are whole (and their secrets redacted, not missing).
      for (let i = 0; i < 20 && log.extraDue(p.id); i++) await new Promise((r) => setTimeout(r, 25));
      const e = log.find(p.id);
      if (!e) {
        throw fail('BAD_ARGS', `no request ${JSON.stringify(String(p.id))} in the tab's network log`,
          'call network_requests for the ids; the log keeps the last navigations only');
      }
      out.request = e.request;
      if (!p.body) return;
      if (e.request.outcome !== 'allowed') {
        out.bodyNote = 'no body: the request was ' + e.request.outcome;
        return;
      }
      let b;
      try {
        b = await csend(c, 'Network.getResponseBody', { requestId: e.requestId });
      } catch (err) {
        out.bodyNote = 'the body is not available: ' + String((err && err.message) || err).split('\n')[0];
        return;
      }
      const t = textBody(e.request.mimeType, b.body || '', b.base64Encoded, p.maxBody);
      out.bodySize = t.size;
      if (t.note) {
        out.bodyNote = t.note;
      } else {
        out.body = t.text;
        if (t.truncated) out.bodyTruncated = true;
      }
    });
    return { ...st, ...out };
  },

  async hitTest(p, ctx) {
    const pts = Array.isArray(p.points) ? p.points : [];
    const hits = [];
    await onTab(ctx, 'hit test', async (c) => {
      for (const pt of pts) hits.push(await point.hit(c, { x: Number(pt.x), y: Number(pt.y) }, false));
    });
    return hits;
  },

  async point(p, ctx) {
    if (!p.at) throw fail('BAD_ARGS', 'no point');
    let hits = [];
    const st = await onAction(ctx, `${p.kind} at a point`, async (c) => {
      hits = await point.act(c, p);
    });
    return { ...st, hits };
  },

  async runScript(p, ctx) {
    if (typeof p.source !== 'string' || !p.source.trim()) throw fail('BAD_ARGS', 'the script source is empty');
    let value = null;
    const st = await onTab(ctx, 'run_script', async (c) => {
      const arg = [p.arg === undefined ? null : p.arg];
      if (p.doc) {
        // a frame document's, by its token; never another document
        const fd = frameDoc(c.st, String(p.doc));
        if (!fd) throw gone(String(p.doc));
        value = await runIn(c.st, fd, String(p.doc), p.source, arg);
      } else {
        value = await runSource(c.st, p.source, arg);
      }
    });
    st.value = value ?? null;
    return st;
  },

  // frameDocument reaches the document of the frame whose element is
  // p.ref (executor.FrameReader); nothing of its content is read.
  async frameDocument(p, ctx) {
    let out = null;
    await onTab(ctx, 'frame', async (c) => {
      const s = await c.st.store.scripts();
      const frame = await c.st.store.serverScript('frame');
      const fd = await frameOf(c.st, String(p.ref || ''), { element: s.element, frame });
      out = await where(c.st, fd, frame);
    });
    return out;
  },

  // frameAt reports the document at a point of the page
  // (executor.FrameLocator): {main: true}, or a frame document with its
  // box in the page.
  async frameAt(p, ctx) {
    let out = { main: true };
    await onTab(ctx, 'frame', async (c) => {
      const s = await c.st.store.scripts();
      const frame = await c.st.store.serverScript('frame');
      const fd = await frameAt(c.st, Number(p.x) || 0, Number(p.y) || 0, { element: s.element, frame });
      if (!fd) return;
      const d = await where(c.st, fd, frame);
      const q = await toPage(c.st, fd, 0, 0, { frameSource: frame });
      out = { ...d, box: q.box };
    });
    return out;
  },

  // refDocument reports the document p.ref's token names: a frame
  // document as it is now, or {main: true}.
  async refDocument(p, ctx) {
    let out = { main: true };
    await onTab(ctx, 'ref', async (c) => {
      const fd = frameDoc(c.st, tokenOf(String(p.ref || '')));
      if (!fd) return;
      out = await where(c.st, fd, await c.st.store.serverScript('frame'));
    });
    return out;
  },

  async cookies(p) {
    const urls = Array.isArray(p.urls) ? p.urls : [];
    for (const u of urls) {
      let ok = false;
      try {
        ok = !!new URL(u).host;
      } catch {
        ok = false;
      }
      if (!ok) throw fail('BAD_ARGS', `${JSON.stringify(u)} is not an absolute URL`);
    }
    const id = await cookieTab();
    let list;
    if (urls.length) {
      list = (await send(id, 'Network.getCookies', { urls })).cookies;
    } else {
      try {
        list = (await send(id, 'Network.getAllCookies')).cookies;
      } catch (e) {
        if (e instanceof WireError) throw e;
        list = (await send(id, 'Storage.getCookies', {})).cookies;
      }
    }
    return (list || []).map(fromCDPCookie);
  },

  async setCookies(p) {
    if (!Array.isArray(p.cookies) || p.cookies.length === 0) throw fail('BAD_ARGS', 'cookies is empty');
    const cookies = p.cookies.map(toCDPCookie);
    const id = await cookieTab();
    try {
      await send(id, 'Network.setCookies', { cookies });
    } catch (e) {
      if (e instanceof WireError) throw e;
      throw fail('BAD_ARGS', `cookies_set failed: ${e.message}`, 'check the cookies\' domain, path and secure flags');
    }
    return {};
  },

  async clipboardWrite(p, ctx) {
    const text = typeof p.text === 'string' ? p.text : '';
    await onTab(ctx, 'clipboard_write', async (c) => {
      try {
        await inWorld(c.st, await c.st.store.serverScript('clipboard'), [text], { userGesture: true });
      } catch (e) {
        if (e instanceof WireError && e.code === 'EVAL_FAILED') {
          throw fail('EVAL_FAILED', 'clipboard_write: ' + e.message.replace(/^a chromegate page script failed: (Error: )?/, ''), 'focus the page (click it) and retry');
        }
        throw e;
      }
    });
    return {};
  },

  async downloadTarget(p, ctx) {
    const target = p.target || {};
    validateTarget(target);
    let item;
    await onTab(ctx, 'download_file', async (c) => {
      const since = Date.now();
      const wait = nextDownload(ctx, since);
      try {
        const pt = await targetPoint(c, 'download_file', target, true);
        await click(c, pt, 'left', 1);
      } catch (e) {
        wait.cancel();
        throw e;
      }
      item = await wait.promise;
      // Chrome names the file a moment later; wait briefly for it.
      for (let i = 0; i < 10 && !item.filename; i++) {
        await sleep(50);
        const [now] = await chrome.downloads.search({ id: item.id });
        if (now) item = now;
      }
      try {
        await chrome.downloads.cancel(item.id);
      } catch {
        // already complete
      }
      try {
        await chrome.downloads.erase({ id: item.id });
      } catch {
        // gone
      }
    });
    const url = item.finalUrl || item.url || '';
    if (/^(blob|data):/i.test(url)) {
      throw fail('DOWNLOAD_FAILED', `the download is a ${url.split(':')[0]}: URL, which only the page can read`, 'the server cannot fetch it; download a real URL instead');
    }
    const name = (item.filename || '').split(/[\\/]/).pop();
    return { url, filename: name, mimeType: item.mime || '' };
  },

  // answerDialog accepts or dismisses the dialog open on a tab
  // (executor.DialogParams) and returns the page once it has gone on: an
  // accepted beforeunload's held navigation has committed and loaded; a
  // navigation an accepted confirm's handler starts is settled like an
  // input's.
  async answerDialog(p, ctx) {
    return onTab(ctx, 'dialog_answer', async (c) => {
      const d = c.st.dialog;
      if (!d) throw fail('BAD_ARGS', 'no dialog is open on this tab', 'nothing to answer: go on with the page (a dialog closed by the page, or answered already, is gone)');
      const rec = { ...d, action: p.accept ? 'accepted' : 'dismissed' };
      const args = { accept: !!p.accept };
      if (p.accept && d.type === 'prompt') {
        rec.answer = typeof p.promptText === 'string' ? p.promptText : d.default || '';
        args.promptText = rec.answer;
      }
      const since = c.st.commitSeq;
      c.title = undefined;
      c.st.dialog = null;
      // Reported before it is sent: the answer lets the page run on, and a
      // dialog it opens next must be reported after this one.
      c.st.dialogs.push(rec);
      try {
        await dialogs.answer(c.st, (a) => csend(c, 'Page.handleJavaScriptDialog', a), args);
      } catch (e) {
        c.st.dialogs = c.st.dialogs.filter((d) => d !== rec);
        if (/No dialog is showing/i.test(String((e && e.message) || e))) {
          throw fail('BAD_ARGS', 'the dialog on this tab is gone (the page closed it, or it was answered)', 'nothing to answer: go on with the page');
        }
        throw e;
      }
      c.acted = true;
      if (p.accept && d.type === 'beforeunload') {
        // the held navigation goes on: its document, loaded
        await waitEvent(c, () => c.st.commitSeq !== since, () => null).catch(() => {});
        if (c.st.commitSeq !== since) await waitLoader(c, c.st.loaderId, '', 'the navigation after', 'beforeunload', since - 1).catch(() => {});
        return;
      }
      c.input = true; // settled like an input: a navigation it starts commits
    }, dialogs.ANSWER);
  },

  // emulate replaces the emulation of every driven tab (p.set, an
  // executor.Emulation), or reports it (no set); see emulate.js.
  async emulate(p, ctx) {
    if (!p.set) return emulate.emulation();
    let out;
    await onTab(ctx, 'emulate', async () => {
      try {
        out = await emulate.set(p.set, await attachedTabs(), send);
      } catch (e) {
        if (/invalid/i.test(String((e && e.message) || e))) throw fail('BAD_ARGS', `emulate: the browser refused it: ${e.message}`);
        throw e;
      }
    });
    return out;
  },

  async status() {
    const all = await tabs.all();
    const sel = all.length ? await tabs.selectedId() : null;
    const info = await userAgentInfo();
    return {
      browser: info.browser,
      version: info.version,
      tabs: all.length,
      selectedTab: sel === null ? '' : String(sel),
      attachedTabs: (await attachedTabs()).map(String),
      extVersion: chrome.runtime.getManifest().version,
      userAgent: info.userAgent,
    };
  },
};

export { modifierMask };
export { pdfArgs } from './capture.js';
