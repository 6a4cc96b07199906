package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/tokenfile"
)

func TestTokenCmd(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := TokenCmd(dir, args, &out); err != nil {
			t.Fatalf("token %v: %v", args, err)
		}
		return strings.TrimSpace(out.String())
	}
	first := run()
	if !tokenfile.Valid(first) {
		t.Fatalf("token printed %q", first)
	}
	if again := run(); again != first {
		t.Errorf("second run printed %q, want %q", again, first)
	}
	rotated := run("--rotate")
	if rotated == first || !tokenfile.Valid(rotated) {
		t.Errorf("--rotate printed %q", rotated)
	}
	if again := run(); again != rotated {
		t.Errorf("after --rotate printed %q, want %q", again, rotated)
	}
	if help := run("-h"); !strings.Contains(help, "usage: airlock token") {
		t.Errorf("-h printed %q", help)
	}
	other := t.TempDir()
	if tok := run("--data-dir", other); tok == rotated || !tokenfile.Valid(tok) {
		t.Errorf("--data-dir: got %q, want a new token in the other dir", tok)
	}
	if err := TokenCmd(dir, []string{"--bogus"}, &bytes.Buffer{}); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("unknown flag: %v, want invalid", err)
	}
}
