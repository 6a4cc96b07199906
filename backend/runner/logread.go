package runner

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/airlock-dev/airlock/backend/core"
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
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return LogChunk{}, core.Errorf(ELogUnavailable, "the log file of this run no longer exists")
	}
	if err != nil {
		return LogChunk{}, core.Errorf(ELogUnavailable, "the log file of this run cannot be read: %v", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	lines := make([]string, 0, min(n, 128))
	total := 0
	for {
		line, err := readLine(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return LogChunk{}, core.Errorf(ELogUnavailable, "the log file of this run cannot be read: %v", err)
		}
		if from < 0 {
			if len(lines) == n {
				copy(lines, lines[1:])
				lines = lines[:n-1]
			}
			lines = append(lines, line)
		} else if total >= from && total < from+n {
			lines = append(lines, line)
		}
		total++
	}
	c := LogChunk{Lines: lines, TotalLines: total}
	if from < 0 {
		c.Offset = total - len(lines)
		c.Truncated = c.Offset > 0
	} else {
		c.Offset = from
		c.Truncated = from > 0 || from+len(lines) < total
	}
	return c, nil
}

// readLine reads one line without its end, cut at MaxLogLine bytes; io.EOF
// only when nothing is left.
func readLine(br *bufio.Reader) (string, error) {
	var buf []byte
	cut := false
	for {
		part, isPrefix, err := br.ReadLine()
		if err != nil {
			if err == io.EOF && (len(buf) > 0 || cut) {
				return string(buf), nil
			}
			return "", err
		}
		if room := MaxLogLine - len(buf); room > 0 {
			if len(part) > room {
				part, cut = part[:room], true
			}
			buf = append(buf, part...)
		} else {
			cut = true
		}
		if !isPrefix {
			break
		}
	}
	if cut {
		return cutLine(buf) + " …(line cut)", nil
	}
	return string(buf), nil
}
