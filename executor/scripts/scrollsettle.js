// Waits, after a mouse wheel, until the page's scroll position has moved
// from where it was and then held still for two frames (Chromium scrolls
// asynchronously, so the wheel returns before the page has moved). Gives up
// after about 20 frames: the wheel may have scrolled an inner element, or
// nothing at all at the end of the page.
([x0, y0]) => new Promise((resolve) => {
  let frames = 0;
  let still = 0;
  let last = [scrollX, scrollY];
  const tick = () => {
    frames++;
    const now = [scrollX, scrollY];
    const moved = now[0] !== x0 || now[1] !== y0;
    still = now[0] === last[0] && now[1] === last[1] ? still + 1 : 0;
    last = now;
    if ((moved && still >= 2) || frames > 20) resolve(now);
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})
