// What must survive a service-worker restart, in chrome.storage.session:
// the server's page scripts (welcome.scripts), the tabs the debugger is
// attached to, the isolated world's context per tab and document, the
// frame documents of other origins and the child sessions per tab
// (frames.js), and the document-token counter. The storage area is injected ({get(key),
// set(items)}, as chrome.storage.session), so tests run it on a Map.

import { fail } from './errors.js';
import { selectorScript } from './selector.js';

const SCRIPTS_KEY = 'scripts';
const ATTACHED_KEY = 'attachedTabs';
const WORLDS_KEY = 'worlds';
const DOCS_KEY = 'docTokens';
const FRAMES_KEY = 'frameDocs';

// docToken is the document token of number n: lowercase letters, two at
// least.
export function docToken(n) {
  let s = '';
  while (n > 0 || s.length < 2) {
    s = String.fromCharCode(97 + (n % 26)) + s;
    n = Math.floor(n / 26);
  }
  return s;
}

export class Store {
  constructor(area) {
    this.area = area;
    this.composed = null; // {element, selector} sources built from the element script
    this.docChain = Promise.resolve();
    this.docCache = null;
  }

  // setScripts keeps the server's page scripts (welcome.scripts).
  async setScripts(scripts) {
    const all = scripts && typeof scripts === 'object' ? scripts : {};
    this.composed = null;
    await this.area.set({ [SCRIPTS_KEY]: all });
  }

  // scripts is the element script and the selector script composed with it.
  async scripts() {
    if (this.composed) return this.composed;
    const element = await this.script('element');
    if (!element.trim()) {
      throw fail('INTERNAL', 'the server sent no element script in welcome', 'reconnect the extension (update chromegate and the extension together)');
    }
    this.composed = { element, selector: selectorScript(element) };
    return this.composed;
  }

  // script is the page script the server sent in welcome under name, or ''.
  async script(name) {
    const got = await this.area.get(SCRIPTS_KEY);
    const src = got[SCRIPTS_KEY] && got[SCRIPTS_KEY][name];
    return typeof src === 'string' ? src : '';
  }

  // serverScript is one of the page scripts the server sent in welcome
  // (text, dims, eval, scrollsettle, clipboard...): the server's own
  // source, so both backends run the same code.
  async serverScript(name) {
    const src = await this.script(name);
    if (!src.trim()) {
      throw fail('INTERNAL', `the server sent no ${name} script in welcome`, 'update chromegate and the extension together, then reconnect');
    }
    return src;
  }

  // setAttached adds a tab to the attached list, or takes it off.
  async setAttached(tabId, on) {
    const got = await this.area.get(ATTACHED_KEY);
    const list = new Set(Array.isArray(got[ATTACHED_KEY]) ? got[ATTACHED_KEY] : []);
    if (on) list.add(tabId);
    else list.delete(tabId);
    await this.area.set({ [ATTACHED_KEY]: [...list] });
  }

  // attached is the attached list as stored.
  async attached() {
    const got = await this.area.get(ATTACHED_KEY);
    return Array.isArray(got[ATTACHED_KEY]) ? got[ATTACHED_KEY] : [];
  }

  // forgetAll empties the attached list and the worlds (unpairing).
  async forgetAll() {
    await this.area.set({ [ATTACHED_KEY]: [], [WORLDS_KEY]: {}, [FRAMES_KEY]: {} });
  }

  // perTab is what is saved for a tab under key, or null.
  async perTab(key, tabId) {
    const got = await this.area.get(key);
    return (got[key] || {})[tabId] || null;
  }

  // setPerTab saves v for a tab under key (null forgets it).
  async setPerTab(key, tabId, v) {
    const got = await this.area.get(key);
    const all = got[key] || {};
    if (v) all[tabId] = v;
    else delete all[tabId];
    await this.area.set({ [key]: all });
  }

  // savedWorld is the isolated world's context saved for a tab, or null.
  savedWorld(tabId) {
    return this.perTab(WORLDS_KEY, tabId);
  }

  // saveWorld saves a tab's world context (null forgets it).
  saveWorld(tabId, w) {
    return this.setPerTab(WORLDS_KEY, tabId, w);
  }

  // forgetWorld forgets a tab's worlds: its main document's and its
  // frame documents'.
  async forgetWorld(tabId) {
    await this.saveWorld(tabId, null);
    await this.saveFrames(tabId, null);
  }

  // savedFrames is a tab's frame documents and child sessions as saved
  // ({docs: [{tok, frameId, sessionId, ctxId, owner}], children: [[frameId,
  // sessionId]]}), or null.
  savedFrames(tabId) {
    return this.perTab(FRAMES_KEY, tabId);
  }

  // saveFrames saves a tab's frame documents and child sessions (null
  // forgets them).
  saveFrames(tabId, f) {
    return this.setPerTab(FRAMES_KEY, tabId, f);
  }

  // Document tokens: unique within the extension's lifetime (the counter
  // is stored), from a random start so tokens of an earlier run seldom
  // repeat.
  async loadDocs() {
    if (this.docCache) return this.docCache;
    const got = await this.area.get(DOCS_KEY);
    this.docCache = got[DOCS_KEY];
    if (!this.docCache || typeof this.docCache.start !== 'number') {
      const start = 26 * 26 + Math.floor(Math.random() * 26 * 26 * 26);
      this.docCache = { start, next: start };
      await this.area.set({ [DOCS_KEY]: this.docCache });
    }
    return this.docCache;
  }

  // nextDocToken issues the token of a new document.
  nextDocToken() {
    const p = this.docChain.then(async () => {
      const d = await this.loadDocs();
      d.next += 1;
      await this.area.set({ [DOCS_KEY]: d });
      return docToken(d.next);
    });
    this.docChain = p.catch(() => {});
    return p;
  }

  // issuedToken reports whether tok is a document token this extension
  // handed out: a ref carrying one is from an earlier document, any other
  // ref was never issued at all.
  async issuedToken(tok) {
    if (!/^[a-z]{2,12}$/.test(tok)) return false;
    const d = await this.loadDocs();
    let n = 0;
    for (const ch of tok) n = n * 26 + (ch.charCodeAt(0) - 97);
    return n > d.start && n <= d.next;
  }
}

// memoryArea is a storage area on a Map, for tests (and for a worker
// without chrome.storage.session).
export function memoryArea(init = {}) {
  const m = new Map(Object.entries(init));
  return {
    async get(key) {
      return m.has(key) ? { [key]: structuredClone(m.get(key)) } : {};
    },
    async set(items) {
      for (const [k, v] of Object.entries(items)) m.set(k, structuredClone(v));
    },
  };
}
