package authz_test

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
)

// clock is a settable clock for TTLs, expiries and the limiter.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is a service over a real SQLite file with a fake clock.
type env struct {
	svc   *authz.Service
	db    *store.DB
	clock *clock
	dir   string
}

func newEnv(tb testing.TB, tune ...func(*authz.Options)) *env {
	tb.Helper()
	dir := tb.TempDir()
	db, err := store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	c := newClock()
	opts := authz.Options{Now: c.Now}
	for _, f := range tune {
		f(&opts)
	}
	svc, err := authz.New(store.NewAgents(db), opts)
	if err != nil {
		tb.Fatal(err)
	}
	return &env{svc: svc, db: db, clock: c, dir: dir}
}

// member is an agent made for a test, with its secrets.
type member struct {
	authz.CreatedAgent
}

func (m member) id() string { return m.Agent.ID }

func (e *env) agent(tb testing.TB, in authz.AgentInput) member {
	tb.Helper()
	c, err := e.svc.CreateAgent(in)
	if err != nil {
		tb.Fatalf("create agent %s: %v", in.Name, err)
	}
	return member{c}
}

func (e *env) project(tb testing.TB, name string) authz.Project {
	tb.Helper()
	p, err := e.svc.CreateProject(name, "")
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// resolve resolves a request on a fresh MCP session of a connection made
// with tok (none when empty) and the given purpose.
func (e *env) resolve(tb testing.TB, mcpID, tok, purpose string) (core.Caller, error) {
	tb.Helper()
	var id authz.Identity
	if tok != "" {
		var err error
		id, err = e.svc.IdentifyToken(tok)
		if err != nil && core.ErrorCode(err) != authz.ReasonSuspended {
			tb.Fatalf("identify token: %v", err)
		}
		if purpose != "" {
			id.Purpose = purpose
		}
	}
	return e.svc.Resolve(mcpID, id, "")
}

func mustResolve(tb testing.TB, e *env, mcpID, tok, purpose string) core.Caller {
	tb.Helper()
	c, err := e.resolve(tb, mcpID, tok, purpose)
	if err != nil {
		tb.Fatalf("resolve: %v", err)
	}
	return c
}

func toolTarget(server, name string) core.Target {
	return core.Target{Kind: core.KindToolCall, Server: server, Name: name}
}

func own(name string) core.Target { return toolTarget(authz.Server, name) }

// errSummary is what a test compares of a refusal.
type errSummary struct {
	Code, Message string
}

func summarize(err *core.Error) *errSummary {
	if err == nil {
		return nil
	}
	return &errSummary{Code: err.Code, Message: err.Message}
}

// newServiceOn opens a second service on e's database, as another process
// (the CLI) would.
func newServiceOn(tb testing.TB, e *env) *authz.Service {
	tb.Helper()
	db, err := store.Open(e.db.Path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	svc, err := authz.New(store.NewAgents(db), authz.Options{Now: e.clock.Now})
	if err != nil {
		tb.Fatal(err)
	}
	return svc
}
