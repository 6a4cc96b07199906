package fsutil

import (
	"bufio"
	"io"
	"os"
	"unicode/utf8"
)

// Lines is a window of a text file's lines.
type Lines struct {
	Lines []string
	// Total is the number of lines in the file.
	Total int
	// Offset is the index of the first line returned (0 is the first).
	Offset int
	// Truncated is set when the file has lines the window left out.
	Truncated bool
}

// LineCutMarker ends a line cut at the line limit.
const LineCutMarker = " …(line cut)"

// ReadLines reads the text file at path in one pass and returns n lines
// from line from on or, when from < 0, its last n lines. Lines longer than
// maxLine bytes are cut (never inside a UTF-8 sequence) and marked; line
// ends ("\n", "\r\n") are dropped. Memory is bounded by n lines, whatever
// the file's size. Errors are the file system's (fs.ErrNotExist and so on).
func ReadLines(path string, from, n, maxLine int) (Lines, error) {
	f, err := os.Open(path)
	if err != nil {
		return Lines{}, err
	}
	defer f.Close()
	n, maxLine = max(n, 0), max(maxLine, 1)
	br := bufio.NewReaderSize(f, 64<<10)
	// In tail mode ring holds the last n lines, the oldest at next once
	// it is full.
	ring := make([]string, 0, min(n, 1024))
	next, total := 0, 0
	for {
		line, err := readLine(br, maxLine)
		if err == io.EOF {
			break
		}
		if err != nil {
			return Lines{}, err
		}
		switch {
		case n == 0:
		case from >= 0:
			if total >= from && total < from+n {
				ring = append(ring, line)
			}
		case len(ring) < n:
			ring = append(ring, line)
		default:
			ring[next] = line
			next = (next + 1) % n
		}
		total++
	}
	out := Lines{Total: total}
	if from < 0 {
		out.Lines = append(ring[next:len(ring):len(ring)], ring[:next]...)
		out.Offset = total - len(out.Lines)
		out.Truncated = out.Offset > 0
	} else {
		out.Lines = ring
		out.Offset = from
		out.Truncated = from > 0 || from+len(ring) < total
	}
	if out.Lines == nil {
		out.Lines = []string{}
	}
	return out, nil
}

// readLine reads one line without its end, cut at maxLine bytes; io.EOF
// only when nothing is left.
func readLine(br *bufio.Reader, maxLine int) (string, error) {
	var buf []byte
	cut := false
	for {
		part, isPrefix, err := br.ReadLine()
		if err != nil {
			if err == io.EOF && (len(buf) > 0 || cut) {
				break
			}
			return "", err
		}
		if room := maxLine - len(buf); room > 0 {
			if len(part) > room {
				part, cut = part[:room], true
			}
			buf = append(buf, part...)
		} else if len(part) > 0 {
			cut = true
		}
		if !isPrefix {
			break
		}
	}
	if cut {
		return CutUTF8(buf) + LineCutMarker, nil
	}
	return string(buf), nil
}

// CutUTF8 returns b as a string without a UTF-8 sequence left incomplete at
// its end by a cut.
func CutUTF8(b []byte) string {
	for k := 0; k < utf8.UTFMax-1 && len(b) > 0; k++ {
		if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size != 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return string(b)
}
