package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that gives up on its own sampling request (its user pressed
// stop, its own timeout) sends notifications/cancelled and then ends the
// call, as servers do; the agent whose client shows that request must hear
// the cancellation, as it does connected to the server directly (the
// server's notification comes before its result on one stream), or the
// request stays open in its client after the call has ended and the
// answer it gives goes nowhere. Cancellation runs both ways (issue 11).
func TestServersCancelledRelayReachesTheAgent(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	giveUp := make(chan struct{})
	mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-giveUp:
				cancel()
			case <-ctx.Done():
			}
		}()
		_, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "which one?"}}}})
		msg := "answered"
		if err != nil {
			msg = "gave up: " + err.Error()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil, nil
	})
	e.cat.AddInProcess("asker", srv, false)
	e.waitRunning(t, "asker")

	asked := make(chan struct{})
	told := make(chan struct{})
	testDone := make(chan struct{})
	defer close(testDone)
	sess := e.connect(t, &mcp.ClientOptions{CreateMessageHandler: func(ctx context.Context, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		close(asked)
		select {
		case <-ctx.Done(): // notifications/cancelled for this request
			close(told)
		case <-testDone:
		}
		return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "too late"}}, nil
	}})
	called := make(chan error, 1)
	go func() {
		_, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "asker__ask"})
		called <- err
	}()
	select {
	case <-asked:
	case err := <-called:
		t.Fatalf("the call ended before its sampling request reached the agent: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the sampling request never reached the agent")
	}
	close(giveUp)
	if err := <-called; err != nil {
		t.Fatalf("the call after the server gave up: %v", err)
	}
	select {
	case <-told:
	case <-time.After(5 * time.Second):
		t.Error("the server cancelled its sampling request and ended its call, but the agent's client was never told " +
			"(no notifications/cancelled): the request stays open after the call it belonged to has ended")
	}
}

// An agent that cancels its call (the user pressed stop) cancels the
// server's call, and with it the sampling request the server was waiting
// on: connected directly, the agent's client hears notifications/cancelled
// for that request and closes its dialog. Through Airlock the request
// stays open in the client, though nothing will ever take its answer.
func TestCancelledCallWithdrawsItsRelay(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	serverGaveUp := make(chan error, 1)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		_, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "which one?"}}}})
		serverGaveUp <- err
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	e.cat.AddInProcess("asker", srv, false)
	e.waitRunning(t, "asker")

	asked := make(chan struct{})
	told := make(chan struct{})
	testDone := make(chan struct{})
	defer close(testDone)
	sess := e.connect(t, &mcp.ClientOptions{CreateMessageHandler: func(ctx context.Context, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		close(asked)
		select {
		case <-ctx.Done(): // notifications/cancelled for this request
			close(told)
		case <-testDone:
		}
		return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "too late"}}, nil
	}})
	ctx, stop := context.WithCancel(context.Background())
	called := make(chan error, 1)
	go func() {
		_, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "asker__ask"})
		called <- err
	}()
	select {
	case <-asked:
	case err := <-called:
		t.Fatalf("the call ended before its sampling request reached the agent: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the sampling request never reached the agent")
	}
	stop() // the user pressed stop
	<-called
	if err := receive(t, serverGaveUp, "the server's sampling request ending"); err == nil {
		t.Fatal("the server's sampling request was answered after the call was cancelled")
	}
	select {
	case <-told:
	case <-time.After(5 * time.Second):
		t.Error("the agent cancelled its call and the server withdrew its sampling request, but the agent's client was never told " +
			"(no notifications/cancelled): the request stays open in it")
	}
}
