//go:build unix

package httpapi

import (
	"os"
	"syscall"
)

// inode is fi's inode number: a keys file replaced by a rename has a new
// one even when its size and time are the same.
func inode(fi os.FileInfo) uint64 {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Ino)
	}
	return 0
}
