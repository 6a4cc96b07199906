package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Red team: remote MCP servers commonly take their API key in the URL
// (?apiKey=…, or a path segment). When such a server cannot be reached,
// the tool error an agent gets quotes Go's transport error, which holds the
// whole URL: the agent learns the server's key and can call it directly,
// around every rule, approval and audit of Airlock. What an agent is told
// must not carry the server's URL secrets.
func TestRedTeamUnreachableServerErrorLeaksURLSecret(t *testing.T) {
	const secret = "SUPERSECRET-apikey-42"
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, struct{}, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, struct{}{}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	e := newEnv(t, catalog.Options{}, core.ServerConfig{ID: "remote", URL: hs.URL + "/mcp?apiKey=" + secret})
	sess := e.connect(t, nil)
	ctx := context.Background()
	if res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "remote__echo", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("first call: %v, %+v", err, res)
	}
	// The remote goes away (an outage, a restart of it).
	hs.CloseClientConnections()
	hs.Close()
	var got string
	testutil.Eventually(t, 10*time.Second, func() bool {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "remote__echo", Arguments: map[string]any{}})
		if err != nil {
			got = err.Error()
			return true
		}
		if !res.IsError {
			return false
		}
		got = text(t, res)
		return true
	}, "no refused call")
	if strings.Contains(got, secret) {
		t.Errorf("the agent is told the server's URL secret: %s", got)
	}
}
