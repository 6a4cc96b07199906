package runner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// ownerSecret is in the environment Airlock runs with (as AIRLOCK_TOKEN is
// for the bridge): no run may see it.
const ownerSecret = "alk_owner-secret-never-in-a-run"

type agents map[string]authz.Agent

func (a agents) Agent(ref string) (authz.Agent, error) {
	for _, ag := range a {
		if ag.ID == ref || ag.Name == ref {
			return ag, nil
		}
	}
	return authz.Agent{}, core.Errorf(core.ENotFound, "Agent not found: %s", ref)
}

// tokens issues numbered run tokens to agents that have a token.
type tokens struct {
	mu       sync.Mutex
	has      map[string]bool
	issued   []string
	released int
}

func (t *tokens) HasToken(agentID string) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.has[agentID], nil
}

func (t *tokens) RunToken(agentID, projectID string) (runner.RunCredential, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tok := fmt.Sprintf("alk_run-%s-%d", agentID, len(t.issued)+1)
	t.issued = append(t.issued, tok)
	var once sync.Once
	return runner.RunCredential{Token: tok, Session: sessionOf(tok), Release: func() {
		once.Do(func() {
			t.mu.Lock()
			t.released++
			t.mu.Unlock()
		})
	}}, nil
}

// sessionOf is the agent session a fake run token stands for.
func sessionOf(tok string) string { return "run_" + tok }

func (t *tokens) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.issued[len(t.issued)-1]
}

func (t *tokens) counts() (issued, released int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.issued), t.released
}

// fixture is a runner over a real SQLite store, an in-memory board, two AI
// workers (ann, ben) with tokens, a person (pat) and an allowed folder.
type fixture struct {
	r       *runner.Runner
	board   *runner.MemoryBoard
	st      *store.Runs
	events  *recorder
	tokens  *tokens
	agents  agents
	root    string
	runsDir string
	bin     string // a folder for fake agent programs
	opts    runner.Options
}

type fixtureOpts struct {
	interval time.Duration
	settings *runner.Settings
}

func newFixture(t *testing.T, fo fixtureOpts) *fixture {
	t.Helper()
	db := testutil.MustOpenDB(t)
	f := &fixture{board: runner.NewMemoryBoard(filepath.Join(t.TempDir(), "logs")), st: store.NewRuns(db),
		events: &recorder{}, root: t.TempDir(), runsDir: filepath.Join(t.TempDir(), "runs"), bin: t.TempDir(),
		tokens: &tokens{has: map[string]bool{"ag_ann": true, "ag_ben": true, "ag_pat": true}}}
	f.agents = agents{
		"ann": {ID: "ag_ann", Name: "ann", Kind: authz.KindWorker, Status: authz.StatusActive},
		"ben": {ID: "ag_ben", Name: "ben", Kind: authz.KindWorker, Status: authz.StatusActive},
		"pat": {ID: "ag_pat", Name: "pat", Kind: authz.KindWorker, Human: true, Status: authz.StatusActive},
		"sue": {ID: "ag_sue", Name: "sue", Kind: authz.KindWorker, Status: authz.StatusSuspended},
		"tom": {ID: "ag_tom", Name: "tom", Kind: authz.KindWorker, Status: authz.StatusActive}, // no token
	}
	// The agents exist in the database too: a profile belongs to one.
	for _, a := range f.agents {
		a.ParentID, a.Role = authz.OwnerID, authz.RoleDefault
		a.CreatedAt, a.UpdatedAt = time.Now(), time.Now()
		if err := store.NewAgents(db).CreateAgent(a, [32]byte{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if fo.settings != nil {
		if err := f.st.SaveRunSettings(*fo.settings); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	f.opts = runner.Options{Store: f.st, Executions: f.board, Tasks: f.board, Agents: f.agents, Tokens: f.tokens,
		Roots: func() []string { return []string{f.root} }, MCPURL: "http://127.0.0.1:1/mcp", Airlock: "/nonexistent/airlock",
		RunsDir: f.runsDir, Events: f.events, OutputInterval: fo.interval,
		Environ: func() []string {
			return []string{"PATH=/usr/bin:/bin", "HOME=" + os.Getenv("HOME"), "AIRLOCK_TOKEN=" + ownerSecret, "AIRLOCK_DATA_DIR=/secret"}
		}}
	f.r, err = runner.New(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	f.board.OnChange(func(string) { f.r.Kick() })
	t.Cleanup(f.r.Close)
	return f
}

// script writes an executable shell script into the fixture's bin folder.
func (f *fixture) script(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(f.bin, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// task puts a task assigned to agentID on the board.
func (f *fixture) task(id, agentID, status string) {
	f.board.PutTask(runner.Task{ID: id, ProjectID: "prj_1", Title: "Fix the login page", Description: "It says 'oops'.",
		Status: status, AssigneeID: agentID})
}

func (f *fixture) profile(t *testing.T, p runner.Profile) {
	t.Helper()
	if _, err := f.r.SetProfile(p.AgentID, p); err != nil {
		t.Fatalf("set profile: %v", err)
	}
}

// ended waits for the event that says run id ended, and returns the run.
func (f *fixture) ended(t *testing.T, id string) runner.Run {
	t.Helper()
	var run runner.Run
	testutil.Eventually(t, 30*time.Second, func() bool {
		for _, e := range f.events.Events(runner.EventRunStatus) {
			if r := e.Payload.(runner.Run); r.ID == id && r.Status != runner.StatusRunning {
				run = r
				return true
			}
		}
		return false
	}, "run %s did not end", id)
	return run
}

// logLines returns a run's whole log without the timestamps.
func (f *fixture) logLines(t *testing.T, id string) []string {
	t.Helper()
	off := 0
	var out []string
	for {
		c, err := f.r.Log(id, runner.LogQuery{Offset: &off})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range c.Lines {
			if i := strings.Index(l, "] "); strings.HasPrefix(l, "[") && i > 0 {
				l = l[i+2:]
			}
			out = append(out, l)
		}
		off += len(c.Lines)
		if off >= c.TotalLines {
			return out
		}
	}
}

// gone reports whether no process with pid exists (kill(pid, 0) = ESRCH).
func gone(pid int) bool {
	return syscall.Kill(pid, 0) == syscall.ESRCH
}

// recorder keeps every event in order.
type recorder struct {
	mu     sync.Mutex
	events []testutil.Event
}

func (r *recorder) Emit(name string, payload any) {
	r.mu.Lock()
	r.events = append(r.events, testutil.Event{Name: name, Payload: payload})
	r.mu.Unlock()
}

func (r *recorder) all() []testutil.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]testutil.Event(nil), r.events...)
}

// Events returns the events named name, in order.
func (r *recorder) Events(name string) []testutil.Event {
	var out []testutil.Event
	for _, e := range r.all() {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
