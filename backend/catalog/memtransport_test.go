package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/catalog"
)

// outcome is what a client saw of one request: its result as JSON, or the
// JSON-RPC error code and message.
type outcome struct {
	Result  string
	Code    int64
	Message string
}

func outcomeOf(t *testing.T, res any, err error) outcome {
	t.Helper()
	if err != nil {
		var w *jsonrpc.Error
		if !errors.As(err, &w) {
			return outcome{Message: "not a JSON-RPC error: " + err.Error()}
		}
		return outcome{Code: w.Code, Message: w.Message}
	}
	data, merr := jsonMarshal(res)
	if merr != nil {
		t.Fatal(merr)
	}
	return outcome{Result: data}
}

// exercise connects a client to a fresh server over the pair of transports
// and returns what the client saw of requests that succeed, fail in the
// handler, fail in the SDK, and of a request the server makes back to the
// client (sampling) and a notification (tools/list_changed).
func exercise(t *testing.T, ct, st mcp.Transport) []outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "<" + string(r.Params.Arguments) + ">"}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "fails", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: 4242, Message: "handler says no"}
	})
	s.AddTool(&mcp.Tool{Name: "wraps", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("plain error")
	})
	s.AddTool(&mcp.Tool{Name: "asks", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := r.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{res.Content}}, nil
	})
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	// The revision the catalogue speaks to its servers (source.go).
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	var out []outcome
	for _, p := range []*mcp.CallToolParams{
		{Name: "echo", Arguments: map[string]any{"a": "x&y"}},
		{Name: "fails", Arguments: map[string]any{}},
		{Name: "wraps", Arguments: map[string]any{}},
		{Name: "asks", Arguments: map[string]any{}},
		{Name: "missing", Arguments: map[string]any{}},
	} {
		res, err := cs.CallTool(ctx, p)
		out = append(out, outcomeOf(t, res, err))
	}
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "none"})
	out = append(out, outcomeOf(t, nil, err))
	tools, err := cs.ListTools(ctx, nil)
	out = append(out, outcomeOf(t, tools, err))

	s.RemoveTools("wraps")
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed notification")
	}

	// Closing the server's side ends the client's session: a call fails
	// instead of waiting.
	ss.Close()
	if err := cs.Wait(); err != nil {
		t.Logf("client session ended: %v", err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err == nil {
		t.Error("a call after the server closed succeeded")
	} else if ctx.Err() != nil {
		t.Errorf("a call after the server closed waited for the deadline: %v", err)
	}
	return out
}

// The catalogue's in-process transports behave as the SDK's in-memory
// transports (which encode every message as JSON): same results, same
// JSON-RPC error codes and messages, requests from the server to the
// client, notifications, and a closed side ends the other.
func TestInProcessTransportsAsInMemory(t *testing.T) {
	ct, st := mcp.NewInMemoryTransports()
	want := exercise(t, ct, st)
	ct2, st2 := catalog.InProcessTransports()
	got := exercise(t, ct2, st2)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("in-process transports differ from the SDK's in-memory ones (-in-memory +in-process):\n%s", diff)
	}
	if want[1].Code != 4242 || !strings.Contains(want[3].Result, "sampled") {
		t.Fatalf("the exercise did not reach what it checks: %+v", want)
	}
}

func jsonMarshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
