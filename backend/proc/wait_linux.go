package proc

import (
	"errors"
	"syscall"
	"unsafe"
)

// reapedLeaderFirst: on Linux the leftover group is killed while the exited
// leader is still unreaped (see waitExited).
const reapedLeaderFirst = true

// waitExited blocks until the process pid has exited, without reaping it
// (waitid with WNOWAIT), so that the rest of its group can be killed before
// Wait waits for the output copies.
func waitExited(pid int) {
	const pPID = 1     // P_PID
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno == 0 || !errors.Is(errno, syscall.EINTR) {
			// On any other error, cmd.Wait reaps and reports it.
			return
		}
	}
}
