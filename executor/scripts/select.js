// select_option on every backend and target form: chooses the options of a
// <select> (or of a <label>'s select) that the wanted strings name, fires
// input and change as a user's choice would, and returns
// {selected: values}. A wanted string names an option by its value, or by
// its label as the snapshot shows it (whitespace collapsed); one ending in
// "…" is a label the outline cut, and names the one option whose label
// starts with what precedes the "…". Failures select nothing:
//   {error: "notselect", why, page}      not a select, or a disabled one
//   {missing, available, more}           nothing matches a wanted string:
//                                        available lists the closest options
//   {ambiguous, available, more}         a cut label stands for several
//                                        options: available lists them
(el, wanted) => {
  if (el.tagName === 'LABEL' && el.control) el = el.control;
  if (el.tagName !== 'SELECT') {
    return { error: 'notselect', why: 'the element is not a <select>', page: 'the element is a <' + el.tagName.toLowerCase() + '>' };
  }
  if (el.disabled || el.getAttribute('aria-disabled') === 'true' || el.closest('fieldset[disabled]')) {
    return { error: 'notselect', why: 'the <select> is disabled' };
  }
  const norm = (s) => String(s == null ? '' : s).replace(/\s+/g, ' ').trim();
  const options = Array.from(el.options);
  const labels = options.map((o) => norm(o.label || o.text) || norm(o.value));
  const describe = (i) => (options[i].value === labels[i] ? JSON.stringify(labels[i]) : JSON.stringify(labels[i]) + ' (value ' + JSON.stringify(options[i].value) + ')');
  const LIST = 30;

  // pick: the indexes a wanted string names; exact names first, so an
  // option whose own label ends in "…" is found as itself.
  const pick = (w) => {
    const n = norm(w);
    const exact = [];
    options.forEach((o, i) => {
      if (o.value === w || labels[i] === n || o.label === w) exact.push(i);
    });
    if (exact.length || !/(…|\.\.\.)$/.test(n)) return { got: exact };
    const prefix = n.replace(/(…|\.\.\.)$/, '').trimEnd();
    if (!prefix) return [];
    const out = [];
    labels.forEach((l, i) => {
      if (l.startsWith(prefix)) out.push(i);
    });
    return { got: out, cut: true };
  };

  // close: the options most like a wanted string, for the error: shared
  // words and common prefix, case folded.
  const close = (w) => {
    const n = norm(w).replace(/(…|\.\.\.)$/, '').toLowerCase();
    const words = new Set(n.split(/[^\p{L}\p{N}]+/u).filter(Boolean));
    const score = (l) => {
      const s = l.toLowerCase();
      let p = 0;
      while (p < s.length && p < n.length && s[p] === n[p]) p++;
      let shared = 0;
      for (const x of s.split(/[^\p{L}\p{N}]+/u)) if (x && words.has(x)) shared++;
      return (s.includes(n) || (s && n.includes(s)) ? 100 : 0) + shared * 10 + p;
    };
    return labels.map((l, i) => [score(l), i]).filter(([s]) => s > 0)
      .sort((a, b) => b[0] - a[0] || a[1] - b[1]).map(([, i]) => i);
  };

  const chosen = new Set();
  for (const w of wanted) {
    const { got, cut } = pick(w);
    if (!got.length) {
      let near = close(w);
      if (!near.length) near = options.map((_, i) => i);
      return { missing: [w], available: near.slice(0, LIST).map(describe), more: near.length > LIST };
    }
    if (cut && got.length > 1) {
      return { ambiguous: [w], available: got.slice(0, LIST).map(describe), more: got.length > LIST };
    }
    for (const i of got) chosen.add(i);
  }
  const keep = el.multiple ? [...chosen].sort((a, b) => a - b) : [Math.min(...chosen)];
  options.forEach((o, i) => { o.selected = keep.includes(i); });
  el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  return { selected: keep.map((i) => options[i].value) };
}
