// Downloads: a click's download is caught by chrome.downloads, cancelled
// and erased there; the server fetches the URL itself.

import { fail } from './errors.js';
import { budget } from './deadline.js';

const downloadWaiters = new Set();

// onDownloadCreated is chrome.downloads.onCreated's listener.
export function onDownloadCreated(item) {
  for (const w of [...downloadWaiters]) w(item);
}

export function nextDownload(ctx, since) {
  let cancel;
  const p = new Promise((resolve, reject) => {
    const w = (item) => {
      const started = Date.parse(item.startTime || '') || Date.now();
      if (started + 1000 < since) return;
      cleanup();
      resolve(item);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(fail('DOWNLOAD_FAILED', 'the click started no download before the deadline', 'check that the target is a download link or button'));
    }, budget(ctx));
    const cleanup = () => {
      clearTimeout(timer);
      downloadWaiters.delete(w);
    };
    cancel = cleanup;
    downloadWaiters.add(w);
  });
  return { promise: p, cancel };
}
