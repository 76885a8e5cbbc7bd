//go:build !unix

package main

import "errors"

// signalRotate has no signal to send where there is no SIGHUP (Windows):
// the pairing on disk is forgotten, and restarting the server rotates the
// token.
func signalRotate(int) error {
	return errors.New("this system cannot signal a running server: restart it to rotate the token")
}
