package gateway_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A downstream's log line written while it handles one session's call goes
// to that session, not to every session of the same agent: with the one
// agent token Airlock prints at start, every Claude Code window, Cursor and
// scripted agent is the same agent, and each would read the others' call
// logs (file names, arguments). Issue 11 asks for everything "per session
// and to the right session", as sampling relays and resource updates
// already are.
func TestCallLogsReachOnlyTheCallingSession(t *testing.T) {
	e := newEnv(t, catalog.Options{LogWindow: time.Nanosecond}) // idle lines are told apart at once
	srv := mcp.NewServer(&mcp.Implementation{Name: "whisper", Version: "1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}})
	mcp.AddTool(srv, &mcp.Tool{Name: "whisper"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct {
		Say string `json:"say"`
	}) (*mcp.CallToolResult, any, error) {
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: in.Say})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	e.cat.AddInProcess("whisper", srv, false)
	e.waitRunning(t, "whisper")

	heard := map[string]chan string{"A": make(chan string, 20), "B": make(chan string, 20)}
	sessions := map[string]*mcp.ClientSession{}
	for _, who := range []string{"A", "B"} {
		sessions[who] = e.connectAs(t, testToken, &mcp.ClientOptions{ // the same agent, two sessions
			LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
				heard[who] <- fmt.Sprint(req.Params.Data)
			},
		})
		if err := sessions[who].SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, 10*time.Second, func() bool { return slices.Contains(toolNames(t, sessions[who]), "whisper__whisper") },
			"session %s never saw whisper__whisper", who)
	}
	if _, err := sessions["A"].CallTool(context.Background(), &mcp.CallToolParams{Name: "whisper__whisper",
		Arguments: map[string]any{"say": "A's line"}}); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, heard["A"], "A's own log line"); got != "A's line" {
		t.Fatalf("A heard %q, want its own line", got)
	}
	// The server logs while idle: a marker both sessions hear; whatever B
	// heard before it has arrived by then.
	for ss := range srv.Sessions() {
		ss.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Data: "idle marker"})
	}
	if got := receive(t, heard["B"], "the idle marker at B"); got != "idle marker" {
		t.Errorf("session B heard %q, logged during session A's call; want only the server's idle marker", got)
	}
}
