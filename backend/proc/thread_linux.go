package proc

import "syscall"

// onMainThread reports whether the calling goroutine runs on the process's
// main thread, the one whose id is the process id.
func onMainThread() bool { return syscall.Gettid() == syscall.Getpid() }
