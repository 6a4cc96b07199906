package authz_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
)

// Example shows the path of a request: the connection's token identifies
// an agent, Resolve makes the caller of a request on an MCP session, and
// the gate (Check, or Authorize in the pipeline) decides.
func Example() {
	dir, _ := os.MkdirTemp("", "authz-example")
	defer os.RemoveAll(dir)
	db, err := store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		panic(err)
	}
	defer db.Close()
	svc, err := authz.New(store.NewAgents(db), authz.Options{})
	if err != nil {
		panic(err)
	}

	bob, _ := svc.CreateAgent(authz.AgentInput{Name: "bob", Kind: authz.KindWorker})
	svc.GrantServer(authz.RoleDefault, "github") // bob's role: the default one

	conn, _ := svc.IdentifyToken(bob.Token) // Authorization: Bearer alk_…
	caller, _ := svc.Resolve("mcp-session-1", conn, "")
	fmt.Println(caller.AgentName, caller.Kind, caller.Purpose)

	call := &core.Request{Kind: core.KindToolCall, Caller: caller, Server: "github", Name: "create_issue"}
	fmt.Println(svc.Authorize(context.Background(), call))
	fmt.Println(svc.Refusal(&caller, core.Target{Kind: core.KindToolCall, Server: "notion", Name: "search"}).Code)
	fmt.Println(svc.Refusal(&caller, core.Target{Kind: core.KindToolCall, Server: authz.Server, Name: "respond_chat"}).Message)
	// Output:
	// bob worker task
	// <nil>
	// not_subscribed
	// Tool 'respond_chat' requires a chat session. Current session purpose is 'task'.
}
