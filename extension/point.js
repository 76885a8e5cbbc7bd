// Actions at coordinates of the viewport (hitTest, point): what is under a
// point, and trusted mouse input there, checked again after the pointer
// moved and before a button goes down. The CDP backend's executor/point.go
// and executor/cdp/point.go do the same; FrameAt's logic is frameAt here.

import { fail } from './errors.js';
import { csend } from './tabstate.js';
import { runSource, inWorld } from './world.js';
import { checkButton, BUTTONS, mouse, dragPoints } from './input.js';

const undecided = (pt, why) => fail('POLICY_DENIED',
  `the document under the point (${pt.x}, ${pt.y}) could not be determined (${why}); nothing was done`,
  'act by ref (snapshot) instead, or retry after the page settles');

function findFrame(node, id) {
  if (!node) return null;
  if (node.frame && node.frame.id === id) return node.frame;
  for (const k of node.childFrames || []) {
    const f = findFrame(k, id);
    if (f) return f;
  }
  return null;
}

const hiddenOrigin = (u) => {
  try {
    return ['about:', 'data:', 'javascript:', 'blob:', 'filesystem:'].includes(new URL(u).protocol);
  } catch {
    return true;
  }
};

// targetInfo asks the tab's session about a target by id.
const targetInfo = (send) => async (id) => (await send('Target.getTargetInfo', { targetId: id })).targetInfo;

// debuggerTarget finds a target among those chrome.debugger lists: a tab's
// session may not ask about another target, and an out-of-process frame
// is one (its id is the frame's).
async function debuggerTarget(id) {
  const t = (await chrome.debugger.getTargets()).find((i) => i.id === id);
  return t ? { targetId: t.id, type: t.type === 'other' ? 'iframe' : t.type, url: t.url } : null;
}

// frameAt says which document is under a point, as the browser hit-tests
// it: {frameId, mainFrame, url, origin}. send is a CDP sender of the tab;
// target(id) describes a target ({targetId, type, url}).
export async function frameAt(send, pt, target = targetInfo(send)) {
  let frameId = '';
  try {
    const r = await send('DOM.getNodeForLocation', { x: pt.x, y: pt.y, includeUserAgentShadowDOM: false });
    frameId = r.frameId || '';
    if (r.backendNodeId) {
      const d = await send('DOM.describeNode', { backendNodeId: r.backendNodeId });
      const n = (d && d.node) || {};
      if (n.frameId && /^i?frame$/i.test(n.nodeName || '')) frameId = n.frameId;
    }
  } catch (e) {
    throw undecided(pt, 'hit test');
  }
  if (!frameId) throw undecided(pt, 'no frame');
  let tree;
  try {
    tree = (await send('Page.getFrameTree', {})).frameTree;
  } catch (e) {
    throw undecided(pt, 'frame tree');
  }
  let f = findFrame(tree, frameId);
  if (!f) {
    // An out-of-process frame is a target of its own, whose id is the
    // frame's (chrome.debugger lets a tab's session ask about it by id,
    // not list every target).
    let t = null;
    try {
      t = await target(frameId);
    } catch (e) {
      throw undecided(pt, 'frame target');
    }
    if (!t || t.targetId !== frameId || t.type !== 'iframe' || hiddenOrigin(t.url)) throw undecided(pt, `frame ${frameId} is in no frame tree`);
    f = { id: frameId, url: t.url };
  }
  const url = (f.url || '') + (f.urlFragment || '');
  if (!url) throw undecided(pt, 'a frame without a URL');
  return { frameId, mainFrame: tree.frame.id === frameId, url, origin: f.securityOrigin || '' };
}

// hit tests one point in a call's tab: the element from the isolated
// world, the document from the browser. For the policy, settle is false;
// after the pointer moved there for an action, it is the action's kind,
// and the hit first lets the page handle what the move started, refusing
// the action when the move never reached the document the policy's hit
// found (as executor/cdp's hit).
export async function hit(c, pt, settle) {
  const src = await c.st.store.serverScript('point');
  const info = await runSource(c.st, src, [{ op: 'hit', x: pt.x, y: pt.y, settle: !!settle }]);
  if (info.out) {
    throw fail('BAD_ARGS', `point (${pt.x}, ${pt.y}) is outside the viewport, which is ${info.vw}x${info.vh} CSS pixels`,
      `pass x in [0, ${info.vw}) and y in [0, ${info.vh}): CSS pixels, a screenshot's pixels divided by the device scale factor; scroll to bring content into view`);
  }
  if (info.unseen) throw unseen(settle, pt);
  const doc = await frameAt((m, p) => c.st.send(m, p), pt, debuggerTarget);
  return {
    x: pt.x, y: pt.y, ...doc, origin: inherit(doc, info), frame: !!info.frame,
    tag: info.tag || '', role: info.role || '', name: info.name || '', ref: info.ref || '',
  };
}

// inherit is the origin of the document under a point: the frame tree's,
// or, where it gave none a URL could carry (an about:srcdoc or about:blank
// frame's is "://"), the one the point script read in that very document,
// which it could enter only because it is of the top's origin (as
// executor.Hit.Inherit).
export function inherit(doc, info) {
  if (info.frame || !hiddenOrigin(doc.url) || info.docURL !== doc.url || !info.origin || info.origin === 'null') return doc.origin;
  try {
    if (new URL(doc.origin).host) return doc.origin;
  } catch {
    // not a tuple origin
  }
  return info.origin;
}

export const same = (a, b) => !!a && !!b && a.frameId === b.frameId && a.url === b.url && a.origin === b.origin;

const unseen = (kind, pt) => fail('POLICY_DENIED',
  `${kind} at (${pt.x}, ${pt.y}): the pointer's move there never reached the document the policy decided on (the browser sent it to another document, such as a frame the page moved, or the page stopped it); nothing was pressed`,
  'take a new screenshot and retry, or act by ref (snapshot) instead');

const moved = (kind, pt) => fail('POLICY_DENIED',
  `${kind} at (${pt.x}, ${pt.y}): another document came under the point after the policy decided; nothing was pressed`,
  'take a new screenshot and retry; a page that moves frames under the pointer cannot be acted on at a point');

// act moves the pointer to p.at, checks the document under it against
// p.expect[0], and acts; a drag checks p.to against p.expect[1] before
// releasing. It returns the hits it saw.
export async function act(c, p) {
  const kind = String(p.kind || '');
  const button = checkButton(p.button);
  const expect = Array.isArray(p.expect) ? p.expect : [];
  if (!expect.length || (kind === 'drag' && (!p.to || expect.length < 2))) {
    throw fail('INTERNAL', `${kind} at a point without the documents the policy decided on`);
  }
  const hits = [];
  const check = async (pt, want) => {
    const h = await hit(c, pt, kind);
    hits.push(h);
    if (!same(h, want)) throw moved(kind, pt);
  };
  const at = { x: Number(p.at.x), y: Number(p.at.y) };
  await mouse(c, 'mouseMoved', at.x, at.y);
  await check(at, expect[0]);
  switch (kind) {
    case 'hover':
      break;
    case 'click':
      for (let i = 1; i <= Math.max(Number(p.count) || 1, 1); i++) {
        await mouse(c, 'mousePressed', at.x, at.y, { button, buttons: BUTTONS[button], clickCount: i });
        await mouse(c, 'mouseReleased', at.x, at.y, { button, buttons: 0, clickCount: i });
      }
      break;
    case 'scroll': {
      const start = await inWorld(c.st, await c.st.store.serverScript('scrollpos'), []);
      await mouse(c, 'mouseWheel', at.x, at.y, { deltaX: p.dx || 0, deltaY: p.dy || 0 });
      await inWorld(c.st, await c.st.store.serverScript('scrollsettle'), [start]).catch(() => {});
      break;
    }
    case 'drag': {
      const to = { x: Number(p.to.x), y: Number(p.to.y) };
      await dragPoints(c, at, to, () => check(to, expect[1]));
      break;
    }
    default:
      throw fail('BAD_ARGS', `unknown pointer action ${JSON.stringify(kind)}`);
  }
  return hits;
}

export { csend };
