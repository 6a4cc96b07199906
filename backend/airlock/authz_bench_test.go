package airlock_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// BenchmarkListTools500 is an agent's tools/list through Airlock when its
// role lets it see 500 downstream tools: the real gateway and the real
// authorization filter (each tool checked for this agent), over Streamable
// HTTP. "sdk-client" includes the Go SDK client decoding and validating the
// 500 tools (more than half the time); "airlock" is what Airlock spends:
// a plain HTTP client posts the request and reads the answer. Issue 7's
// target is ≤ 1 ms.
//
//	go test ./backend/airlock -run '^$' -bench ListTools500 -benchtime 2000x
func BenchmarkListTools500(b *testing.B) {
	big := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, nil)
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"path": {Type: "string", Description: "a file"}}}
	for i := range 500 {
		big.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool_%03d", i), Description: "one of many tools of a big server", InputSchema: schema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	in := startWith(b, airlock.Options{DataDir: b.TempDir(), InProcess: map[string]*mcp.Server{"big": big}})
	if _, err := in.API.Agents.CreateRole(authz.RoleInput{Name: "big", Servers: []string{"big"}}); err != nil {
		b.Fatal(err)
	}
	agent, err := in.API.Agents.Create(authz.AgentInput{Name: "lister", Kind: authz.KindWorker, Role: "big"})
	if err != nil {
		b.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: in.Info.MCPURL, HTTPClient: &http.Client{Transport: bearer{agent.Token}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sess.Close() })
	count := func() int {
		res, err := sess.ListTools(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		return len(res.Tools)
	}
	// 500 of big's tools, plus Airlock's own the agent may call.
	testutil.Eventually(b, 60*time.Second, func() bool { return count() >= 500 }, "the agent never saw the 500 tools")
	want := count()
	b.Run("sdk-client", func(b *testing.B) {
		for range b.N {
			if n := count(); n != want {
				b.Fatalf("tools/list returned %d tools, want %d", n, want)
			}
		}
	})
	b.Run("airlock", func(b *testing.B) {
		post := rawSession(b, in.Info.MCPURL, agent.Token)
		for range b.N {
			body := post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			if n := bytes.Count(body, []byte(`"name":"big__tool_`)); n != 500 {
				b.Fatalf("tools/list answered %d of big's tools, want 500: %.300s", n, body)
			}
		}
	})
}

// rawSession initializes an MCP session with a plain HTTP client and
// returns a function that posts one JSON-RPC message on it and returns the
// answer's body.
func rawSession(b *testing.B, url, token string) func(string) []byte {
	b.Helper()
	client := &http.Client{}
	var sid string
	post := func(msg string) []byte {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(msg))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode >= 300 {
			b.Fatalf("HTTP %d: %v %s", resp.StatusCode, err, body)
		}
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			sid = id
		}
		return body
	}
	post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return post
}
