//go:build windows

package cdp

import (
	"os"
	"syscall"
)

// stillActive is the exit code GetExitCodeProcess reports for a process
// that has not exited (STILL_ACTIVE).
const stillActive = 259

// waitExit blocks until pid exits. Waiting on a process handle does not
// reap anything on Windows, so playwright-go's own wait is unaffected.
func waitExit(pid int) {
	p, err := os.FindProcess(pid)
	if err != nil {
		return // already gone
	}
	_, _ = p.Wait()
}

// chromiumAlive reports whether pid is a running process.
func chromiumAlive(pid int) bool {
	h, err := syscall.OpenProcess(syscall.PROCESS_QUERY_INFORMATION, false, uint32(pid))
	if err != nil {
		return err == syscall.ERROR_ACCESS_DENIED // exists, not ours to query
	}
	defer syscall.CloseHandle(h)
	var code uint32
	if err := syscall.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	return code == stillActive
}

// killPID ends pid at once.
func killPID(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
