package gateway

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/testutil"
)

// These tests check Airlock's patch of the SDK's connection (see
// third_party/go-sdk/PATCHES.md, "progress before the answer"): a call that
// asked for progress returns only after the progress notifications sent
// before its answer were handled, and a handler that holds up the
// connection's queue can still make such a call.

// stepsServer serves "steps": n progress notifications, then the answer;
// with other set, a progress notification for that token (another call's)
// before the answer.
func stepsServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "steps", Version: "1"}, nil)
	type in struct {
		N     int    `json:"n"`
		Other string `json:"other,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "steps"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= a.N; i++ {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i)})
		}
		if a.Other != "" {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: a.Other, Progress: 1})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	return s
}

func connectSteps(t *testing.T, server *mcp.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	return connectStepsOver(t, server, opts, ct, st)
}

func connectStepsOver(t *testing.T, server *mcp.Server, opts *mcp.ClientOptions, ct, st mcp.Transport) *mcp.ClientSession {
	t.Helper()
	ss, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, opts).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func stepsCall(token string, n int) *mcp.CallToolParams {
	p := &mcp.CallToolParams{Name: "steps", Arguments: map[string]any{"n": n}}
	p.SetProgressToken(token)
	return p
}

// readWatcher is a client transport that calls afterAnswer when its
// connection's reader comes back for the next message after an answer: by
// then the SDK has handed that answer to the call waiting for it.
type readWatcher struct {
	mcp.Transport
	afterAnswer func()
}

func (w readWatcher) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := w.Transport.Connect(ctx)
	return &watchedConn{Connection: c, afterAnswer: w.afterAnswer}, err
}

type watchedConn struct {
	mcp.Connection
	afterAnswer func()
	answered    bool // only the connection's one reader touches it
}

func (c *watchedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if c.answered {
		c.answered = false
		c.afterAnswer()
	}
	msg, err := c.Connection.Read(ctx)
	_, c.answered = msg.(*jsonrpc.Response)
	return msg, err
}

// Every progress notification sent before the answer has been handled when
// the call returns, call after call. Each progress handler waits until the
// connection has handed the answer over, then works a while (it stands for
// a handler slower than the answer), so without the patch the call returns
// first.
func TestProgressHandledBeforeCallReturns(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]float64{}
	var handedOver chan struct{} // the current call's: closed once its answer was handed over
	ct, st := mcp.NewInMemoryTransports()
	watched := readWatcher{Transport: ct, afterAnswer: func() {
		mu.Lock()
		defer mu.Unlock()
		if handedOver != nil {
			close(handedOver)
			handedOver = nil
		}
	}}
	cs := connectStepsOver(t, stepsServer(), &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		wait := handedOver
		mu.Unlock()
		if wait != nil {
			<-wait
		}
		// Then some work: without the patch, the call returns meanwhile.
		for range 1000 {
			runtime.Gosched()
		}
		mu.Lock()
		defer mu.Unlock()
		tok := req.Params.ProgressToken.(string)
		got[tok] = append(got[tok], req.Params.Progress)
	}}, watched, st)
	for i := range 20 {
		mu.Lock()
		handedOver = make(chan struct{})
		mu.Unlock()
		tok := "call-" + string(rune('a'+i))
		if res, err := cs.CallTool(context.Background(), stepsCall(tok, 4)); err != nil || res.IsError {
			t.Fatalf("steps: %v %+v", err, res)
		}
		mu.Lock()
		seen := slices.Clone(got[tok])
		mu.Unlock()
		if want := []float64{1, 2, 3, 4}; !slices.Equal(seen, want) {
			t.Fatalf("call %d: progress handled when CallTool returned = %v, want %v", i, seen, want)
		}
	}
}

// A notification handler runs on the connection's queue and holds it up
// until it returns. If it makes a call that asks for progress, the call
// must not wait for notifications queued behind the handler itself (that
// would never end); it returns with its answer, and the progress is handled
// once the handler returns.
func TestProgressCallFromNotificationHandler(t *testing.T) {
	var mu sync.Mutex
	var seen []float64
	answered := make(chan error, 1)
	// Cancelled if the call never returns, so that the handler does and
	// the test can end.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cs *mcp.ClientSession
	server := stepsServer()
	cs = connectSteps(t, server, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, req.Params.Progress)
		},
		ToolListChangedHandler: func(hctx context.Context, _ *mcp.ToolListChangedRequest) {
			hctx, stop := context.WithCancel(hctx)
			defer stop()
			context.AfterFunc(ctx, stop)
			res, err := cs.CallTool(hctx, stepsCall("from-handler", 3))
			if err == nil && res.IsError {
				err = fmt.Errorf("tool error: %+v", res.Content)
			}
			select {
			case answered <- err:
			default: // a second list_changed
			}
		},
	})
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	server.AddTool(&mcp.Tool{Name: "more", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("call from the list_changed handler: %v", err)
		}
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("a call that asked for progress, made from a notification handler, never returned")
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Equal(seen, []float64{1, 2, 3})
	}, "the progress queued behind the handler was not handled after it returned")
}

// A call waits only for its own progress: a handler stuck on another
// call's progress does not hold up a call whose own progress was all
// handled (a relay to a stalled agent must not delay other agents' calls
// to the same source).
func TestProgressCallDoesNotWaitForOtherNotifications(t *testing.T) {
	stuck := make(chan struct{})
	var once sync.Once
	unstick := func() { once.Do(func() { close(stuck) }) }
	cs := connectSteps(t, stepsServer(), &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if req.Params.ProgressToken == "stalled" {
				<-stuck
			}
		},
	})
	t.Cleanup(unstick) // before the session closes (cleanups run last first)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &mcp.CallToolParams{Name: "steps", Arguments: map[string]any{"n": 2, "other": "stalled"}}
	p.SetProgressToken(7)
	answered := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(ctx, p)
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %+v", res.Content)
		}
		answered <- err
	}()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("the call waited for a handler busy with another call's progress")
	}
}
