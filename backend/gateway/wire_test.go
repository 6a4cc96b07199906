package gateway_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// framing records how the answers to tools/call POSTs were framed.
type framing struct {
	base http.RoundTripper

	mu  sync.Mutex
	got []string // per tools/call answer: "length" or "chunked"
}

func (f *framing) RoundTrip(r *http.Request) (*http.Response, error) {
	var isCall bool
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		isCall = strings.Contains(string(body), `"method":"tools/call"`)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := f.base.RoundTrip(r)
	if err == nil && isCall {
		how := "chunked"
		if resp.ContentLength > 0 && len(resp.TransferEncoding) == 0 {
			how = "length"
		}
		f.mu.Lock()
		f.got = append(f.got, how)
		f.mu.Unlock()
	}
	return resp, err
}

// An answer that is the only event of its POST goes out with a
// Content-Length (one write; the client can reuse its connection at once);
// an answer after a relayed request is still streamed. See PATCHES.md in
// third_party/go-sdk.
func TestAnswerFraming(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	f := &framing{base: http.DefaultTransport}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "42"}}, nil
		},
	})
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.http.URL + "/mcp", HTTPClient: &http.Client{Transport: f}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ctx := context.Background()
	for _, call := range []*mcp.CallToolParams{
		{Name: "test__echo", Arguments: map[string]any{"message": "one event"}},
		{Name: "test__ask_model", Arguments: map[string]any{"question": "a relayed request first"}},
		{Name: "test__echo", Arguments: map[string]any{"message": "one event again"}},
	} {
		res, err := sess.CallTool(ctx, call)
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v, %v", call.Name, res, err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if diff := cmp.Diff([]string{"length", "chunked", "length"}, f.got); diff != "" {
		t.Errorf("framing of the tools/call answers (-want +got):\n%s", diff)
	}
}
