// Package wire is the protocol between the chromegate extension and the
// server (extension/PROTOCOL.md): the Frame every message is, its strict
// decoder, the frame types, close codes and size limits, and the command
// methods, listed once here and checked against extension/methods.js.
//
// Nothing in this package talks to a socket; the bridge (executor/ext/bridge)
// reads and writes frames, the backend (executor/ext) sends commands.
package wire
