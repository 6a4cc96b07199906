package core_test

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/airlock-dev/airlock/backend/core"
)

// A data directory Airlock may not write (its permissions, a read-only file
// system) is refused with data_dir_unwritable, the directory, the system's
// words and what to do; any other failure keeps its own error.
func TestDataDirError(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EPERM, syscall.EACCES, syscall.EROFS} {
		err := core.DataDirError("/data", "protect data dir", &fs.PathError{Op: "chmod", Path: "/data", Err: errno})
		var e *core.Error
		if !errors.As(err, &e) || e.Code != core.EDataDirUnwritable || !strings.Contains(e.Message, "/data") ||
			!strings.Contains(e.Message, errno.Error()) || !strings.Contains(e.Hint, "--data-dir") {
			t.Errorf("%v: %#v, want %s naming the directory, the cause and --data-dir", errno, err, core.EDataDirUnwritable)
		}
	}
	full := &fs.PathError{Op: "open", Path: "/data/airlock.db", Err: syscall.ENOSPC}
	err := core.DataDirError("/data", "open db", full)
	if core.ErrorCode(err) != core.EInternal || !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), "open db: ") {
		t.Errorf("a full disk: %v, want the error as it was, after what was done", err)
	}
}
