package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Airlock patch (Withdraw): a call cancelled by the client around the moment its
// handler answers. Every POST must end, and nothing may stay in the
// connection's streams and requestStreams (-race checks Withdraw vs Write).
func TestWithdrawRacesAnswer(t *testing.T) {
	s := NewServer(&Implementation{Name: "r", Version: "1"}, nil)
	AddTool(s, &Tool{Name: "quick"}, func(ctx context.Context, _ *CallToolRequest, _ struct{}) (*CallToolResult, any, error) {
		jitter(300)
		return &CallToolResult{}, nil, nil
	})
	h := NewStreamableHTTPHandler(func(*http.Request) *Server { return s }, nil)
	hs := httptest.NewServer(h)
	defer hs.Close()
	sid := rawOpen(t, hs.URL)
	var wg sync.WaitGroup
	for i := 10; i < 410; i++ {
		wg.Add(2)
		done := make(chan struct{})
		go func(id int) {
			defer wg.Done()
			defer close(done)
			rawPost(t, hs.URL, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"quick","arguments":{}}}`, id))
		}(i)
		go func(id int) {
			defer wg.Done()
			jitter(300)
			rawPost(t, hs.URL, sid, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, id))
		}(i)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("POST of call %d never ended", i)
		}
	}
	wg.Wait()
	h.mu.Lock()
	info := h.sessions[sid]
	h.mu.Unlock()
	leftBehind(t, info.transport.connection)
}

// jitter yields to other goroutines up to n times, at random: the moment a
// call is cancelled moves around the moment it is answered.
func jitter(n int) {
	for range rand.Intn(n) {
		runtime.Gosched()
	}
}

// leftBehind fails t unless c's maps come to hold nothing but the
// session's standalone stream (a handler's answer may still be on its way
// when its POST has ended), within ten seconds.
func leftBehind(t *testing.T, c *streamableServerConn) {
	t.Helper()
	count := func() (int, int) {
		c.mu.Lock()
		defer c.mu.Unlock()
		streams := len(c.streams)
		if _, ok := c.streams[""]; ok {
			streams-- // the standalone stream, made with the session
		}
		return len(c.requestStreams), streams
	}
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		reqs, streams := count()
		if reqs == 0 && streams == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("left behind: %d requestStreams, %d streams", reqs, streams)
			return
		}
		<-tick.C
	}
}

// Airlock patch (Withdraw): batches (2025-03-26) of two calls, one cancelled around
// its answer, in SSE and JSON mode: the POST ends, a JSON body is a valid
// array holding the other call's answer, nothing is left behind.
func TestWithdrawBatchRaces(t *testing.T) {
	for _, jsonMode := range []bool{false, true} {
		t.Run(fmt.Sprint("json=", jsonMode), func(t *testing.T) {
			s := NewServer(&Implementation{Name: "r", Version: "1"}, nil)
			AddTool(s, &Tool{Name: "quick"}, func(ctx context.Context, _ *CallToolRequest, _ struct{}) (*CallToolResult, any, error) {
				jitter(300)
				return &CallToolResult{}, nil, nil
			})
			h := NewStreamableHTTPHandler(func(*http.Request) *Server { return s }, &StreamableHTTPOptions{JSONResponse: jsonMode})
			hs := httptest.NewServer(h)
			defer hs.Close()
			sid := rawOpen(t, hs.URL)
			for i := 10; i < 410; i += 2 {
				done := make(chan string, 1)
				go func(id int) {
					_, b := rawPost(t, hs.URL, sid, fmt.Sprintf(`[{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"quick","arguments":{}}},{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"quick","arguments":{}}}]`, id, id+1))
					done <- b
				}(i)
				jitter(400)
				rawPost(t, hs.URL, sid, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, i))
				select {
				case b := <-done:
					if jsonMode && !json.Valid([]byte(b)) {
						t.Fatalf("batch %d: body %q not JSON", i, b)
					}
					if !strings.Contains(b, fmt.Sprintf(`"id":%d`, i+1)) {
						t.Fatalf("batch %d: the uncancelled call's answer is missing: %q", i, b)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("POST of batch %d never ended", i)
				}
			}
			h.mu.Lock()
			c := h.sessions[sid].transport.connection
			h.mu.Unlock()
			leftBehind(t, c)
		})
	}
}
