package runner

import (
	"errors"
	"io/fs"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/fsutil"
)

// Log reading limits.
const (
	// DefaultLogLines is how many lines a read returns unless told.
	DefaultLogLines = 100
	// MaxLogLines bounds the lines one read returns.
	MaxLogLines = 1000
)

// ELogUnavailable: the log file is gone or unreadable.
const ELogUnavailable = "log_unavailable"

// checkQuery validates q and returns the mode: from < 0 is tail mode.
func checkQuery(q LogQuery) (from, n int, err error) {
	if q.Tail != nil && q.Offset != nil {
		return 0, 0, core.Errorf(core.EInvalid, "tail and offset are exclusive: give one of them")
	}
	if q.Tail != nil && (*q.Tail < 1 || *q.Tail > MaxLogLines) {
		return 0, 0, core.Errorf(core.EInvalid, "tail must be between 1 and %d", MaxLogLines)
	}
	if q.Offset != nil && *q.Offset < 0 {
		return 0, 0, core.Errorf(core.EInvalid, "offset must not be negative")
	}
	switch {
	case q.Tail != nil:
		return -1, *q.Tail, nil
	case q.Offset != nil:
		return *q.Offset, DefaultLogLines, nil
	}
	return -1, DefaultLogLines, nil
}

// readLog reads the file at path in one pass: n lines from line from on,
// or (from < 0) the last n lines, and the number of lines.
func readLog(path string, from, n int) (LogChunk, error) {
	ls, err := fsutil.ReadLines(path, from, n, MaxLogLine)
	if errors.Is(err, fs.ErrNotExist) {
		return LogChunk{}, core.Errorf(ELogUnavailable, "the log file of this run no longer exists")
	}
	if err != nil {
		return LogChunk{}, core.Errorf(ELogUnavailable, "the log file of this run cannot be read: %v", err)
	}
	return LogChunk{Lines: ls.Lines, TotalLines: ls.Total, Offset: ls.Offset, Truncated: ls.Truncated}, nil
}
