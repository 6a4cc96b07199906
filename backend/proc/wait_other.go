//go:build unix && !linux

package proc

// reapedLeaderFirst: elsewhere the leftover group is killed after the
// leader has been reaped.
const reapedLeaderFirst = false

// waitExited returns at once: without waitid's WNOWAIT there is no portable
// way to wait for a child without reaping it.
func waitExited(int) {}
