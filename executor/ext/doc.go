// Package ext is the extension backend: an executor.Backend whose Executor
// sends each primitive to the chromegate MV3 extension in the user's own
// Chrome, as a command over the bridge's current connection, and stamps
// the tab ids that come back ("ext:<session>:<chrome tab id>").
//
// The parts it is built on are packages of their own, one job each:
//
//   - executor/ext/wire: the frames, their decoder and limits, and the
//     command methods (checked against extension/methods.js);
//   - executor/ext/bridge: the loopback WebSocket server, its handshake
//     and the multiplexed connection;
//   - executor/ext/pairing: the handshake file, the pinned extension,
//     pairing codes and the native-messaging host.
//
// A new primitive is a method constant in wire (and its name in
// extension/methods.js), an Executor method here, and a handler in the
// extension.
package ext
