//go:build !linux

package runner

// stopLeftover does nothing where a process's environment cannot be read to
// make sure pid is still the run's: signalling a reused pid would hit
// another program. The run is recorded as failed all the same.
func stopLeftover(pid int, runID string) {}

// killRunProcesses does nothing where a process's environment cannot be
// read: stopping a run reaches its process group only.
func killRunProcesses(runID string) {}
