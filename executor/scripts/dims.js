// The document's scroll size in CSS pixels, for capping full-page
// screenshots, and the device pixels per CSS pixel (a capture's scale).
() => {
  const d = document.documentElement;
  const b = document.body;
  return [
    Math.max(d ? d.scrollWidth : 0, b ? b.scrollWidth : 0),
    Math.max(d ? d.scrollHeight : 0, b ? b.scrollHeight : 0),
    window.devicePixelRatio || 1,
  ];
}
