// Package sandbox keeps folders out of reach of the commands Airlock runs
// for agents, enforced by the kernel where the kernel can: on Linux with
// Landlock (5.13 and later, when the kernel enables it). Elsewhere, or on a
// kernel without Landlock, it does nothing and says so in its Status; the
// shell policy's checks of the command line still apply.
//
// A Landlock rule set only allows: it cannot deny one folder. So a hidden
// folder is kept out of reach by allowing everything beside it: every entry
// of every folder on its path, except the next folder on that path. What
// is given up is what happens directly in those folders: with the data
// directory at ~/.config/airlock, a command cannot create, remove or rename
// files directly in /, ~ or ~/.config, nor remove or rename folders there;
// it can still list them, read and write the files in them, and make new
// folders there (usable from the next command on: a rule set covers what
// exists when the command starts). Everything below their other entries is
// untouched.
package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
)

// Status says whether the kernel enforces the sandbox.
type Status struct {
	// Enforced is true when every command runs in the sandbox.
	Enforced bool `json:"enforced"`
	// Mechanism names what enforces it, e.g. "Landlock ABI 7".
	Mechanism string `json:"mechanism,omitempty"`
	// Reason says why nothing enforces it, when nothing does.
	Reason string `json:"reason,omitempty"`
	// Hidden are the folders out of reach, links resolved.
	Hidden []string `json:"hidden"`
}

// realPaths returns each of dirs absolute, links resolved where it
// exists, without duplicates.
func realPaths(dirs []string) []string {
	out := []string{}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		if !slices.Contains(out, abs) {
			out = append(out, abs)
		}
	}
	return out
}

// PathFolders returns the folders on the hidden folders' paths, from /
// down: those whose other entries are allowed, and in which no entry can be
// made.
func PathFolders(hidden []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, h := range hidden {
		var chain []string
		for d := filepath.Dir(h); ; d = filepath.Dir(d) {
			if !seen[d] && !under(d, hidden) {
				seen[d] = true
				chain = append(chain, d)
			}
			if d == "/" || d == "." {
				break
			}
		}
		slices.Reverse(chain)
		out = append(out, chain...)
	}
	return out
}

// under reports whether p is one of dirs or inside one.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}
