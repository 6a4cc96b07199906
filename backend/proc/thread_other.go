//go:build unix && !linux

package proc

// onMainThread reports false: only Linux restricts a single thread (Spec's
// Restrict is a Landlock domain there), so no other system needs to know.
func onMainThread() bool { return false }
