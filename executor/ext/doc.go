// Package ext is the extension backend: the loopback WebSocket bridge the
// chromegate MV3 extension connects to, its handshake file and pairing, and
// an executor.Executor that sends each primitive to the extension as a
// wire frame.
//
// # Unauthenticated input is small
//
// Any local process, and any other installed extension, can open a
// connection with a chrome-extension:// Origin, so nothing a connection
// sends is trusted, or buffered in size, until its hello is verified: the
// bridge reads at most MaxHelloBytes before the token (or pairing code) is
// checked, waits HelloTimeout at most for it, and holds at most MaxPending
// such connections at once (more get 503 before the upgrade). Only a
// welcomed connection may send frames of MaxFrameBytes.
package ext
