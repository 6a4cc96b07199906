//go:build !headless && unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// handOff runs args in the headless build beside this desktop binary when
// handOffTarget finds it (see handoff.go), replacing this process: the same
// pid, the same arguments, environment and open files. It returns only when
// the command is to run here.
func handOff(args []string) {
	target := handOffTarget(args, os.Getenv)
	if target == "" || !ownedSafely(target) {
		return
	}
	self, err := os.Executable()
	if err != nil {
		return
	}
	// One value of it, this one (an inherited one would come first).
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, handedFromEnv+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, handedFromEnv+"="+self)
	// On failure (a binary that cannot run here), the command runs here.
	_ = syscall.Exec(target, append([]string{os.Args[0]}, args...), env)
}

// ownedSafely reports whether nobody but this user (or root) could have
// put the file at path there: it and its folder belong to one of them and
// neither is writable by others (found by a code review: build info is
// data anyone can write, so a binary planted beside airlock in a shared
// folder would be run).
func ownedSafely(path string) bool {
	me := uint32(os.Getuid())
	for _, p := range []string{path, filepath.Dir(path)} {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			return false
		}
		if st.Uid != me && st.Uid != 0 || st.Mode&0o022 != 0 {
			return false
		}
	}
	return true
}
