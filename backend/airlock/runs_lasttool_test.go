package airlock_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/teams"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// A run shows the agent's latest call in this run (the task's Runs panel:
// "Latest call", and the card's tooltip), and the panel's "waiting for
// approval" banner is the agent's pending approvals. Both are the agent's
// through any connection: the same agent connected elsewhere with its own
// token (the person's interactive Claude Code, say) makes a call, and the
// run — which only ever calls help here — shows that call as its own.
func TestRunsLatestCallIsTheRunsOwn(t *testing.T) {
	rs := newRuns(t)
	script := rs.script(t, `
steps:
  - poll: {call: help, until: {contains: never-there}, every: 50ms, timeout: 10m}
`)
	if _, err := rs.in.API.Runs.SetProfile(rs.worker.Agent.ID, runner.Profile{Template: runner.TemplateScripted, ExtraArgs: []string{script}, WorkDir: rs.work}); err != nil {
		t.Fatal(err)
	}
	sub := rs.in.Hub.Subscribe([]string{"run"})
	defer sub.Close()
	var mu sync.Mutex
	var seen []runner.ToolCall
	go func() {
		for ev := range sub.C() {
			if r, ok := ev.Payload.(runner.Run); ok && ev.Name == runner.EventRunStatus && r.LastTool != nil {
				mu.Lock()
				seen = append(seen, *r.LastTool)
				mu.Unlock()
			}
		}
	}()
	noted := func(after time.Time) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range seen {
			if c.Tool == "help" && c.At.After(after) {
				return true
			}
		}
		return false
	}
	if _, err := rs.in.API.Runs.Start(rs.task(t, teams.StatusInProgress)); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 60*time.Second, func() bool { return noted(time.Time{}) }, "the run's own calls are never noted")

	c := mcp.NewClient(&mcp.Implementation{Name: "elsewhere", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: rs.in.Info.MCPURL + "?project=apollo", HTTPClient: &http.Client{Transport: bearer{rs.worker.Token}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_my_tasks", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	// The runner notes calls in the order they are recorded: once it noted
	// a call the run made after this one, it has seen this one too.
	done := time.Now()
	testutil.Eventually(t, 60*time.Second, func() bool { return noted(done) }, "the run's later calls are never noted")
	// Its calls waiting for approval are found by its MCP sessions: the
	// other connection's is not among them.
	live, _ := rs.in.API.Runs.Live()
	if len(live) != 1 || len(live[0].Sessions) == 0 || slices.Contains(live[0].Sessions, sess.ID()) {
		t.Errorf("the run's sessions = %+v, want its own only (not %s)", live, sess.ID())
	}
	mu.Lock()
	defer mu.Unlock()
	for _, c := range seen {
		if c.Tool != "help" {
			t.Errorf("the run (which calls only help) showed %s as its latest call: a call its agent made on another connection", c.Tool)
		}
	}
}
