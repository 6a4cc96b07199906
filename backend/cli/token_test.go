package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
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

// Deleting the agent "default" ends the shared token: `airlock token`
// says so instead of printing a token that works for nobody, and `agents
// rm default` warns (found by a bad-input test).
func TestTokenOfADeletedDefaultAgent(t *testing.T) {
	dir := t.TempDir()
	if err := TokenCmd(dir, nil, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := RunAgents(context.Background(), db, nil, []string{"rm", "default"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if !strings.Contains(out.String(), "the shared agent token") || !strings.Contains(out.String(), "works for nobody now") {
		t.Errorf("agents rm default printed %q, want a word about the shared token", out.String())
	}
	for _, args := range [][]string{nil, {"--rotate"}} {
		var tok bytes.Buffer
		err := TokenCmd(dir, args, &tok)
		if core.ErrorCode(err) != core.ENotFound || !strings.Contains(err.Error(), `"default", which was deleted`) {
			t.Errorf("token %v = %v (printed %q), want not_found: the agent was deleted", args, err, tok.String())
		}
	}
}
