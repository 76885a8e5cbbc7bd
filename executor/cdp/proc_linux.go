//go:build linux

package cdp

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// waitExit blocks until the child process pid exits, without reaping it
// (WNOWAIT): playwright-go owns the process and reaps it itself.
func waitExit(pid int) {
	const (
		pPID    = 1
		wNOWAIT = 0x01000000
	)
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|wNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			return // exited, or already reaped (ECHILD)
		}
	}
}

// chromiumAlive reports whether pid is a running (not zombie) process that
// looks like a Chromium or Chrome, so a recycled pid does not keep a stale
// profile lock alive.
func chromiumAlive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		if s := stat[i+2]; s == 'Z' || s == 'X' {
			return false
		}
	}
	cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return true
	}
	return strings.Contains(strings.ToLower(string(cmd)), "chrom")
}

// killPID ends pid at once (SIGKILL).
func killPID(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
