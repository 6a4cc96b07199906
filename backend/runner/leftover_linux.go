package runner

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// stopLeftover kills the process group of a run a previous Airlock left
// behind, but only when pid is still that run's process: its environment
// names the run (AIRLOCK_RUN_ID), so a reused pid is never signalled.
func stopLeftover(pid int, runID string) {
	if pid <= 0 || runID == "" {
		return
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return // gone, or not ours to read
	}
	if !bytes.Contains(append([]byte{0}, env...), []byte("\x00AIRLOCK_RUN_ID="+runID+"\x00")) {
		return
	}
	syscall.Kill(-pid, syscall.SIGKILL)
}
