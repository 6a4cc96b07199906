package builtin

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/airlock-dev/airlock/backend/core"
)

// WriteFile runs file_write: it writes args.Content to args.Path inside an
// allowed folder, atomically (a temporary file in the same folder, synced,
// then renamed into place), creating missing parent folders. It refuses to
// replace an existing file unless args.Overwrite, to write executables (by
// extension or by content), and to write through a symbolic link. On any
// error nothing is left behind.
func (b *Builtin) WriteFile(_ context.Context, args WriteArgs) (WriteResult, error) {
	cfg := b.cur.Load()
	if err := cfg.checkWriteContent(args); err != nil {
		return WriteResult{}, err
	}
	res, err := cfg.resolveFile(args.Path)
	if err != nil {
		return WriteResult{}, err
	}
	defer res.close()
	if res.rel == "." {
		return WriteResult{}, core.Errorf(ENotAFile, "%s is the allowed folder itself, not a file", res.shown)
	}
	dirRel, base := filepath.Split(res.rel)
	// Everything from here on goes through a handle on the parent folder,
	// so the file lands in the folder that was checked even if a path
	// component is swapped for a symbolic link meanwhile.
	dir, created, err := openParent(res.root, filepath.Clean(dirRel))
	if err != nil {
		return WriteResult{}, res.fail(err)
	}
	defer dir.Close()
	if err := cfg.protectedDir(dir, res, base); err != nil {
		removeCreated(res.root, created)
		return WriteResult{}, err
	}
	if err := writeAtomic(dir, base, []byte(args.Content), args.Overwrite, res.shown); err != nil {
		removeCreated(res.root, created)
		return WriteResult{}, err
	}
	return WriteResult{Success: true}, nil
}

// checkWriteContent checks what needs no file system: size, extension and
// content.
func (c *config) checkWriteContent(args WriteArgs) error {
	if int64(len(args.Content)) > c.settings.WriteCapBytes {
		return (&core.Error{Code: core.ETooLarge,
			Message: fmt.Sprintf("the content is %d bytes; file_write writes at most %d", len(args.Content), c.settings.WriteCapBytes)}).
			WithHint("raise writeCapBytes in Airlock's Built-in tools settings (#/builtin), or write less")
	}
	name := strings.TrimRight(filepath.Base(args.Path), ". ")
	ext := strings.ToLower(filepath.Ext(name))
	if ext != "" && slices.Contains(c.settings.ExecutableExtensions, ext) {
		return (&core.Error{Code: EExecutableRefused,
			Message: fmt.Sprintf("%s files are executable; file_write does not write them", ext)}).
			WithHint(fmt.Sprintf("remove %s from executableExtensions in Airlock's Built-in tools settings (#/builtin) to allow it", ext))
	}
	if kind := executableContent([]byte(args.Content)); kind != "" {
		return core.Errorf(EExecutableRefused, "the content is an executable (%s); file_write does not write executables", kind)
	}
	return nil
}

// executableContent names the executable format data starts with, or "".
func executableContent(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("#!")):
		return "a script with a #! line"
	case bytes.HasPrefix(data, []byte("\x7fELF")):
		return "ELF"
	case bytes.HasPrefix(data, []byte("MZ")) && bytes.IndexByte(data[:min(len(data), 512)], 0) >= 0:
		// Text may start with MZ; a PE/DOS header has NUL bytes at once.
		return "PE/DOS"
	}
	for _, magic := range [][]byte{
		{0xfe, 0xed, 0xfa, 0xce}, {0xce, 0xfa, 0xed, 0xfe}, // Mach-O 32-bit
		{0xfe, 0xed, 0xfa, 0xcf}, {0xcf, 0xfa, 0xed, 0xfe}, // Mach-O 64-bit
		{0xca, 0xfe, 0xba, 0xbe}, {0xbe, 0xba, 0xfe, 0xca}, // Mach-O universal
	} {
		if bytes.HasPrefix(data, magic) {
			return "Mach-O"
		}
	}
	return ""
}

// openParent opens the folder dirRel inside root, creating it and its
// missing parents when needed, and returns it with the folders it created
// (relative to root, outermost first) so that a failed write can remove
// them again.
func openParent(root *os.Root, dirRel string) (*os.Root, []string, error) {
	dir, err := root.OpenRoot(dirRel)
	if !errors.Is(err, fs.ErrNotExist) {
		return dir, nil, err
	}
	parts := strings.Split(dirRel, string(filepath.Separator))
	prefix := func(n int) string { return filepath.Join(parts[:n]...) }
	// The folders that exist form a prefix of the path: find its end by
	// bisection, so a deep path costs a few lookups, not one per level.
	lo, hi := 0, len(parts) // prefix(lo) exists; prefix(hi) does not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if _, err := root.Stat(prefix(mid)); err == nil {
			lo = mid
		} else {
			hi = mid
		}
	}
	if err := root.MkdirAll(dirRel, 0o755); err != nil {
		return nil, nil, err
	}
	var created []string
	for n := lo + 1; n <= len(parts); n++ {
		created = append(created, prefix(n))
	}
	dir, err = root.OpenRoot(dirRel)
	if err != nil {
		removeCreated(root, created)
		return nil, nil, err
	}
	return dir, created, nil
}

// removeCreated removes the folders a failed write created, innermost
// first; a folder something else filled meanwhile stays.
func removeCreated(root *os.Root, created []string) {
	for i := len(created) - 1; i >= 0; i-- {
		root.Remove(created[i])
	}
}

// writeAtomic writes data to name in dir: a temporary file beside it,
// synced, then linked (no overwrite) or renamed (overwrite) into place.
// Neither step follows a symbolic link at name.
func writeAtomic(dir *os.Root, name string, data []byte, overwrite bool, shown string) error {
	fail := func(err error) error {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return core.Errorf(EIO, "writing %s failed: %v", shown, err)
	}
	perm := os.FileMode(0o644)
	fi, err := dir.Lstat(name)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return (&core.Error{Code: ESymlinkTarget, Message: fmt.Sprintf("%s is a symbolic link; file_write never writes through one", shown)}).
			WithHint("write to the file the link points to, by its own path")
	case err == nil && !fi.Mode().IsRegular():
		return regularFile(shown, fi)
	case err == nil && !overwrite:
		return existsError(shown)
	case err == nil:
		perm = fi.Mode().Perm() &^ 0o111 // never leave it executable
	case !errors.Is(err, fs.ErrNotExist):
		return fail(err)
	}
	tmp, err := tempName(name)
	if err != nil {
		return fail(err)
	}
	f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm) // O_EXCL never follows a link
	if err != nil {
		return fail(err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Chmod(perm) // the umask may have narrowed it; never widen past perm
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		dir.Remove(tmp)
		return fail(werr)
	}
	if overwrite {
		err = dir.Rename(tmp, name)
	} else {
		err = placeNew(dir, tmp, name)
	}
	if err != nil {
		dir.Remove(tmp)
		if errors.Is(err, fs.ErrExist) {
			return existsError(shown)
		}
		return fail(err)
	}
	if d, err := dir.Open("."); err == nil {
		d.Sync() // make the rename durable; a failure here loses nothing written
		d.Close()
	}
	return nil
}

// placeNew moves tmp to name only if name does not exist: a hard link fails
// when the name is taken, atomically, where a check before a rename would
// leave a window. File systems without hard links get that rename.
func placeNew(dir *os.Root, tmp, name string) error {
	err := dir.Link(tmp, name)
	if err == nil {
		dir.Remove(tmp)
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return err
	}
	if !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.ENOTSUP) && !errors.Is(err, syscall.EOPNOTSUPP) && !errors.Is(err, syscall.EMLINK) {
		return err
	}
	if _, lerr := dir.Lstat(name); lerr == nil {
		return fs.ErrExist
	}
	return dir.Rename(tmp, name)
}

func existsError(shown string) *core.Error {
	return (&core.Error{Code: EFileExists, Message: fmt.Sprintf("%s already exists", shown)}).
		WithHint("pass overwrite: true to replace it")
}

// tempName is a fresh hidden name beside name, short enough for any file
// system.
func tempName(name string) (string, error) {
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	if len(name) > 200 {
		name = name[:200]
	}
	return "." + name + ".airlock-" + hex.EncodeToString(r[:]) + ".tmp", nil
}

// protectedDir refuses a write whose folder, as opened, lies in the data
// directory.
func (c *config) protectedDir(dir *os.Root, res *resolved, base string) error {
	if len(c.protected) == 0 {
		return nil
	}
	f, err := dir.Open(".")
	if err != nil {
		return res.fail(err)
	}
	defer f.Close()
	return c.protectedErr(filepath.Join(fdPath(f, filepath.Dir(realPath(res))), base), res.shown)
}
