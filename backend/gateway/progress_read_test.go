package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP lets any request carry a progress token, and a server reading a big
// resource or building a prompt reports progress on it; clients reset
// their request timeout on progress (the TypeScript SDK's
// resetTimeoutOnProgress). Through Airlock only tools/call keeps its
// token: prompts/get and resources/read reach the server without it, so
// the agent hears nothing and a long read times out where it would not
// directly.
func TestProgressOfPromptsAndReadsPassesThrough(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	sawToken := make(chan string, 2)
	progress := func(ctx context.Context, ss *mcp.ServerSession, tok any) {
		if tok == nil {
			sawToken <- "none"
			return
		}
		sawToken <- "some"
		ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2})
	}
	srv.AddPrompt(&mcp.Prompt{Name: "digest"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		progress(ctx, req.Session, req.Params.GetProgressToken())
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "summarise"}}}}, nil
	})
	srv.AddResource(&mcp.Resource{Name: "dump", URI: "slow://dump"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		progress(ctx, req.Session, req.Params.GetProgressToken())
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "slow://dump", Text: "rows"}}}, nil
	})
	e.cat.AddInProcess("slow", srv, false)
	e.waitRunning(t, "slow")

	heard := make(chan any, 4)
	sess := e.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		heard <- req.Params.ProgressToken
	}})
	ctx := context.Background()
	for _, c := range []struct {
		what string
		do   func() error
	}{
		{"prompts/get", func() error {
			p := &mcp.GetPromptParams{Name: "slow__digest"}
			p.SetProgressToken("prompt-1")
			_, err := sess.GetPrompt(ctx, p)
			return err
		}},
		{"resources/read", func() error {
			p := &mcp.ReadResourceParams{URI: "slow://dump"}
			p.SetProgressToken("read-1")
			_, err := sess.ReadResource(ctx, p)
			return err
		}},
	} {
		if err := c.do(); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if got := receive(t, sawToken, c.what+" at the server"); got != "some" {
			t.Errorf("%s reached the server without the agent's progress token", c.what)
			continue
		}
		select {
		case <-heard:
		case <-time.After(10 * time.Second):
			t.Errorf("the server reported progress on %s; the agent never heard it", c.what)
		}
	}
}
