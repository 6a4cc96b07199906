package tokenfile

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/airlock-dev/airlock/backend/core"
)

func TestAgentToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data") // created on demand
	if _, err := AgentToken(dir, false); core.ErrorCode(err) != core.ENotFound {
		t.Fatalf("AgentToken without create on an empty dir: %v, want not_found", err)
	}
	tok, err := AgentToken(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, "alk_") || len(tok) != len("alk_")+43 || !validToken(tok) {
		t.Errorf("token %q is not alk_ + 43 base64url characters", tok)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(filepath.Join(dir, TokenFile))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
		}
	}
	for _, create := range []bool{false, true} {
		again, err := AgentToken(dir, create)
		if err != nil || again != tok {
			t.Errorf("AgentToken(create=%v) = %q, %v; want the same token %q", create, again, err, tok)
		}
	}
	rotated, err := RotateToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rotated == tok || !validToken(rotated) {
		t.Errorf("rotated token %q: want a new valid token", rotated)
	}
	if got, _ := AgentToken(dir, false); got != rotated {
		t.Errorf("after rotation AgentToken = %q, want %q", got, rotated)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("data dir holds %d entries, want only %s", len(entries), TokenFile)
	}
}

func TestAgentTokenConcurrentCreate(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	toks := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, err := AgentToken(dir, true)
			if err != nil {
				t.Error(err)
			}
			toks[i] = tok
		}()
	}
	wg.Wait()
	for _, tok := range toks[1:] {
		if tok != toks[0] {
			t.Fatalf("concurrent creators got different tokens: %q", toks)
		}
	}
}

func TestAgentTokenRejectsGarbage(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, TokenFile), []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := AgentToken(dir, true); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("AgentToken on a garbage file: %v, want invalid", err)
	}
}

func TestTokenMatches(t *testing.T) {
	tok, err := newToken()
	if err != nil {
		t.Fatal(err)
	}
	h := HashToken(tok)
	tests := []struct {
		presented string
		want      bool
	}{
		{tok, true},
		{tok + " ", false},
		{tok[:len(tok)-1], false},
		{"", false},
		{strings.ToUpper(tok), false},
	}
	for _, tt := range tests {
		if got := TokenMatches(h, tt.presented); got != tt.want {
			t.Errorf("TokenMatches(%q) = %v, want %v", tt.presented, got, tt.want)
		}
	}
}
