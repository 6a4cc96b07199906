package fsutil_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/fsutil"
)

func TestReadLines(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var ten []string
	for i := range 10 {
		ten = append(ten, "line "+strconv.Itoa(i))
	}
	tenFile := write("ten", strings.Join(ten, "\n")+"\n")
	tests := []struct {
		name             string
		path             string
		from, n, maxLine int
		want             fsutil.Lines
	}{
		{"tail of more lines", tenFile, -1, 3, 100, fsutil.Lines{Lines: ten[7:], Total: 10, Offset: 7, Truncated: true}},
		{"tail of all", tenFile, -1, 20, 100, fsutil.Lines{Lines: ten, Total: 10, Offset: 0}},
		{"tail exactly all", tenFile, -1, 10, 100, fsutil.Lines{Lines: ten, Total: 10, Offset: 0}},
		{"from the start", tenFile, 0, 4, 100, fsutil.Lines{Lines: ten[:4], Total: 10, Offset: 0, Truncated: true}},
		{"from the middle to the end", tenFile, 6, 100, 100, fsutil.Lines{Lines: ten[6:], Total: 10, Offset: 6, Truncated: true}},
		{"past the end", tenFile, 20, 5, 100, fsutil.Lines{Lines: []string{}, Total: 10, Offset: 20, Truncated: true}},
		{"no lines asked", tenFile, -1, 0, 100, fsutil.Lines{Lines: []string{}, Total: 10, Offset: 10, Truncated: true}},
		{"empty file", write("empty", ""), -1, 5, 100, fsutil.Lines{Lines: []string{}, Total: 0}},
		{"last line without an end, CRLF", write("crlf", "a\r\nb"), -1, 5, 100, fsutil.Lines{Lines: []string{"a", "b"}, Total: 2}},
		{"long line cut, not inside a rune", write("long", "abcé\nok\n"), -1, 5, 4, fsutil.Lines{Lines: []string{"abc" + fsutil.LineCutMarker, "ok"}, Total: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fsutil.ReadLines(tc.path, tc.from, tc.n, tc.maxLine)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ReadLines (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := fsutil.ReadLines(filepath.Join(dir, "missing"), -1, 5, 100); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

// A long log's tail costs one pass and n lines of memory.
func BenchmarkReadLinesTail(b *testing.B) {
	p := filepath.Join(b.TempDir(), "log")
	var sb strings.Builder
	for i := range 200_000 {
		sb.WriteString("2026-11-26T05:00:00Z some output of a run, line " + strconv.Itoa(i) + "\n")
	}
	if err := os.WriteFile(p, []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := fsutil.ReadLines(p, -1, 1000, 8192); err != nil {
			b.Fatal(err)
		}
	}
}
