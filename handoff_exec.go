//go:build !headless && unix

package main

import (
	"os"
	"syscall"
)

// handOff runs args in the headless build beside this desktop binary when
// handOffTarget finds it (see handoff.go), replacing this process: the same
// pid, the same arguments, environment and open files. It returns only when
// the command is to run here.
func handOff(args []string) {
	target := handOffTarget(args, os.Getenv)
	if target == "" {
		return
	}
	self, err := os.Executable()
	if err != nil {
		return
	}
	env := append(os.Environ(), handedFromEnv+"="+self)
	// On failure (a binary that cannot run here), the command runs here.
	_ = syscall.Exec(target, append([]string{os.Args[0]}, args...), env)
}
