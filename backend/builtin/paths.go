package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/airlock-dev/airlock/backend/core"
)

// Error codes of the built-in servers, in addition to core's.
const (
	EInvalidArguments  = "invalid_arguments"  // missing, unknown or ill-typed arguments
	EInvalidPath       = "invalid_path"       // empty, NUL bytes, too long, too many links
	EPathOutsideRoots  = "path_outside_roots" // outside every allowed folder (.., absolute, symlink)
	EBuiltinDisabled   = "builtin_disabled"   // no folder allowed yet
	ENotAFile          = "not_a_file"         // a directory, device, pipe or socket
	ENotADirectory     = "not_a_directory"    // cwd names a file
	EBinaryRefused     = "binary_refused"     // binary content not allow-listed
	EInvalidUTF8       = "invalid_utf8"       // text that is not UTF-8
	EFileExists        = "file_exists"        // overwrite is false
	ESymlinkTarget     = "symlink_target"     // file_write never writes through a link
	EExecutableRefused = "executable_refused" // by extension or by content
	ECommandDenied     = "command_denied"     // a deny rule matched
	ECommandTimeout    = "command_timeout"    // killed at the shell timeout (its output is in the result)
	EIO                = "io_error"           // the file system failed
)

// Path limits: longer paths are refused before the file system sees them.
const (
	MaxPathBytes      = 4096
	MaxComponentBytes = 255
)

// rootDir is an allowed folder.
type rootDir struct {
	path   string // as allowed, cleaned and absolute
	real   string // with symlinks resolved; "" when the folder is unavailable
	source string // SourceSettings or SourceCommandLine
	err    string // why the folder is unavailable
}

// Where an allowed folder comes from.
const (
	SourceSettings    = "settings"
	SourceCommandLine = "command line"
)

// contains returns p relative to the folder when p (absolute, cleaned) lies
// inside it, under the path as allowed or under its real path.
func (r rootDir) contains(p string) (string, bool) {
	for _, base := range []string{r.path, r.real} {
		if base == "" {
			continue
		}
		if p == base {
			return ".", true
		}
		if rest, ok := strings.CutPrefix(p, base); ok && strings.HasPrefix(rest, string(filepath.Separator)) {
			return rest[1:], true
		}
	}
	return "", false
}

// resolved is a path resolved inside an allowed folder, with the folder
// open as an os.Root: every operation on the path goes through that handle,
// so a symlink swapped in after the check cannot lead out of the folder.
type resolved struct {
	root  *os.Root
	dir   rootDir
	rel   string // local to the folder, cleaned; "." for the folder itself
	shown string // the absolute path, for messages
}

func (r *resolved) close() { r.root.Close() }

// resolve checks a path given by an agent and opens the allowed folder it
// belongs to. Relative paths are relative to the first allowed folder.
// Nothing in the path is decoded: %2e%2e and look-alike dots are names.
func (c *config) resolve(p string) (*resolved, error) {
	if err := checkPathText(p); err != nil {
		return nil, err
	}
	if len(c.roots) == 0 {
		return nil, disabledError()
	}
	var dir rootDir
	var rel string
	if filepath.IsAbs(p) {
		clean := filepath.Clean(p)
		best := -1
		for i, r := range c.roots {
			if rr, ok := r.contains(clean); ok && (best < 0 || len(r.path) > len(c.roots[best].path)) {
				best, rel = i, rr
			}
		}
		if best < 0 {
			return nil, (&core.Error{Code: EPathOutsideRoots,
				Message: fmt.Sprintf("%s is outside the allowed folders (%s)", p, c.rootList())}).
				WithHint("use a path inside an allowed folder, or allow the folder in Airlock's Built-in tools settings (#/builtin) or with airlock builtin allow-path DIR")
		}
		dir = c.roots[best]
	} else {
		dir = c.roots[0]
		rel = filepath.Clean(p)
		if !filepath.IsLocal(rel) {
			return nil, (&core.Error{Code: EPathOutsideRoots,
				Message: fmt.Sprintf("%s climbs out of the allowed folder %s with ..", p, dir.path)}).
				WithHint("relative paths are relative to " + dir.path + " and must stay inside it")
		}
	}
	if dir.real == "" {
		return nil, (&core.Error{Code: core.EUnavailable,
			Message: fmt.Sprintf("the allowed folder %s is unavailable: %s", dir.path, dir.err)}).
			WithHint("restore the folder or remove it from the allowed folders")
	}
	root, err := os.OpenRoot(dir.real)
	if err != nil {
		return nil, (&core.Error{Code: core.EUnavailable,
			Message: fmt.Sprintf("the allowed folder %s cannot be opened: %v", dir.path, errors.Unwrap(err))})
	}
	return &resolved{root: root, dir: dir, rel: rel, shown: filepath.Join(dir.path, rel)}, nil
}

// resolveFile is resolve for a path that must name a file: one ending
// in a slash names a folder, and is refused as the system refuses it
// (ENOTDIR), not read as the file without the slash.
func (c *config) resolveFile(p string) (*resolved, error) {
	if strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.") {
		if err := checkPathText(p); err != nil {
			return nil, err
		}
		return nil, core.Errorf(ENotAFile, "%s ends with a slash, which names a folder; the file tools read and write files", p).
			WithHint("give the file's path without the trailing slash")
	}
	return c.resolve(p)
}

func (c *config) rootList() string {
	paths := make([]string, len(c.roots))
	for i, r := range c.roots {
		paths[i] = r.path
	}
	return describeRoots(paths)
}

func disabledError() *core.Error {
	return (&core.Error{Code: EBuiltinDisabled, Message: "the built-in tools are off: no folder is allowed"}).
		WithHint("allow a folder in Airlock's Built-in tools settings (#/builtin), with `airlock builtin allow-path DIR`, or start Airlock with --allow-path DIR")
}

// checkPathText refuses paths that are not paths before anything looks them
// up.
func checkPathText(p string) error {
	switch {
	case p == "":
		return core.Errorf(EInvalidPath, "the path is empty")
	case strings.ContainsRune(p, 0):
		return core.Errorf(EInvalidPath, "the path contains a NUL byte")
	case len(p) > MaxPathBytes:
		return core.Errorf(EInvalidPath, "the path is %d bytes long; the limit is %d", len(p), MaxPathBytes)
	case p == "~" || strings.HasPrefix(p, "~/"):
		// No shell expands it here: it would name a folder called "~".
		return core.Errorf(EInvalidPath, "%s: ~ is not expanded by the file tools", p).
			WithHint("give the path inside an allowed folder (absolute, or relative to the first allowed folder)")
	}
	for _, part := range strings.Split(p, string(filepath.Separator)) {
		if len(part) > MaxComponentBytes {
			return core.Errorf(EInvalidPath, "a name in the path is %d bytes long; the limit is %d", len(part), MaxComponentBytes)
		}
	}
	return nil
}

// fail turns an error from an os.Root operation on the path into what the
// agent reads. The os.Root already refused whatever would leave the folder;
// this only finds the words for it.
func (r *resolved) fail(err error) *core.Error {
	var e *core.Error
	if errors.As(err, &e) {
		return e
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return core.Errorf(core.ENotFound, "%s does not exist", r.shown)
	case errors.Is(err, syscall.ENOTDIR):
		return core.Errorf(core.ENotFound, "%s does not exist: a part of the path is a file, not a folder", r.shown)
	case errors.Is(err, fs.ErrPermission):
		return core.Errorf(core.EForbidden, "%s: permission denied", r.shown)
	case errors.Is(err, syscall.ELOOP):
		return core.Errorf(EInvalidPath, "%s: too many symbolic links", r.shown)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return core.Errorf(EInvalidPath, "%s: the path is too long", r.shown)
	}
	if why := explainEscape(r.root, r.rel, 0); why != "" {
		return (&core.Error{Code: EPathOutsideRoots, Message: fmt.Sprintf("%s leads outside the allowed folder %s: %s", r.shown, r.dir.path, why)}).
			WithHint("symbolic links are followed only when they stay inside the folder and are relative")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return core.Errorf(EIO, "%s: %v", r.shown, err)
}

// explainEscape finds the symbolic link (or ..) through which rel leaves
// the root, for the message only: the os.Root has already refused it.
func explainEscape(root *os.Root, rel string, depth int) string {
	if depth > 8 {
		return "too many symbolic links"
	}
	if !filepath.IsLocal(rel) {
		return ".. climbs out of it"
	}
	parts := strings.Split(rel, string(filepath.Separator))
	cur := ""
	for i, part := range parts {
		next := filepath.Join(cur, part)
		fi, err := root.Lstat(next)
		if err != nil {
			return ""
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := root.Readlink(next)
			if err != nil {
				return ""
			}
			if filepath.IsAbs(target) {
				return fmt.Sprintf("%s is a symbolic link to the absolute path %s (absolute links are never followed)", next, target)
			}
			joined := filepath.Join(filepath.Dir(next), target)
			if !filepath.IsLocal(joined) {
				return fmt.Sprintf("%s is a symbolic link to %s, outside the folder", next, target)
			}
			return explainEscape(root, filepath.Join(append([]string{joined}, parts[i+1:]...)...), depth+1)
		}
		cur = next
	}
	return ""
}
