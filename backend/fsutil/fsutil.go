// Package fsutil holds the two file mechanisms Airlock uses in several
// places, written once: replacing a file atomically and durably, and
// watching one file for edits made by others.
//
// It imports the standard library and fsnotify only.
package fsutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// FileMode is the mode of every file Airlock writes in its data directory:
// they hold tokens, rules and the audit log, which are the user's alone.
const FileMode = 0o600

// DirMode is the mode of the data directory.
const DirMode = 0o700

// WriteFileAtomic replaces path with data so that a reader, or a crash at any
// moment, sees the old file or the new one, never a mix: a temp file in the
// same directory, fsync, rename, fsync of the directory. The file gets mode
// FileMode and the directory is created with DirMode when missing.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return fmt.Errorf("write %s: create directory: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp") // CreateTemp makes it 0600
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	if err := f.Chmod(FileMode); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(dir)
}

// CheckWritable reports whether WriteFileAtomic could replace path now: a
// file can be made in its directory, and the file itself, when it exists,
// may be written (a read-only data directory, an immutable file). It
// writes nothing that stays.
func CheckWritable(path string) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil // WriteFileAtomic makes it
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	f.Close()
	os.Remove(f.Name())
	g, err := os.OpenFile(path, os.O_WRONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return g.Close()
}

// SyncDir fsyncs a directory, so that a rename or a new file in it survives
// a power loss. Systems that cannot sync a directory are not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// Watch calls changed after the file at path was edited and then stayed
// quiet for debounce, until ctx ends. It also calls it once right after
// the watch is set up, so that an edit made just before Watch is not missed.
// It returns once the watch is set up; an error means the file cannot be
// watched. stopped closes once the watch has ended (ctx ended) and no call
// of changed is under way.
//
// It watches the directory, not the file: editors that save by writing a
// new file and renaming it over the old one would otherwise leave the watch
// on a file that no longer exists. Events the watcher dropped (its queue
// overflowed) count as an edit, so nothing is missed. Recognising one's own
// writes is the caller's business (compare content hashes).
func Watch(ctx context.Context, path string, debounce time.Duration, changed func()) (stopped <-chan struct{}, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return nil, fmt.Errorf("watch %s: create directory: %w", path, err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer w.Close()
		name := filepath.Base(path)
		timer := time.NewTimer(0)
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Base(ev.Name) == name {
					timer.Reset(debounce)
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				timer.Reset(debounce)
			case <-timer.C:
				changed()
			}
		}
	}()
	return done, nil
}
