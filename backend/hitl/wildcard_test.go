package hitl

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// seedRegex is seed 002's pattern semantics, literally: "*" becomes ".*",
// the rest is literal, case-insensitive, whole name.
func seedRegex(p string) *regexp.Regexp {
	parts := strings.Split(p, "*")
	for i, s := range parts {
		parts[i] = regexp.QuoteMeta(s)
	}
	return regexp.MustCompile("(?is)^" + strings.Join(parts, ".*") + "$")
}

func TestWildcard(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"git_*", "git_status", true},
		{"git_*", "git_commit", true},
		{"git_*", "git_", true},
		{"git_*", "xgit_status", false},
		{"read_*", "READ_FILE", true},
		{"READ_*", "read_file", true},
		{"*", "", true},
		{"*", "anything", true},
		{"**", "x", true},
		{"", "", true},
		{"", "x", false},
		{"read_file", "read_file", true},
		{"read_file", "read_files", false},
		{"read_file", "READ_FILE", true},
		{"*_file", "delete_file", true},
		{"*_file", "delete_files", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "acb", false},
		{"a*a", "a", false},
		{"a*a", "aa", true},
		{"*ab*ab*", "abab", true},
		{"*ab*ab*", "aab", false},
		{"read.file", "readXfile", false}, // '.' is literal, unlike a naive regex translation
		{"k*", "\u212a", true},            // Kelvin sign folds to k, as in regexp (?i)
		{"ſ*", "S", true},
		{"über_*", "ÜBER_x", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"~"+tt.name, func(t *testing.T) {
			if got := compileWildcard(tt.pattern).Match(tt.name); got != tt.want {
				t.Errorf("compileWildcard(%q).Match(%q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
			}
			if got := seedRegex(tt.pattern).MatchString(tt.name); got != tt.want {
				t.Errorf("the seed's regex for %q on %q = %v, want %v (the test table is wrong)", tt.pattern, tt.name, got, tt.want)
			}
		})
	}
}

// FuzzWildcardMatchesSeedRegex checks that the hand-written matcher agrees
// with the seed's regex translation on every input. Its seed corpus runs as
// part of go test; `go test -fuzz FuzzWildcard ./backend/hitl` explores more.
func FuzzWildcardMatchesSeedRegex(f *testing.F) {
	for _, s := range [][2]string{
		{"read_*", "read_file"}, {"*", ""}, {"a*b", "ab"}, {"A*", "a"}, {"*x*y*", "xxyy"},
		{"k", "\u212a"}, {"*é*", "É"}, {"a**", "a"}, {"", ""}, {"x", "\xff"}, {"\ufffd", "\xff"},
		{"*ab*ab*", "aab"}, {"ß*", "SS"}, {"σ", "ς"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if !utf8.ValidString(pattern) {
			return // validation refuses such patterns; regexp cannot compile them
		}
		want := seedRegex(pattern).MatchString(name)
		if got := compileWildcard(pattern).Match(name); got != want {
			t.Fatalf("compileWildcard(%q).Match(%q) = %v, the seed's regex says %v", pattern, name, got, want)
		}
	})
}

func TestPatternIncludes(t *testing.T) {
	tests := []struct {
		p, q string
		want bool
	}{
		{"*", "read_*", true},
		{"read_*", "read_*", true},
		{"READ_*", "read_f*", true},
		{"read_*", "*", false},
		{"read_f*", "read_*", false},
		{"*_file", "read_*", false},
		{"*a*", "a*", true},
	}
	for _, tt := range tests {
		if got := patternIncludes(tt.p, tt.q); got != tt.want {
			t.Errorf("patternIncludes(%q, %q) = %v, want %v", tt.p, tt.q, got, tt.want)
		}
	}
}
