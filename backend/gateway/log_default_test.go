package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Many clients never send logging/setLevel; MCP leaves the server to decide
// what to log then, and server-everything (the TypeScript SDK) logs to
// them: connected directly, such a client hears "Received Subscribe
// Resource request ..." when it subscribes. Through Airlock it hears
// nothing: Airlock asks its server for every level, then the SDK drops
// every line for a session that set no level, so the server's logs are
// lost for those clients.
func TestLogsReachAClientThatSetNoLevel(t *testing.T) {
	e := newEnv(t, catalog.Options{}, testutil.EverythingServer(t, "everything"))
	heard := make(chan string, 20)
	sess := e.connect(t, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
		heard <- fmt.Sprint(req.Params.Data)
	}})
	const uri = "demo://resource/static/document/features.md"
	if err := sess.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case line := <-heard:
			if strings.Contains(line, "Received Subscribe Resource request for URI: "+uri) {
				return
			}
		case <-deadline:
			t.Fatal("server-everything logged the subscription; a client that sent no logging/setLevel heard nothing through Airlock (it does directly)")
		}
	}
}
