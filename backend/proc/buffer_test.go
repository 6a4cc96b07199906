package proc_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/proc"
)

func TestCapped(t *testing.T) {
	tests := []struct {
		name    string
		max     int
		writes  []string
		want    string
		dropped int64
	}{
		{"under the cap", 10, []string{"abc", "def"}, "abcdef", 0},
		{"exactly the cap", 6, []string{"abc", "def"}, "abcdef", 0},
		{"over the cap in one write", 4, []string{"abcdef"}, "abcd" + proc.TruncationMarker(2), 2},
		{"over the cap across writes", 4, []string{"abc", "def", "gh"}, "abcd" + proc.TruncationMarker(4), 4},
		{"zero cap", 0, []string{"abc"}, proc.TruncationMarker(3), 3},
		{"rune cut by the cap", 1, []string{"é!"}, "\uFFFD" + proc.TruncationMarker(2), 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := proc.NewCapped(tc.max)
			for _, w := range tc.writes {
				if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want %d, nil", w, n, err, len(w))
				}
			}
			if diff := cmp.Diff(tc.want, c.String()); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
			if c.Dropped() != tc.dropped {
				t.Errorf("Dropped() = %d, want %d", c.Dropped(), tc.dropped)
			}
		})
	}
}

func TestTail(t *testing.T) {
	tests := []struct {
		name    string
		lines   int
		lineMax int
		writes  []string
		want    []string
	}{
		{"empty", 3, 80, nil, []string{}},
		{"fewer lines than kept", 3, 80, []string{"a\nb\n"}, []string{"a", "b"}},
		{"last lines kept", 2, 80, []string{"a\nb\nc\nd\n"}, []string{"c", "d"}},
		{"line split across writes", 3, 80, []string{"he", "llo\nwor", "ld"}, []string{"hello", "world"}},
		{"unfinished line counts", 2, 80, []string{"a\nb\nc"}, []string{"b", "c"}},
		{"long line cut", 2, 4, []string{"abcdefgh\nxy\n"}, []string{"abcd …[line cut: 4 more bytes]", "xy"}},
		{"long line cut across writes", 2, 4, []string{"abc", "defg", "h\n"}, []string{"abcd …[line cut: 4 more bytes]"}},
		{"carriage returns dropped", 2, 80, []string{"a\r\n"}, []string{"a"}},
		{"cut inside a rune", 1, 2, []string{"aé\n"}, []string{"a …[line cut: 1 more bytes]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tail := proc.NewTail(tc.lines, tc.lineMax)
			for _, w := range tc.writes {
				if n, err := tail.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if diff := cmp.Diff(tc.want, tail.Lines()); diff != "" {
				t.Errorf("Lines (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(strings.Join(tc.want, "\n"), tail.String()); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTailManyWrites(t *testing.T) {
	tail := proc.NewTail(5, 100)
	for i := range 10000 {
		tail.Write([]byte(strings.Repeat("x", i%7) + "\n"))
	}
	if got := len(tail.Lines()); got != 5 {
		t.Errorf("kept %d lines, want 5", got)
	}
}

// A note added while the process is half-way through a line stays a line
// of its own, and the process's line goes on unbroken (found by a code
// review: notes written into the stream were spliced onto stderr lines).
func TestTailAddLine(t *testing.T) {
	tail := proc.NewTail(4, 20)
	tail.Write([]byte("first\nhalf a "))
	tail.AddLine("[note] skipped")
	tail.Write([]byte("line\n"))
	tail.AddLine(strings.Repeat("n", 25))
	want := []string{"first", "[note] skipped", "half a line", strings.Repeat("n", 20) + " …[line cut: 5 more bytes]"}
	if diff := cmp.Diff(want, tail.Lines()); diff != "" {
		t.Errorf("Lines (-want +got):\n%s", diff)
	}
}
