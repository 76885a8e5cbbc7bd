// Inserting a text that holds an operator's secret: in one step, into the
// element the call named, and nowhere else. Both backends run it on the
// element itself, with the origin the policy allowed the secret on.
//
// (el, {text, origin, replace, shown}) -> {done: true}, or {error, why}
// with error "notfillable" (not a field that takes text) or "guard"
// (nothing was inserted, because the page is not where the policy decided
// it). Once inserted, the field is marked: it reads as shown (its text
// with each secret as <secret:NAME>) in every read (chromegateShown). (el,
// {unmark: true}) only takes the mark off: a plain value replaced it.
//
// It is one synchronous run: no page script runs between its checks and
// the insertion but the field's own focus handlers, which the checks after
// focusing catch. The element's document must be of origin (the tab may
// have navigated since the decision); after el.focus() the element must
// still be its document's focused element (a handler that moves focus,
// into a frame of another origin say, fails it). The text then goes in
// with execCommand('insertText'), which edits the focused field of this
// document only: it cannot reach another frame.
(el, arg) => {
  const marks = chromegateSecretMarks();
  if (arg.unmark) {
    marks.delete(el);
    return { done: true };
  }
  const mark = () => {
    if (arg.shown) marks.set(el, String(arg.shown));
    else if (arg.replace) marks.delete(el);
  };
  const doc = el.ownerDocument;
  const win = doc && doc.defaultView;
  if (!win || !el.isConnected) return { error: 'guard', why: 'the element is no longer in the page' };
  if (win.origin !== arg.origin) {
    return { error: 'guard', why: 'the element is in a document of another origin than the one the policy allowed the secret on' };
  }
  const tag = el.tagName;
  const type = (el.getAttribute('type') || 'text').toLowerCase();
  const textInputs = ['text', 'password', 'email', 'search', 'tel', 'url', 'number'];
  const field = (tag === 'INPUT' && textInputs.includes(type)) || tag === 'TEXTAREA';
  if (!field && !el.isContentEditable) {
    return { error: 'notfillable', why: 'the element is not a text input, textarea or contenteditable' };
  }
  if (el.disabled || el.closest('fieldset:disabled')) return { error: 'notfillable', why: 'the element is disabled' };
  if (field && el.readOnly) return { error: 'notfillable', why: 'the element is read-only' };
  if (el.scrollIntoViewIfNeeded) el.scrollIntoViewIfNeeded(true);
  el.focus();
  let active = doc.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
  if (active !== el) return { error: 'guard', why: 'focus left the field as it was focused (a page script moved it)' };
  if (win.origin !== arg.origin) return { error: 'guard', why: 'the document changed origin' };
  const sel = win.getSelection();
  if (field) {
    const end = arg.replace ? 0 : el.value.length;
    try {
      el.setSelectionRange(end, el.value.length);
    } catch {
      // email and number inputs have no selection API: select all to
      // replace; appending is then at the caret the browser keeps.
      if (arg.replace) el.select();
    }
  } else {
    const range = doc.createRange();
    range.selectNodeContents(el);
    if (!arg.replace) range.collapse(false);
    sel.removeAllRanges();
    sel.addRange(range);
  }
  if (arg.text === '') {
    if (arg.replace) doc.execCommand('delete', false);
    mark();
    return { done: true };
  }
  if (!doc.execCommand('insertText', false, arg.text)) {
    return { error: 'guard', why: 'the browser did not insert the text' };
  }
  mark();
  return { done: true };
}
