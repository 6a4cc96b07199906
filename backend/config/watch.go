package config

import (
	"context"
	"fmt"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/fsutil"
)

// debounce is how long the file must stay quiet before it is reread. Editors
// save in bursts (truncate + write, or write temp + rename); reading in the
// middle of one would see a half-written file.
const debounce = 150 * time.Millisecond

// Watch applies edits made to the servers file by others (an editor, the CLI,
// another tool) until ctx is done. It returns once the watch is set up; an
// error means the file cannot be watched. stopped closes once the watch has
// ended and no reread is under way.
//
// It watches the directory, not the file: editors that save by writing a new
// file and renaming it over the old one would otherwise leave the watch on a
// file that no longer exists. A valid edit replaces the servers in effect and
// notifies subscribers and the event sink; an invalid one keeps the last good
// servers and reports why in State().Error (and through the event sink).
// Airlock's own writes are recognised by their content hash and ignored.
func (s *Store) Watch(ctx context.Context) (stopped <-chan struct{}, err error) {
	stopped, err = fsutil.Watch(ctx, s.path, debounce, s.reload)
	if err != nil {
		return nil, fmt.Errorf("watch servers file: %w", err)
	}
	return stopped, nil
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
	// The servers did not change: the event sink and the log hear about the error.
	st := s.state
	if s.log != nil {
		s.log.Warn("the servers file is not applied; the servers in effect stay", "err", st.Error)
	}
	s.notifyMu.Lock()
	s.mu.Unlock()
	defer s.notifyMu.Unlock()
	s.sink.Emit(core.EventServersChanged, st)
}
