// Package pairing is how the extension and the server come to trust each
// other: the per-boot token in the handshake file (0600 in a 0700 data
// directory), the extension id pinned on first pairing, single-use pairing
// codes, and the native-messaging host that hands the extension the token
// and port from the handshake file.
//
// Only the user who runs the server can read the token; the bridge keeps
// only its hash (TokenHash) and compares in constant time (TokenMatches).
package pairing
