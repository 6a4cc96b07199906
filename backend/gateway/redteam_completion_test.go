package gateway_test

import (
	"context"
	"testing"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Red team: completion/complete reaches a downstream server with strings
// the agent chose, and is refused for a prompt the agent may not use, yet
// neither shows in Activity: an agent can probe the prompts and resource
// templates of servers it is not granted (and send arbitrary argument
// values to them when granted) without a trace. A refused completion must
// be recorded, as a refused subscription is (KindSubscribe), and one that
// reaches a server must be recorded too (SPEC §2: every request an agent
// makes is audited).
func TestRedTeamCompletionIsAudited(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	sess := e.connect(t, nil)
	ctx := context.Background()

	// Allowed: it reaches the server.
	if _, err := sess.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "test__greeting"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"}}); err != nil {
		t.Fatalf("completion of an allowed prompt: %v", err)
	}
	// Refused: the agent may not use the prompt.
	e.access.hide("test", "greeting")
	if _, err := sess.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "test__greeting"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "probe"}}); err == nil {
		t.Fatal("completion of a hidden prompt was answered")
	}
	e.audited(t, core.ActivityFilter{Kind: "completion/complete"}, func(r []core.AuditRecord) bool {
		denied, allowed := false, false
		for _, rec := range r {
			denied = denied || rec.Decision == core.DecisionDenied
			allowed = allowed || rec.Decision != core.DecisionDenied
		}
		return denied && allowed
	}, "completion/complete (one refused, one answered) recorded in Activity")
}
