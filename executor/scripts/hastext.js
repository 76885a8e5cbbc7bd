// Whether the page's visible text contains a string; polled by wait_for.
(text) => {
  const root = document.body || document.documentElement;
  return !!root && root.innerText.includes(text);
}
