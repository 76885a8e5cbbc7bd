// Writes text to the clipboard with the async Clipboard API and falls back
// to a hidden textarea and execCommand('copy') when the page may not use it.
// Returns the method that worked; throws when neither did.
async (text) => {
  let firstError = 'navigator.clipboard is unavailable';
  if (navigator.clipboard && navigator.clipboard.writeText) {
    try {
      await navigator.clipboard.writeText(text);
      return 'clipboard';
    } catch (e) {
      firstError = String((e && e.message) || e);
    }
  }
  const ta = document.createElement('textarea');
  ta.value = text;
  ta.setAttribute('readonly', '');
  ta.style.position = 'fixed';
  ta.style.top = '-1000px';
  const parent = document.body || document.documentElement;
  parent.appendChild(ta);
  const previous = document.activeElement;
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } finally {
    ta.remove();
    if (previous && previous.focus) previous.focus();
  }
  if (!ok) throw new Error(`the page refused the clipboard write (${firstError})`);
  return 'execCommand';
}
