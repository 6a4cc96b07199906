package runner

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// killRunProcesses kills every process still carrying the run's id in its
// environment (AIRLOCK_RUN_ID): the ones that left the run's process group
// (setsid, a daemonising tool), which signalling the group misses. A
// process that cleared its environment escapes this; nothing else does
// without privileges Airlock does not take.
func killRunProcesses(runID string) {
	if runID == "" {
		return
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	mark := []byte("\x00AIRLOCK_RUN_ID=" + runID + "\x00")
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue // gone, or not ours to read
		}
		if bytes.Contains(append([]byte{0}, env...), mark) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// stopLeftover kills the process group of a run a previous Airlock left
// behind, but only when pid is still that run's process: its environment
// names the run (AIRLOCK_RUN_ID), so a reused pid is never signalled.
func stopLeftover(pid int, runID string) {
	if runID == "" {
		return
	}
	if pid > 0 {
		env, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ") // nil when gone, or not ours to read
		if bytes.Contains(append([]byte{0}, env...), []byte("\x00AIRLOCK_RUN_ID="+runID+"\x00")) {
			syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
	// And what it detached from its group, which the group signal misses
	// (found by a new-user test: it ran on after the restart).
	killRunProcesses(runID)
}
