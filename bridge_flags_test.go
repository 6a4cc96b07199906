package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/core"
)

// `airlock bridge` takes --purpose and --project as airlock-bridge does:
// they reach the URL it connects to, and a purpose that is neither task
// nor chat is refused before it connects.
func TestBridgeCommandPurposeAndProject(t *testing.T) {
	queries := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case queries <- r.URL.RawQuery:
		default:
		}
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	getenv := func(string) string { return "" }
	bridge := func(args ...string) error {
		args = append([]string{"bridge", "--data-dir", t.TempDir(), "--token", "alk_test", "--url", srv.URL + "/mcp"}, args...)
		return run(context.Background(), args, getenv, strings.NewReader(""), io.Discard, io.Discard)
	}

	err := bridge("--purpose", "chat", "--project", "web")
	if core.ErrorCode(err) != core.EUnauthorized {
		t.Fatalf("bridge against a server that refuses the token: %v, want %s", err, core.EUnauthorized)
	}
	if got, want := <-queries, "project=web&purpose=chat"; got != want {
		t.Errorf("the bridge connected with ?%s, want ?%s", got, want)
	}

	err = bridge("--purpose", "chta")
	if core.ErrorCode(err) != core.EInvalid || !strings.Contains(err.Error(), `--purpose is task or chat, not "chta"`) {
		t.Errorf("bridge --purpose chta: %v, want %s naming task and chat", err, core.EInvalid)
	}
}
