// The document's scroll size in CSS pixels, for capping full-page
// screenshots.
() => {
  const d = document.documentElement;
  const b = document.body;
  return [
    Math.max(d ? d.scrollWidth : 0, b ? b.scrollWidth : 0),
    Math.max(d ? d.scrollHeight : 0, b ? b.scrollHeight : 0),
  ];
}
