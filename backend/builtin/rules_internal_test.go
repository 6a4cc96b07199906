package builtin

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAlternatives(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		bad  bool
	}{
		{in: "rm", want: []string{"rm"}},
		{in: "{a,b}", want: []string{"a", "b"}},
		{in: "x{a,b}y", want: []string{"xay", "xby"}},
		{in: "{a,b}{1,2}", want: []string{"a1", "a2", "b1", "b2"}},
		{in: "{a,{b,c}}", want: []string{"a", "b", "c"}},
		{in: "/dev/{sd,nvme}*", want: []string{"/dev/sd*", "/dev/nvme*"}},
		{in: "{a,", bad: true},
		{in: "a}", bad: true},
		{in: "{a,,b}", bad: true},
		{in: "{1,2,3,4}{1,2,3,4}{1,2,3,4}{1,2,3,4}{1,2}", bad: true},
	}
	for _, tc := range tests {
		got, err := alternatives(tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("alternatives(%q) error %v, want error=%v", tc.in, err, tc.bad)
			continue
		}
		if diff := cmp.Diff(tc.want, got); !tc.bad && diff != "" {
			t.Errorf("alternatives(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"rm", "rm", true},
		{"rm", "rmdir", false},
		{"mkfs*", "mkfs.ext4", true},
		{"mkfs*", "mkfs", true},
		{"of=/dev/*", "of=/dev/disk/by-id/x", true},
		{"of=/dev/*", "of=./dev/x", false},
		{"*system*", "BEGIN { system(\"id\") }", true},
		{"?", "é", true},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false},
		{"+*", "+main", true},
		{"", "", true},
		{"*", "", true},
	}
	for _, tc := range tests {
		if got := glob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func TestArgMatches(t *testing.T) {
	tests := []struct {
		tok, arg    string
		afterDashes bool
		want        bool
	}{
		{"-r", "-r", false, true},
		{"-r", "-rf", false, true},
		{"-r", "-fr", false, true},
		{"-r", "-Rf", false, false},
		{"-r", "-r", true, false},
		{"-r", "--recursive", false, false},
		{"-9", "-9", false, true},
		{"-1", "-19", false, false},
		// A value attached to its option (-c'code', -n5): the option is
		// there.
		{"-r", "-r5", false, true},
		{"-c", "-cimport os; os.system('id')", false, true},
		{"-c", "-xc", false, true},
		{"-c", "-C", false, false},
		{"--recursive", "--recursive", false, true},
		{"--recursive", "--rec", false, true},
		{"--recursive", "--r", false, true},
		{"--recursive", "--recursive=yes", false, true},
		{"--force", "--force-with-lease", false, false},
		{"--force", "--", false, false},
		{"--to-command", "--to-command=sh", false, true},
		{"-delete", "-delete", false, true},
		{"-delete", "-d", false, false},
		{"push", "push", false, true},
		{"push", "push", true, true},
		{"777", "0777", false, false},
	}
	for _, tc := range tests {
		if got := argMatches(tc.tok, tc.arg, tc.afterDashes); got != tc.want {
			t.Errorf("argMatches(%q, %q, afterDashes=%v) = %v, want %v", tc.tok, tc.arg, tc.afterDashes, got, tc.want)
		}
	}
}

// The sandbox note follows refusals as the C library, Go and Node word
// them (a review found Go's and npm's lower-case ones without it).
func TestSandboxMayHaveRefused(t *testing.T) {
	for _, stderr := range []string{
		"cat: /x: Permission denied",
		"open /home/me/.cache/go-build/ab: permission denied",
		"npm ERR! Error: EACCES: permission denied, mkdir '/home/me/.npm'",
		"kill: (123) - Operation not permitted",
		`sudo: The "no new privileges" flag is set, which prevents sudo from running as root.`,
	} {
		if !sandboxMayHaveRefused(stderr) {
			t.Errorf("no note after %q", stderr)
		}
	}
	for _, stderr := range []string{"", "make: *** [all] Error 2", "fatal: not a git repository"} {
		if sandboxMayHaveRefused(stderr) {
			t.Errorf("a note after %q", stderr)
		}
	}
}
