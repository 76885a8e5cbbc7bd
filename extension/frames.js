// Frames of other origins. The main frame's isolated world reaches only
// same-origin frames; a frame of another origin gets chromegate's
// isolated world of its own (Page.createIsolatedWorld with its frame id:
// on the tab's session for a frame in the page's renderer, on the frame's
// own child session, which the egress hook's Target.setAutoAttach made,
// for an out-of-process one) and a document token of its own. A frame
// document is bound to that one execution context: when the frame
// navigates the context is gone, and every ref of it is REF_EXPIRED,
// never carried to the frame's next document. The server decides each
// frame document like a page before anything of it is read or acted on
// (executor.FrameReader); this module only reaches and routes.
//
// A frame document's world and a child session outlive the service
// worker (the refs registry lives on the world's globalThis), so both are
// kept in the store and restored when a restarted worker attaches to the
// tab again (restoreFrames), as the main document's world is (world.js):
// a frame's refs keep working across a restart.
//
// Pure: a TabState's injected send, sendSession and store do the work.

import { fail } from './errors.js';
import { contextGone, exceptionText, runSource } from './world.js';

const WORLD_NAME = 'chromegate';
const MAX_DOCS = 256;

// tokenOf is a ref's document token: its letters.
export function tokenOf(ref) {
  return String(ref).replace(/[0-9]+$/, '');
}

function docs(st) {
  if (!st.frameDocs) st.frameDocs = new Map();
  return st.frameDocs;
}

// restoreFrames gives st the frame documents and child sessions saved
// before the service worker restarted; what is already known wins. A
// saved document whose context or session is gone by now is forgotten on
// first use (inDoc): REF_EXPIRED, as for any frame document gone.
export async function restoreFrames(st) {
  const saved = st.store && (await st.store.savedFrames(st.tabId));
  st.framesRestored = true;
  if (!saved) return persist(st);
  for (const fd of Array.isArray(saved.docs) ? saved.docs : []) {
    if (fd && typeof fd.tok === 'string' && !docs(st).has(fd.tok)) docs(st).set(fd.tok, fd);
  }
  if (!st.children) st.children = new Map();
  for (const [id, s] of Array.isArray(saved.children) ? saved.children : []) {
    if (!st.children.has(id)) st.children.set(id, s);
  }
  persist(st);
}

// persist saves st's frame documents and child sessions, in order; not
// before what was saved is restored, which it would overwrite.
function persist(st) {
  if (!st.store || !st.framesRestored) return;
  const snap = { docs: [...docs(st).values()], children: [...(st.children || [])] };
  st.framesSaved = (st.framesSaved || Promise.resolve()).then(() => st.store.saveFrames(st.tabId, snap)).catch(() => {});
}

// forget drops the frame document tok and saves that.
function forget(st, tok) {
  if (docs(st).delete(tok)) persist(st);
}

// frameDoc is the frame document with token tok, or null.
export function frameDoc(st, tok) {
  return (st.frameDocs && st.frameDocs.get(tok)) || null;
}

// senderOf runs CDP commands in the session a frame document lives in.
export function senderOf(st, fd) {
  if (fd && fd.sessionId) return (method, params) => st.sendSession(fd.sessionId, method, params);
  return st.send;
}

// gone is the error of a ref or token of a frame document that no longer is.
export function gone(what) {
  return fail('REF_EXPIRED', `ref ${what} is of a frame whose document is gone: the frame navigated or was removed since it was issued`,
    'take a new snapshot and use a current ref');
}

function sessionGone(msg) {
  return contextGone(msg) || /No session|session.*(closed|not found)|Target closed|No frame|not attached/i.test(msg);
}

// inDoc calls fnDecl with args and the document's env in fd's world.
export async function inDoc(st, fd, what, fnDecl, args, { byValue = true } = {}) {
  let r;
  try {
    r = await senderOf(st, fd)('Runtime.callFunctionOn', {
      functionDeclaration: fnDecl,
      executionContextId: fd.ctxId,
      arguments: [...args.map((a) => (a === undefined ? {} : { value: a })), { value: { doc: fd.tok } }],
      returnByValue: byValue,
      awaitPromise: true,
    });
  } catch (e) {
    if (sessionGone(String((e && e.message) || e))) {
      if (docs(st).get(fd.tok) === fd) forget(st, fd.tok);
      throw gone(what);
    }
    throw e;
  }
  if (r.exceptionDetails) {
    if (contextGone(exceptionText(r.exceptionDetails))) {
      forget(st, fd.tok);
      throw gone(what);
    }
    throw fail('EVAL_FAILED', 'a chromegate page script failed: ' + exceptionText(r.exceptionDetails));
  }
  if (!byValue) return r.result;
  return r.result && 'value' in r.result ? r.result.value : null;
}

const scriptDecl = (source) => `function (arg, env) { return (\n${source}\n)(arg, env); }`;

// runIn runs a script source as fn(arg, env) in fd's world.
export function runIn(st, fd, what, source, args, opts = {}) {
  return inDoc(st, fd, what, scriptDecl(source), args, opts);
}

// runRef runs a script source in the world of ref's document: a frame
// document's when its token is one, else the main document's.
export function runRef(st, ref, source, args, opts = {}) {
  const fd = frameDoc(st, tokenOf(ref));
  if (fd) return runIn(st, fd, ref, source, args, opts);
  return runSource(st, source, args, opts);
}

// where reads a frame document's location and security origin, in it.
export async function where(st, fd, frameSource) {
  const w = await runIn(st, fd, fd.tok, frameSource, [{ op: 'where' }]);
  if (!w || typeof w.url !== 'string' || !w.url) throw fail('INTERNAL', "a frame's document could not say where it is");
  return { doc: fd.tok, url: w.url, origin: String(w.origin || '') };
}

// children keeps the child sessions of a tab's out-of-process frames,
// from the Target events of the tab's debugger (session.js feeds it).
export function onTargetEvent(st, method, params) {
  if (!st.children) st.children = new Map(); // frame (target) id -> sessionId
  if (method === 'Target.attachedToTarget' && params && params.targetInfo && params.targetInfo.type === 'iframe') {
    st.children.set(params.targetInfo.targetId, params.sessionId);
    persist(st);
  } else if (method === 'Target.detachedFromTarget' && params) {
    for (const [id, s] of st.children) if (s === params.sessionId) st.children.delete(id);
    for (const [tok, fd] of docs(st)) if (fd.sessionId && fd.sessionId === params.sessionId) docs(st).delete(tok);
    persist(st);
  }
}

// frameOf reaches the document of the frame whose element is ref, making
// its world on first use. scripts: {element, frame}.
export async function frameOf(st, ref, scripts) {
  if (!/^[a-z]+[0-9]+$/.test(String(ref))) throw fail('BAD_ARGS', `${JSON.stringify(ref)} is not a ref (refs look like kq12)`);
  const obj = await runRef(st, ref, scripts.element, [{ op: 'element', ref }], { byValue: false });
  if (!obj || obj.subtype !== 'node' || !obj.objectId) {
    const r = await runRef(st, ref, scripts.element, [{ op: 'state', ref }]);
    const e = (r && r.error) || 'unknown';
    throw fail(e === 'expired' ? 'REF_EXPIRED' : 'BAD_ARGS', `ref ${ref}: ${e}`, '', '', { ref: String(ref), failure: String(e), why: String((r && r.why) || '') });
  }
  const parent = frameDoc(st, tokenOf(ref));
  const send = senderOf(st, parent);
  let desc;
  try {
    desc = await send('DOM.describeNode', { objectId: obj.objectId });
  } finally {
    send('Runtime.releaseObject', { objectId: obj.objectId }).catch(() => {});
  }
  const frameId = desc && desc.node && desc.node.frameId;
  if (!frameId) throw fail('BAD_ARGS', `ref ${ref} is not a frame`);
  for (const fd of docs(st).values()) {
    if (fd.frameId !== frameId) continue;
    try {
      await where(st, fd, scripts.frame);
      return fd;
    } catch {
      forget(st, fd.tok);
    }
  }
  const own = st.children && st.children.get(frameId);
  const sessionId = own || (parent ? parent.sessionId : '');
  let r;
  try {
    r = await senderOf(st, { sessionId })('Page.createIsolatedWorld', { frameId, worldName: WORLD_NAME });
  } catch {
    throw gone(ref);
  }
  if (!r || typeof r.executionContextId !== 'number') throw fail('INTERNAL', 'Page.createIsolatedWorld gave no context');
  const fd = { tok: await st.store.nextDocToken(), frameId, sessionId, ctxId: r.executionContextId, owner: ref };
  docs(st).set(fd.tok, fd);
  while (docs(st).size > MAX_DOCS) docs(st).delete(docs(st).keys().next().value);
  persist(st);
  return fd;
}

// frameAt finds the document at point (x, y) of the page: null for the
// main document, else the frame document of another origin whose
// viewport holds it, reached through each frame element on the way.
// scripts: {element, frame}.
export async function frameAt(st, x, y, scripts) {
  let fd = null;
  for (let depth = 0; depth < 16; depth++) {
    const arg = [{ op: 'at', x, y }];
    const r = fd ? await runIn(st, fd, fd.tok, scripts.frame, arg) : await runSource(st, scripts.frame, arg);
    if (!r || !r.ref) break;
    fd = await frameOf(st, r.ref, scripts);
    x = r.x;
    y = r.y;
  }
  return fd;
}

// toPage turns a point of fd's viewport into the top frame's viewport,
// through each frame element around it; hit requires each to be the
// topmost thing at the point in its own document, reveal scrolls each
// into view first. Returns {x, y, box} (box: fd's viewport in the page).
export async function toPage(st, fd, x, y, { hit = false, reveal = false, frameSource }) {
  let box = null;
  for (let depth = 0; ; depth++) {
    if (depth > 32) throw fail('INTERNAL', 'frames nested too deep');
    const r = await runRef(st, fd.owner, frameSource, [{ op: 'owner', ref: fd.owner, x, y, hit, reveal }]);
    const err = r && r.error;
    if (err === 'covered') {
      throw fail('TIMEOUT', `the frame of that element is covered by the page around it (${r.why})`, 'close what covers the frame, or scroll to it');
    }
    if (err) throw gone(fd.owner);
    if (!box) box = { x: r.x - x, y: r.y - y, width: r.width, height: r.height };
    else {
      box.x += r.x - x;
      box.y += r.y - y;
    }
    x = r.x;
    y = r.y;
    const parent = frameDoc(st, tokenOf(fd.owner));
    if (!parent) return { x, y, box };
    fd = parent;
  }
}
