// A tab's state as the debugger's events tell it (a cache, rebuilt after a
// service-worker restart), and the one CDP sender everything acting on the
// tab uses. Pure: the sender and the storage are injected (session.js
// gives the real ones, tests fakes), so every module that takes a
// TabState runs under node.

export class TabState {
  // send(method, params) runs one CDP command on this tab; store is the
  // extension's storage (store.js).
  constructor(tabId, { send, sendSession, store } = {}) {
    this.tabId = tabId;
    this.send = send;
    // sendSession(sessionId, method, params) runs one on a child session
    // of the tab (an out-of-process frame: frames.js).
    this.sendSession = sendSession || (() => Promise.reject(new Error('No session')));
    this.frameDocs = null; // frames.js: token -> frame document
    this.children = null; // frames.js: frame id -> child session id
    this.framesRestored = false; // frames.js: the saved ones are back (restoreFrames)
    this.framesSaved = null; // frames.js: the last save in flight
    this.store = store;
    this.attached = false;
    this.attaching = null; // the single attach in flight
    this.mainFrameId = '';
    this.loaderId = ''; // the main frame's current document
    this.webmcpMax = 0; // the server's bound on a page tool's result (webmcp.js)
    this.lifecycle = new Map(); // loaderId -> Set of lifecycle event names
    this.waiters = new Set(); // functions called on every navigation event
    this.dialogs = []; // reported by the tab's next result
    this.dialog = null; // the dialog the page waits on (dialogs.js)
    this.dialogSeq = 0; // dialogs opened
    this.leaving = 0; // navigations off the page under leaveDialog in flight
    this.closing = 0; // the extension's own dialog answers whose closing is still to come
    this.world = null; // {id, doc, loaderId}
    this.worldPending = null;
    this.drag = null; // Input.dragIntercepted data
    this.lastTitle = '';
    this.commitSeq = 0; // main-frame commits seen
    this.commits = new Map(); // loaderId -> its commit's sequence number
    this.navRequests = 0; // main-frame navigations the page or an input started
    this.stopsSinceRequest = 0; // main-frame loads that stopped since the last request
    this.url = ''; // the main frame's URL as its last navigation event said
    this.urlSeq = 0;
  }

  notify() {
    for (const w of [...this.waiters]) w();
  }

  // onEvent keeps what the navigation waits (navigation.js) read: the main
  // frame's commits, lifecycle milestones, navigations requested and
  // stopped; and the drag data Chrome hands over. It wakes the waiters.
  onEvent(method, params) {
    switch (method) {
      case 'Page.frameNavigated': {
        const f = params.frame;
        if (f && !f.parentId) {
          this.mainFrameId = f.id;
          this.loaderId = f.loaderId;
          this.world = null;
          this.commitSeq += 1;
          this.commits.set(f.loaderId, this.commitSeq);
          if (this.commits.size > 20) this.commits.delete(this.commits.keys().next().value);
          this.lastNav = { loaderId: f.loaderId, type: params.type || 'Navigation' };
          this.url = f.url + (f.urlFragment || '');
          this.urlSeq += 1;
          this.notify();
        }
        break;
      }
      case 'Page.frameRequestedNavigation':
      case 'Page.frameStartedNavigating':
        if (params.frameId === this.mainFrameId && (!params.disposition || params.disposition === 'currentTab')) {
          this.navRequests += 1;
          this.stopsSinceRequest = 0;
          this.notify();
        }
        break;
      case 'Page.frameStoppedLoading':
        if (params.frameId === this.mainFrameId) this.stopsSinceRequest += 1;
        this.notify();
        break;
      case 'Page.navigatedWithinDocument':
        if (params.frameId === this.mainFrameId) {
          this.sameDoc = (this.sameDoc || 0) + 1;
          this.url = params.url;
          this.urlSeq += 1;
          this.notify();
        }
        break;
      case 'Page.lifecycleEvent':
        if (params.frameId === this.mainFrameId || !this.mainFrameId) {
          if (params.name === 'init') this.lifecycle.set(params.loaderId, new Set());
          let set = this.lifecycle.get(params.loaderId);
          if (!set) {
            set = new Set();
            this.lifecycle.set(params.loaderId, set);
          }
          set.add(params.name);
          if (this.lifecycle.size > 20) this.lifecycle.delete(this.lifecycle.keys().next().value);
          this.notify();
        }
        break;
      case 'Page.loadEventFired':
        this.notify();
        break;
      case 'Input.dragIntercepted':
        this.drag = params.data;
        break;
      default:
    }
  }
}

// MUTATING are the commands after whose success a call must not be run
// again: input, navigation, state the page can see.
const MUTATING = /^(Input\.|Page\.(navigate|reload|navigateToHistoryEntry)|DOM\.setFileInputFiles|Network\.setCookies)/;

// csend is the tab's send for a call (c: {st, acted, input, ...}): it
// remembers when the call changed the page.
export async function csend(c, method, params = {}) {
  const r = await c.st.send(method, params);
  if (MUTATING.test(method)) c.acted = true;
  if (method.startsWith('Input.')) c.input = true;
  return r;
}
