// Package bridge is the loopback WebSocket server the chromegate extension
// connects to: it listens on 127.0.0.1 only, checks the connection's
// chrome-extension:// Origin and its hello (token or pairing code, see
// executor/ext/pairing), keeps at most one authenticated connection
// current, and multiplexes calls over it (Conn.Call) with a deadline each.
// The extension's requests of driven tabs are decided by a Decider.
//
// # Unauthenticated input is small
//
// Any local process, and any other installed extension, can open a
// connection with a chrome-extension:// Origin, so nothing a connection
// sends is trusted, or buffered in size, until its hello is verified: the
// bridge reads at most wire.MaxHelloBytes before the token (or pairing
// code) is checked, waits HelloTimeout at most for it, and holds at most
// MaxPending such connections at once (more get 503 before the upgrade).
// Only a welcomed connection may send frames of wire.MaxFrameBytes.
package bridge
