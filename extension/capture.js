// Captures: the screenshot and pdf wire methods. A capture is bounded by
// pixels (executor.MaxShotPixels) and a PDF by bytes while it is read from
// the browser's stream, so a page cannot make the extension hold more than
// the caps; the server checks both again.

import { fail } from './errors.js';
import { csend } from './tabstate.js';
import { inWorld } from './world.js';
import { validateTarget, isZero, describeTarget, targetRect } from './targets.js';
import { imageSize } from './image.js';
import { onTab } from './session.js';

const DEFAULT_MAX_SCREENSHOT_HEIGHT = 8000; // the CDP backend's default cap
// The pixel cap of a capture (executor.MaxShotPixels, executor.MaxViewportW):
// a full page is cut to it, an element over it is refused.
const MAX_SHOT_PIXELS = 25000000;
const MAX_SHOT_WIDTH = 7680;

// shotScale is the device pixels per CSS pixel of a capture: the larger
// of what the browser's layout metrics and chromegate's isolated world
// (where the page cannot redefine devicePixelRatio) say.
async function shotScale(c, m) {
  const dev = m.visualViewport && m.visualViewport.clientWidth;
  const css = m.cssVisualViewport && m.cssVisualViewport.clientWidth;
  const dims = await inWorld(c.st, await c.st.store.serverScript('dims'), []);
  return Math.max(1, dev > 0 && css > 0 ? dev / css : 1, Number(dims[2]) || 1);
}

function tooManyPixels(what, n) {
  return fail('BAD_ARGS', `${what} would be ${Math.round(n)} device pixels, over the limit of ${MAX_SHOT_PIXELS} (25 Mpx) a capture may have`,
    'screenshot the viewport, or a smaller element');
}

export async function screenshot(p, ctx) {
  let format = 'png';
  let quality;
  switch (String(p.format || '').toLowerCase()) {
    case '':
    case 'png':
      break;
    case 'jpeg':
    case 'jpg':
      format = 'jpeg';
      quality = p.quality || 80;
      if (quality < 1 || quality > 100) throw fail('BAD_ARGS', `quality ${p.quality} is not between 1 and 100`);
      break;
    default:
      throw fail('BAD_ARGS', `format ${JSON.stringify(p.format)} is not png or jpeg`);
  }
  const hasTarget = !isZero(p.target);
  if (hasTarget) {
    validateTarget(p.target);
    if (p.fullPage) throw fail('BAD_ARGS', 'fullPage and target exclude each other', 'pass a target for one element, or fullPage for the whole page');
  }
  if (p.maxHeight < 0) throw fail('BAD_ARGS', 'maxHeight must not be negative');
  const limit = p.maxHeight || DEFAULT_MAX_SCREENSHOT_HEIGHT;
  let data = '';
  let truncated = false;
  let fullHeight = 0;
  const st = await onTab(ctx, 'screenshot', async (c) => {
    const args = { format };
    if (quality !== undefined) args.quality = quality;
    if (hasTarget) {
      const r = await targetRect(c, 'screenshot', p.target);
      if (!(r.width > 0 && r.height > 0)) {
        throw fail('TIMEOUT', `screenshot: the element of ${describeTarget(p.target)} has no size (it is not visible)`, 'wait_for it to be visible, or take a new snapshot');
      }
      const m = await csend(c, 'Page.getLayoutMetrics');
      const vp = m.cssLayoutViewport || m.layoutViewport;
      const px = r.width * r.height * (await shotScale(c, m)) ** 2;
      if (px > MAX_SHOT_PIXELS) throw tooManyPixels(`the element's ${Math.round(r.width)}x${Math.round(r.height)} box`, px);
      const x = Math.floor(r.x);
      const y = Math.floor(r.y);
      args.clip = { x: x + vp.pageX, y: y + vp.pageY, width: Math.ceil(r.width + r.x - x), height: Math.ceil(r.height + r.y - y), scale: 1 };
      args.captureBeyondViewport = true;
    } else if (p.fullPage) {
      const [w, h] = await inWorld(c.st, await c.st.store.serverScript('dims'), []);
      const scale = await shotScale(c, await csend(c, 'Page.getLayoutMetrics'));
      const cw = Math.min(Math.max(Math.ceil(w), 1), MAX_SHOT_WIDTH);
      let ch = Math.min(Math.max(Math.ceil(h), 1), limit);
      if (cw * ch * scale * scale > MAX_SHOT_PIXELS) ch = Math.max(1, Math.floor(MAX_SHOT_PIXELS / (cw * scale * scale)));
      if (ch < Math.ceil(h) || cw < Math.ceil(w)) {
        truncated = true;
        fullHeight = Math.ceil(h);
      }
      args.clip = { x: 0, y: 0, width: cw, height: ch, scale: 1 };
      args.captureBeyondViewport = true;
    } else {
      // The viewport the page lays out in (innerWidth x innerHeight),
      // which a device-metrics override may make differ from the
      // window's surface that a bare capture would return.
      const m = await csend(c, 'Page.getLayoutMetrics');
      const vv = m.cssVisualViewport || m.visualViewport;
      args.clip = { x: vv.pageX, y: vv.pageY, width: Math.floor(vv.clientWidth), height: Math.floor(vv.clientHeight), scale: 1 };
      args.captureBeyondViewport = true;
    }
    const r = await csend(c, 'Page.captureScreenshot', args);
    data = r.data;
  });
  const size = imageSize(data);
  const out = { ...st, data, mimeType: format === 'png' ? 'image/png' : 'image/jpeg', width: size.width, height: size.height };
  if (truncated) {
    out.truncated = true;
    out.fullHeight = fullHeight;
  }
  return out;
}

// pdf prints the page (Page.printToPDF, which works headed too) and
// returns it as base64, read from the stream a chunk at a time and
// stopped once over maxBytes: a page cannot make the extension hold
// more than the cap. The server checks and stores it.
export async function pdf(p, ctx) {
  const max = Number(p.maxBytes) > 0 ? Number(p.maxBytes) : 32 * 1024 * 1024;
  const args = pdfArgs(p);
  const chunks = [];
  const st = await onTab(ctx, 'pdf', async (c) => {
    let r;
    try {
      r = await csend(c, 'Page.printToPDF', { ...args, transferMode: 'ReturnAsStream' });
    } catch (e) {
      const msg = String((e && e.message) || e).split('\n')[0];
      if (/page range/i.test(msg)) throw fail('BAD_ARGS', `the page ranges are outside the document: ${msg}`);
      if (/not implemented/i.test(msg)) {
        throw fail('BAD_ARGS', `this Chrome cannot print to PDF while it shows a window: ${msg}`, 'update Chrome, or use the cdp backend headless');
      }
      throw fail('INTERNAL', `printing the page failed: ${msg}`);
    }
    const handle = r && r.stream;
    if (!handle) throw fail('INTERNAL', 'Page.printToPDF returned no stream');
    let size = 0;
    try {
      for (;;) {
        const part = await csend(c, 'IO.read', { handle, size: 1024 * 1024 });
        const bin = part.base64Encoded ? atob(part.data || '') : String(part.data || '');
        size += bin.length;
        if (size > max) {
          throw fail('DOWNLOAD_FAILED', `the PDF is more than the limit of ${max} bytes; nothing was saved`,
            'print fewer pages (ranges), a smaller scale, or without background');
        }
        chunks.push(bin);
        if (part.eof) break;
      }
    } finally {
      csend(c, 'IO.close', { handle }).catch(() => {});
    }
  });
  return { ...st, data: btoa(chunks.join('')) };
}

// The paper sizes of the pdf method, in inches (executor/pdf.go).
const PAPER = {
  letter: [8.5, 11], legal: [8.5, 14], tabloid: [11, 17], ledger: [17, 11],
  a0: [33.1, 46.8], a1: [23.4, 33.1], a2: [16.54, 23.4], a3: [11.7, 16.54],
  a4: [8.27, 11.7], a5: [5.83, 8.27], a6: [4.13, 5.83],
};

// pdfArgs are the arguments of Page.printToPDF for the pdf method's
// params (the server checked them; checked again here).
export function pdfArgs(p) {
  const size = PAPER[String(p.format || 'letter').toLowerCase()];
  if (!size) throw fail('BAD_ARGS', `unknown paper format ${JSON.stringify(String(p.format))}`);
  const scale = Number(p.scale) || 1;
  if (scale < 0.1 || scale > 2) throw fail('BAD_ARGS', `scale ${scale} is outside 0.1 to 2`);
  const ranges = String(p.ranges || '').replace(/\s+/g, '');
  if (ranges && !/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(ranges)) throw fail('BAD_ARGS', `page ranges ${JSON.stringify(ranges)} are not like "1-3,5"`);
  return {
    landscape: !!p.landscape, printBackground: !!p.background, scale, paperWidth: size[0], paperHeight: size[1],
    pageRanges: ranges, marginTop: 0.4, marginBottom: 0.4, marginLeft: 0.4, marginRight: 0.4, preferCSSPageSize: false,
  };
}
