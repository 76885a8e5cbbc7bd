// Package extension will embed the MV3 extension that drives the user's real
// Chrome through chrome.debugger (the extension issue); the binary writes it
// out with `chromegate extension install DIR`.
package extension
