// A tab driven by a fake CDP sender, for the node tests of the modules
// that take a TabState (navigation.js, targets.js, world.js): no Chrome,
// no chrome.* — what a module sends is recorded, what it gets back is the
// test's answer. Only the tests import it: it is not part of the
// extension (embed.go leaves it out).

import { TabState } from './tabstate.js';
import { Store, memoryArea } from './store.js';

// fakeTab returns {st, c, sent}: st a TabState on fake send, c a call on
// it with a deadline ms away. answer(method, params) returns (or throws)
// what the command gives; by default every command gives {}, an isolated
// world gets context 5 and a script call gives value.
export function fakeTab({ answer = () => undefined, ms = 2000, scripts = { element: '(arg, env) => arg' }, tabId = 7 } = {}) {
  const sent = [];
  const send = async (method, params = {}) => {
    sent.push({ method, params });
    const r = await answer(method, params);
    if (r !== undefined) return r;
    if (method === 'Page.createIsolatedWorld') return { executionContextId: 5 };
    return {};
  };
  const store = new Store(memoryArea({ scripts }));
  const st = new TabState(tabId, { send, store });
  st.attached = true;
  st.mainFrameId = 'F';
  st.loaderId = 'L1';
  const c = { tabId, st, ctx: { deadline: Date.now() + ms }, what: 'test', start: Date.now(), acted: false, input: false };
  return { st, c, sent, store };
}

// commit feeds the events of a main-frame commit of document loaderId.
export function commit(st, loaderId, { url = 'http://x/' + loaderId, type = 'Navigation' } = {}) {
  st.onEvent('Page.frameNavigated', { frame: { id: 'F', loaderId, url }, type });
}

// milestone feeds a lifecycle event of document loaderId.
export function milestone(st, loaderId, name) {
  st.onEvent('Page.lifecycleEvent', { frameId: 'F', loaderId, name });
}

// cdpError is an error as the real send throws for a protocol error.
export function cdpError(message) {
  const e = new Error(message);
  e.cdp = true;
  return e;
}

export const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));
