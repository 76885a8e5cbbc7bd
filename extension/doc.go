// Package extension embeds chromegate's MV3 browser extension: plain
// JavaScript ES modules with no build step, which drive the user's own
// Chrome through chrome.debugger and talk to the server over the wire
// protocol of PROTOCOL.md. The binary writes it out with Install for "Load
// unpacked" (`chromegate extension install DIR`); ID is the extension id
// its manifest key gives, Methods the wire methods it implements.
package extension
