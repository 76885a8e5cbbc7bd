// Runs before Playwright's selectOption, which would wait until the deadline
// for an option that does not exist: checks that the element (or the control
// of a <label>) is a <select> and that every wanted string matches an
// option's value or label, and lists the options when one does not.
(el, wanted) => {
  if (el.tagName === 'LABEL' && el.control) el = el.control;
  if (el.tagName !== 'SELECT') {
    return { error: `the element is a <${el.tagName.toLowerCase()}>, not a <select>` };
  }
  const options = [...el.options];
  const matches = (o, w) => o.value === w || o.label === w || o.text.trim() === w;
  const missing = wanted.filter((w) => !options.some((o) => matches(o, w)));
  const available = options.slice(0, 30).map((o) => (o.value === o.label ? o.value : `${o.value} (${o.label})`));
  return { missing, available, more: options.length > 30 };
}
