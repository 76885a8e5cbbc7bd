// The page's scroll position [x, y], read before a wheel so that
// scrollsettle.js can tell when the page has moved.
() => [scrollX, scrollY]
