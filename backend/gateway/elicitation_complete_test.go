package gateway_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A URL-mode elicitation (sign in at a third party, pay, consent) ends out
// of band: the server tells the client with notifications/elicitation/
// complete and the elicitation's id, during the call or later, and clients
// wait for it to retry (the Go SDK's URL-elicitation middleware does). The
// agent whose client the elicitation was relayed to must get it, as it
// does connected to the server directly.
func TestElicitationCompleteReachesTheAgent(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "auth", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "login"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "Sign in to continue",
			URL: "https://auth.example.com/login?state=abc", ElicitationID: "login-1"})
		if err != nil {
			return nil, nil, err
		}
		// The user finished in the browser while the call still runs.
		if err := req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: "login-1"}); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil, nil
	})
	e.cat.AddInProcess("auth", srv, false)
	e.waitRunning(t, "auth")

	completed := make(chan string, 4)
	sess := e.connect(t, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
			URL: &mcp.URLElicitationCapabilities{}, Form: &mcp.FormElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			completed <- req.Params.ElicitationID
		},
	})
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "auth__login"})
	if err != nil || text(t, res) != "accept" {
		t.Fatalf("the call with a URL elicitation = %v %+v, want accept", err, res)
	}
	select {
	case id := <-completed:
		if id != "login-1" {
			t.Errorf("elicitation/complete for %q, want login-1", id)
		}
	case <-time.After(10 * time.Second):
		t.Error("the server sent notifications/elicitation/complete during the call; the agent never got it")
	}

	// Later, with no call in flight (the user took a while in the browser).
	for ss := range srv.Sessions() {
		if err := ss.NotifyElicitationComplete(context.Background(), &mcp.ElicitationCompleteParams{ElicitationID: "login-1"}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case id := <-completed:
		if id != "login-1" {
			t.Errorf("elicitation/complete for %q, want login-1", id)
		}
	case <-time.After(10 * time.Second):
		t.Error("the server sent notifications/elicitation/complete after the call; the agent whose elicitation it was never got it")
	}
}

// The other way into a URL elicitation: the server refuses the call with
// -32042 (URLElicitationRequired) naming the elicitation, the client opens
// the URL and waits for notifications/elicitation/complete to retry the
// call. The refusal reaches the agent as it is; the completion must reach
// the session that was refused, or the client waits for ever.
func TestElicitationCompleteAfterURLRequiredReachesTheAgent(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "pay", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "buy"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{Mode: "url", Message: "Confirm the payment",
			URL: "https://pay.example.com/confirm?id=7", ElicitationID: "pay-7"}})
	})
	e.cat.AddInProcess("pay", srv, false)
	e.waitRunning(t, "pay")

	completed := make(chan string, 4)
	sess := e.connect(t, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			completed <- req.Params.ElicitationID
		},
	})
	_, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "pay__buy"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeURLElicitationRequired {
		t.Fatalf("the call = %v, want the server's -32042 as it is", err)
	}
	// The user confirmed in the browser.
	for ss := range srv.Sessions() {
		if err := ss.NotifyElicitationComplete(context.Background(), &mcp.ElicitationCompleteParams{ElicitationID: "pay-7"}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case id := <-completed:
		if id != "pay-7" {
			t.Errorf("elicitation/complete for %q, want pay-7", id)
		}
	case <-time.After(10 * time.Second):
		t.Error("the server sent notifications/elicitation/complete for the elicitation its -32042 named; the agent never got it, so its client cannot retry")
	}
}
