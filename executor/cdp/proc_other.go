//go:build !linux && !windows

package cdp

import (
	"syscall"
	"time"
)

// waitExit polls until pid is gone. Without waitid(WNOWAIT) a zombie looks
// alive, so driver death is also detected from failing calls.
func waitExit(pid int) {
	for syscall.Kill(pid, 0) == nil {
		time.Sleep(time.Second)
	}
}

func chromiumAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// killPID ends pid at once (SIGKILL).
func killPID(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
