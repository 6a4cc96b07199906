package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// hangServer serves a "hang" tool that returns only when its context ends.
func hangServer(t *testing.T, jsonResponse bool) (url string, started chan struct{}) {
	started = make(chan struct{}, 10)
	s := NewServer(&Implementation{Name: "r", Version: "1"}, nil)
	AddTool(s, &Tool{Name: "hang"}, func(ctx context.Context, _ *CallToolRequest, _ struct{}) (*CallToolResult, any, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	h := NewStreamableHTTPHandler(func(*http.Request) *Server { return s }, &StreamableHTTPOptions{JSONResponse: jsonResponse})
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL, started
}

func rawPost(t *testing.T, url, sid, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func rawOpen(t *testing.T, url string) string {
	resp, _ := rawPost(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	rawPost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// Airlock patch (Withdraw): in JSON-response mode, a single call the client
// cancels ends its POST with 202 and no body (found in a review: 200 with
// Content-Type application/json and an empty body, which is no JSON, and the
// TypeScript client's response.json() throws).
func TestWithdrawJSONModeBody(t *testing.T) {
	url, started := hangServer(t, true)
	sid := rawOpen(t, url)
	type answer struct {
		resp *http.Response
		body string
	}
	got := make(chan answer, 1)
	go func() {
		resp, body := rawPost(t, url, sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"hang","arguments":{}}}`)
		got <- answer{resp, body}
	}()
	<-started
	rawPost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"stop"}}`)
	select {
	case a := <-got:
		ct := a.resp.Header.Get("Content-Type")
		if a.resp.StatusCode == http.StatusOK && strings.HasPrefix(ct, "application/json") && !json.Valid([]byte(a.body)) {
			t.Errorf("cancelled call's POST: HTTP %d, %s, body %q: not JSON", a.resp.StatusCode, ct, a.body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call's POST never ended")
	}
}

// Airlock patch (Withdraw): a batch (2025-03-26) of two calls, both
// cancelled: the POST ends.
func TestWithdrawBatchBothCancelled(t *testing.T) {
	for _, jsonMode := range []bool{false, true} {
		t.Run(fmt.Sprint("json=", jsonMode), func(t *testing.T) {
			url, started := hangServer(t, jsonMode)
			sid := rawOpen(t, url)
			got := make(chan string, 1)
			go func() {
				_, body := rawPost(t, url, sid, `[{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"hang","arguments":{}}},{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"hang","arguments":{}}}]`)
				got <- body
			}()
			<-started
			rawPost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
			rawPost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}`)
			select {
			case b := <-got:
				t.Logf("body %q", b)
			case <-time.After(10 * time.Second):
				t.Fatal("the batch's POST never ended")
			}
		})
	}
}
