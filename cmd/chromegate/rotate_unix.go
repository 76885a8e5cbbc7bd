//go:build unix

package main

import "syscall"

// signalRotate asks the server pid to rotate its extension token (SIGHUP).
func signalRotate(pid int) error { return syscall.Kill(pid, syscall.SIGHUP) }
