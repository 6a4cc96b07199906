//go:build unix

package builtin

import (
	"os"
	"syscall"
)

// hardLinks is how many names fi's file has.
func hardLinks(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
