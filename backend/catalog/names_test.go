package catalog

import (
	"regexp"
	"strings"
	"testing"
)

func TestExposedName(t *testing.T) {
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	cases := []struct{ server, tool, want string }{
		{"everything", "echo", "everything__echo"},
		{"fs", "read_file", "fs__read_file"},
		{"my-server", "get-sum", "my-server__get-sum"},
	}
	for _, c := range cases {
		if got := ExposedName(c.server, c.tool); got != c.want {
			t.Errorf("ExposedName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
	}
	// Names that need changing stay valid, stable and distinct.
	odd := [][2]string{{"gh", "a.b"}, {"gh", "a_b"}, {"gh", "a b"}, {"gh", "ツール"}, {"gh", strings.Repeat("x", 100)}, {"gh", strings.Repeat("x", 101)}, {"g.h", "a"}, {"g_h", "a"}}
	seen := map[string][2]string{}
	for _, o := range odd {
		n := ExposedName(o[0], o[1])
		if !valid.MatchString(n) {
			t.Errorf("ExposedName(%q, %q) = %q, not a valid MCP tool name", o[0], o[1], n)
		}
		if n != ExposedName(o[0], o[1]) {
			t.Errorf("ExposedName(%q, %q) is not stable", o[0], o[1])
		}
		if prev, dup := seen[n]; dup {
			t.Errorf("%v and %v both map to %q", prev, o, n)
		}
		seen[n] = o
	}
}

func TestCollisionWarning(t *testing.T) {
	tests := []struct {
		names []string
		want  string
	}{
		{[]string{"echo"}, `tool "echo" is hidden: server a already exposes that name`},
		{[]string{"echo", "add"}, "2 tools are hidden: server a already exposes their names (echo, add)"},
		{[]string{"t1", "t2", "t3", "t4", "t5", "t6", "t7"}, "7 tools are hidden: server a already exposes their names (t1, t2, t3, t4, t5 and 2 more)"},
	}
	for _, tc := range tests {
		if got := collisionWarning("tool", "a", tc.names); got != tc.want {
			t.Errorf("collisionWarning(%v) = %q, want %q", tc.names, got, tc.want)
		}
	}
}
