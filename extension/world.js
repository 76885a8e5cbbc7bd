// The isolated world "chromegate" of a tab's main frame, one context per
// document, kept in the store so a restarted worker reuses it (the refs
// registry lives on its globalThis); and running page scripts in it.
// Everything goes through the tab's injected send (tabstate.js).

import { fail } from './errors.js';

const WORLD_NAME = 'chromegate';

export function contextGone(msg) {
  return /Cannot find context|Execution context was destroyed|Cannot find default execution context|Inspected target navigated or closed|Cannot find execution context/.test(msg);
}

export async function worldContext(st) {
  if (st.world && st.world.loaderId === st.loaderId) return st.world;
  if (!st.worldPending) {
    st.worldPending = (async () => {
      const saved = await st.store.savedWorld(st.tabId);
      if (saved && saved.loaderId && saved.loaderId === st.loaderId) {
        st.world = saved;
        return saved;
      }
      if (!st.mainFrameId) {
        const tree = await st.send('Page.getFrameTree');
        st.mainFrameId = tree.frameTree.frame.id;
        st.loaderId = tree.frameTree.frame.loaderId;
      }
      const loaderId = st.loaderId;
      const r = await st.send('Page.createIsolatedWorld', { frameId: st.mainFrameId, worldName: WORLD_NAME });
      if (!r || typeof r.executionContextId !== 'number') throw fail('INTERNAL', 'Page.createIsolatedWorld gave no context');
      const w = { id: r.executionContextId, doc: await st.store.nextDocToken(), loaderId };
      // A navigation that committed meanwhile made this context stale.
      if (st.loaderId === loaderId) {
        st.world = w;
        await st.store.saveWorld(st.tabId, w);
      }
      return w;
    })().finally(() => {
      st.worldPending = null;
    });
  }
  return st.worldPending;
}

export function exceptionText(ex) {
  const d = ex && ex.exception && ex.exception.description;
  if (typeof d === 'string' && d) return d.split('\n')[0];
  if (ex && ex.exception && 'value' in ex.exception) return String(ex.exception.value);
  return (ex && ex.text) || 'an exception';
}

// inWorld calls fnDecl (a function declaration) with args and the
// document's env in the isolated world. byValue returns the JSON value,
// else the RemoteObject. A context that vanished under the call (a
// navigation) is recreated once.
export async function inWorld(st, fnDecl, args, { byValue = true, userGesture = false } = {}) {
  for (let attempt = 0; ; attempt++) {
    const w = await worldContext(st);
    let r;
    try {
      r = await st.send('Runtime.callFunctionOn', {
        functionDeclaration: fnDecl,
        executionContextId: w.id,
        arguments: [...args.map((a) => (a === undefined ? {} : { value: a })), { value: { doc: w.doc } }],
        returnByValue: byValue,
        awaitPromise: true,
        userGesture,
      });
    } catch (e) {
      if (e.cdp && contextGone(e.message) && attempt === 0) {
        if (st.world === w) st.world = null;
        await st.store.forgetWorld(st.tabId);
        continue;
      }
      throw e;
    }
    if (r.exceptionDetails) {
      if (attempt === 0 && contextGone(exceptionText(r.exceptionDetails))) {
        st.world = null;
        continue;
      }
      throw fail('EVAL_FAILED', 'a chromegate page script failed: ' + exceptionText(r.exceptionDetails));
    }
    if (!byValue) return r.result;
    return r.result && 'value' in r.result ? r.result.value : null;
  }
}

// Script sources (the element script, the selector engine, the server's
// scripts) are tens of kilobytes: each is sent and compiled once per
// document, kept in a Map on the isolated world's globalThis (which the
// page cannot reach) and called by a short stub afterwards.
const MISSING = '__chromegateMissing__';

const installed = new WeakMap(); // world -> Set of source ids defined in it

function sourceId(source) {
  let h = 0x811c9dc5;
  for (let i = 0; i < source.length; i++) {
    h ^= source.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16) + '-' + source.length;
}

function stubDecl(id) {
  return `function (arg, env) {
  const m = globalThis[Symbol.for('chromegate.scripts')];
  const f = m && m.get(${JSON.stringify(id)});
  if (!f) return { ${MISSING}: true };
  return f(arg, env);
}`;
}

function installDecl(id, source) {
  return `function (arg, env) {
  const key = Symbol.for('chromegate.scripts');
  if (!globalThis[key]) Object.defineProperty(globalThis, key, { value: new Map() });
  const f = (
${source}
  );
  globalThis[key].set(${JSON.stringify(id)}, f);
  return f(arg, env);
}`;
}

// runSource runs a script source (an expression whose value is a
// function) as fn(arg, env) in the isolated world.
export async function runSource(st, source, args, opts = {}) {
  const id = sourceId(source);
  const w = st.world;
  if (opts.byValue !== false && w && installed.has(w) && installed.get(w).has(id)) {
    const v = await inWorld(st, stubDecl(id), args, opts);
    if (!(v && typeof v === 'object' && v[MISSING] === true)) return v;
  }
  const v = await inWorld(st, installDecl(id, source), args, opts);
  const now = st.world;
  if (now) {
    if (!installed.has(now)) installed.set(now, new Set());
    installed.get(now).add(id);
  }
  return v;
}

export const fnDecl = (f) => f.toString();
