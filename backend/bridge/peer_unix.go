//go:build unix

package bridge

import (
	"context"
	"os"

	"golang.org/x/sys/unix"
)

// watchPeer calls gone when the client stops reading stdout (it exited or
// was killed): a pipe's write end, or a socket, then reports an error or
// a hang-up. Closing stdin alone is no sign: a client may close it and
// still read the answers to what it sent. Stdout that is a file or a
// terminal is not watched.
func watchPeer(ctx context.Context, out *os.File, gone func()) {
	fi, err := out.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return
	}
	raw, err := out.SyscallConn()
	if err != nil {
		return
	}
	var fd int
	raw.Control(func(f uintptr) { fd = int(f) })
	for ctx.Err() == nil {
		fds := []unix.PollFd{{Fd: int32(fd), Events: 0}} // errors and hang-ups are always reported
		n, err := unix.Poll(fds, 1000)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return
		case n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0:
			gone()
			return
		}
	}
}
