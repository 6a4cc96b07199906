package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/fsnotify/fsnotify"
)

// debounce is how long the file must stay quiet before it is reread. Editors
// save in bursts (truncate + write, or write temp + rename); reading in the
// middle of one would see a half-written file.
const debounce = 150 * time.Millisecond

// Watch applies edits made to the servers file by others (an editor, the CLI,
// another tool) until ctx is done. It returns once the watch is set up; an
// error means the file cannot be watched.
//
// It watches the directory, not the file: editors that save by writing a new
// file and renaming it over the old one would otherwise leave the watch on a
// file that no longer exists. A valid edit replaces the servers in effect and
// notifies subscribers and the event sink; an invalid one keeps the last good
// servers and reports why in State().Error (and through the event sink).
// Airlock's own writes are recognised by their content hash and ignored.
func (s *Store) Watch(ctx context.Context) error {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("watch servers file: create %s: %w", dir, err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch servers file: %w", err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return fmt.Errorf("watch servers file: %w", err)
	}
	go s.watchLoop(ctx, w)
	return nil
}

func (s *Store) watchLoop(ctx context.Context, w *fsnotify.Watcher) {
	defer w.Close()
	name := filepath.Base(s.path)
	timer := time.NewTimer(0) // catch edits made between New and Watch
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if filepath.Base(ev.Name) != name {
				continue // temp files, other files in the data dir
			}
			timer.Reset(debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			// Events may have been lost (queue overflow): reread to be sure.
			_ = err
			timer.Reset(debounce)
		case <-timer.C:
			s.reload()
		}
	}
}

// reload rereads the file and applies it when it changed since it was last
// read or written.
func (s *Store) reload() {
	s.mu.Lock()
	outcome := "unchanged"
	defer func() {
		if s.testHookReload != nil {
			s.testHookReload(outcome)
		}
	}()
	data, h, err := s.read()
	switch {
	case err != nil:
		s.state.Error = err.Error()
		s.lastSeen = hashNone
		outcome = "invalid"
	case h == s.lastSeen:
		s.mu.Unlock()
		return
	case h == hashMissing:
		// Deleting the file is as good as emptying it, as at startup.
		s.adopt(document{}, h)
		outcome = "applied"
	default:
		doc, err := parseStrict(data)
		if err != nil {
			s.state.Error = describe(s.path, err)
			s.lastSeen = h
			outcome = "invalid"
			break
		}
		s.adopt(doc, h)
		outcome = "applied"
	}
	if outcome == "applied" {
		s.notifyUnlock()
		return
	}
	// The servers did not change: only the event sink hears about the error.
	st := s.state
	s.notifyMu.Lock()
	s.mu.Unlock()
	defer s.notifyMu.Unlock()
	s.sink.Emit(core.EventServersChanged, st)
}
