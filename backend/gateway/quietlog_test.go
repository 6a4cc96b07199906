package gateway

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// A notification that finds no stream is not a warning in Airlock's log
// (a client without a GET stream cannot get list_changed); other warnings
// are.
func TestQuietUndelivered(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(quietUndelivered{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})})
	log.Warn("calling notifications/tools/list_changed: rejected by transport: no stream")
	log.Warn("keepalive ping failed")
	if got := buf.String(); strings.Contains(got, "rejected by transport") || !strings.Contains(got, "keepalive ping failed") {
		t.Errorf("log = %q, want only the other warning", got)
	}
	buf.Reset()
	debug := slog.New(quietUndelivered{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})})
	debug.Warn("calling notifications/tools/list_changed: rejected by transport: no stream")
	if got := buf.String(); !strings.Contains(got, "level=DEBUG") {
		t.Errorf("with debug logging: %q, want it at debug level", got)
	}
}
