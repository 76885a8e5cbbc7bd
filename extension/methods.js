// The wire methods of protocol v1 (PROTOCOL.md), one per line: the router
// checks at start-up that each has a handler (router.test.js checks it of
// cdp.js), and extension/embed.go reads this list so that the Go side's
// own list (executor/ext/wire, methods.go) is tested against it.
export const METHODS = Object.freeze([
  'tabs',
  'tabInfo',
  'selectTab',
  'newTab',
  'closeTab',
  'navigate',
  'back',
  'forward',
  'reload',
  'click',
  'type',
  'fill',
  'press',
  'hover',
  'scroll',
  'selectOption',
  'setFiles',
  'drag',
  'text',
  'html',
  'screenshot',
  'eval',
  'waitFor',
  'runScript',
  'frameDocument',
  'refDocument',
  'frameAt',
  'cookies',
  'setCookies',
  'clipboardWrite',
  'downloadTarget',
  'status',
  'webmcp',
  'network',
  'networkEntry',
  'answerDialog',
  'emulate',
  'console',
  'pdf',
  'hitTest',
  'point',
]);

// The events of protocol v1 the extension sends the server (an event
// frame's "event"). Nothing else is emitted: methods.test.js checks every
// emit of the extension's sources against this list, and the Go side's own
// list (executor/ext/wire, methods.go) is tested against it.
export const EVENTS = Object.freeze([
  'attached',
  'detached',
  'tabClosed',
  'webmcp',
]);
