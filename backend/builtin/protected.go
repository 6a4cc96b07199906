package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
)

// EPathProtected: a path inside Airlock's data directory, which the file
// tools never read or write.
const EPathProtected = "path_protected"

// Airlock's data directory holds the agents' shared token, the rules, the
// servers, the audit journal and the database. An allowed folder may hold
// it (a home folder does), so the file tools check every path they use,
// after links are resolved, against it: an agent that could read it would
// take the shared token's rights, and one that could write it would
// rewrite its own rules (found by a security test).

// protectedDirs returns the data directory as given and with its links
// resolved.
func protectedDirs(dataDir string) []string {
	if dataDir == "" {
		return nil
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil
	}
	out := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		out = append(out, real)
	}
	return out
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// protectedErr refuses real (an absolute path, links resolved) when it
// lies in the data directory; shown is the path as the agent gave it.
func (c *config) protectedErr(real, shown string) error {
	if len(c.protected) == 0 {
		return nil
	}
	clean := filepath.Clean(real)
	hit := false
	for _, d := range c.protected {
		hit = hit || within(clean, d)
	}
	if hit || sameAsDataDir(clean, c.protected[0]) {
		return (&core.Error{Code: EPathProtected,
			Message: fmt.Sprintf("%s is inside Airlock's data directory (%s), which holds its tokens, rules and audit; the built-in tools never read or write there", shown, c.protected[0])}).
			WithHint("use files outside Airlock's data directory")
	}
	return nil
}

// sameAsDataDir reports whether p, or a folder it is in, is the data
// directory by file identity, or p is a hard link to one of its files.
// Names can differ from the data directory's while naming it: a
// case-insensitive or normalising file system (macOS: ~/library/… for
// ~/Library/…; found by a code review), a bind mount.
func sameAsDataDir(p, dataDir string) bool {
	di, err := os.Stat(dataDir)
	if err != nil {
		return false
	}
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && hardLinks(fi) > 1 && linkedFrom(fi, dataDir) {
		return true
	}
	for q := p; ; {
		if qi, err := os.Stat(q); err == nil && os.SameFile(qi, di) {
			return true
		}
		parent := filepath.Dir(q)
		if parent == q {
			return false
		}
		q = parent
	}
}

// linkedFrom reports whether a file of dir is fi (a hard link to it).
func linkedFrom(fi os.FileInfo, dir string) bool {
	found := false
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if i, err := d.Info(); err == nil && os.SameFile(i, fi) {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	return found
}

// rootProtected says why an allowed folder cannot be one: it is the data
// directory or inside it. A folder that holds the data directory is fine;
// the data directory inside it stays out of reach.
func rootProtected(dir string, protected []string) error {
	for _, d := range protected {
		if within(dir, d) {
			return core.Errorf(core.EInvalid, "folder %s is inside Airlock's data directory (%s), which agents may never reach", dir, protected[0]).
				WithHint("allow the project folders agents work in")
		}
	}
	return nil
}

// fdPath is the path the kernel gives for an open file (Linux), or
// fallback.
func fdPath(f *os.File, fallback string) string {
	if runtime.GOOS == "linux" {
		if p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd())); err == nil && filepath.IsAbs(p) {
			return p
		}
	}
	return fallback
}

// realPath is the path res names with the links of its existing part
// resolved (the rest does not exist yet), for the checks made before a
// person is asked; the tools check again on what they open.
func realPath(res *resolved) string {
	p := filepath.Join(res.dir.real, res.rel)
	rest := ""
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(p, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
