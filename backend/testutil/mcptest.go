package testutil

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServer is a small MCP server written with the Go SDK for tests that
// need a real server but not a third-party one: served in-process (the
// catalog's in-memory transports) it starts in microseconds, where an npm
// server takes a second of Node start-up.
//
// Tools: echo(message), add(a, b), slow(steps, step_ms) with progress,
// hang (returns only when cancelled), image, structured(city), whoami (the
// caller Airlock passed in _meta), log(message) (a log notification).
// Prompt: greeting(name). Resources: test://doc/readme and the template
// test://item/{id}.
type TestServer struct {
	*mcp.Server

	mu      sync.Mutex
	started []string // tools whose handler began, in order
	// cancelled: the reasons hang's calls were cancelled with, in order.
	cancelled []string
}

// NewTestServer builds the test server.
func NewTestServer() *TestServer {
	ts := &TestServer{}
	s := mcp.NewServer(&mcp.Implementation{Name: "airlock-test-server", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			var out []string
			for _, v := range []string{"Ada", "Alan", "Barbara"} {
				if strings.HasPrefix(v, req.Params.Argument.Value) {
					out = append(out, v)
				}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: out, Total: len(out)}}, nil
		},
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			ts.begin("subscribe " + req.Params.URI)
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			ts.begin("unsubscribe " + req.Params.URI)
			return nil
		},
	})
	ts.Server = s
	type touchIn struct {
		URI string `json:"uri"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "touch", Description: "Says a resource changed (notifications/resources/updated)."}, func(ctx context.Context, _ *mcp.CallToolRequest, in touchIn) (*mcp.CallToolResult, any, error) {
		ts.begin("touch")
		s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: in.URI})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "touched"}}}, nil, nil
	})
	type askIn struct {
		Question string `json:"question"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "ask_model", Description: "Asks the client's model (sampling)."}, func(ctx context.Context, req *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, any, error) {
		ts.begin("ask_model")
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 50,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Question}}}})
		if err != nil {
			return nil, nil, err
		}
		text := ""
		if tc, ok := res.Content.(*mcp.TextContent); ok {
			text = tc.Text
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the model said: " + text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ask_user", Description: "Asks the client's user (elicitation)."}, func(ctx context.Context, req *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, any, error) {
		ts.begin("ask_user")
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: in.Question,
			RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("the user answered %s: %v", res.Action, res.Content["name"])}}}, nil, nil
	})
	type echoIn struct {
		Message string `json:"message" jsonschema:"the text to echo"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the message."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		ts.begin("echo")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
	})
	type addIn struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	type addOut struct {
		Sum float64 `json:"sum"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."}, func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
		ts.begin("add")
		return nil, addOut{Sum: in.A + in.B}, nil
	})
	type slowIn struct {
		Steps  int `json:"steps"`
		StepMs int `json:"step_ms"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Works in steps, sending progress after each."}, func(ctx context.Context, req *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
		ts.begin("slow")
		tok := req.Params.GetProgressToken()
		for i := 1; i <= in.Steps; i++ {
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(time.Duration(in.StepMs) * time.Millisecond):
			}
			if tok != nil {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps)})
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("done after %d steps", in.Steps)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Returns only when cancelled."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		ts.begin("hang")
		<-ctx.Done()
		// What the server heard: the reason its client gave in
		// notifications/cancelled.
		var byPeer *mcp.CancelledByPeer
		if errors.As(context.Cause(ctx), &byPeer) {
			ts.mu.Lock()
			ts.cancelled = append(ts.cancelled, byPeer.Reason)
			ts.mu.Unlock()
		}
		return nil, nil, ctx.Err()
	})
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	mcp.AddTool(s, &mcp.Tool{Name: "image", Description: "Returns a tiny PNG."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		ts.begin("image")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: png, MIMEType: "image/png"}}}, nil, nil
	})
	type cityIn struct {
		City string `json:"city"`
	}
	type weather struct {
		City        string  `json:"city"`
		Temperature float64 `json:"temperature"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "structured", Description: "Returns structured content."}, func(_ context.Context, _ *mcp.CallToolRequest, in cityIn) (*mcp.CallToolResult, weather, error) {
		ts.begin("structured")
		return nil, weather{City: in.City, Temperature: 21.5}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Says who Airlock says is calling."}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		ts.begin("whoami")
		c, ok := core.CallerFromMeta(req.Params.Meta)
		if !ok {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "caller: (not given)"}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "caller: " + c.AgentID + " session " + c.Session}}}, nil, nil
	})
	type logIn struct {
		Message string `json:"message"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "log", Description: "Sends a log notification."}, func(ctx context.Context, req *mcp.CallToolRequest, in logIn) (*mcp.CallToolResult, any, error) {
		ts.begin("log")
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "test", Data: in.Message})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "greeting", Description: "Greets someone.", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"]}}}}, nil
		})
	s.AddResource(&mcp.Resource{Name: "readme", URI: "test://doc/readme", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "read me"}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "item", URITemplate: "test://item/{id}"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "item " + req.Params.URI}}}, nil
		})
	return ts
}

func (ts *TestServer) begin(tool string) {
	ts.mu.Lock()
	ts.started = append(ts.started, tool)
	ts.mu.Unlock()
}

// Cancelled returns the reasons given in the notifications/cancelled that
// ended calls of hang, in order.
func (ts *TestServer) Cancelled() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.cancelled...)
}

// Started returns the tools whose handlers have begun, in order: a test
// waits on it instead of sleeping.
func (ts *TestServer) Started() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.started...)
}
