package airlock

import (
	"context"
	"net/http"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/gateway"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// identifier adapts the authorization service to the gateway: who opened a
// connection (its credential, checked on every HTTP request) and who makes
// each request on a session.
type identifier struct {
	svc *authz.Service
	// ended also hears of each session's end (the team tools forget the
	// project a session was pinned to).
	ended func(sid string)
}

var _ gateway.Identifier = identifier{}

func (i identifier) Identify(r *http.Request) (gateway.Connection, error) {
	id, err := i.svc.IdentifyRequest(r)
	return gateway.Connection{Key: id.Key(), Ref: id, Label: id.AgentName}, err
}

func (i identifier) Resolve(sid string, conn gateway.Connection, sessionToken string) (core.Caller, error) {
	id, _ := conn.Ref.(authz.Identity)
	return i.svc.Resolve(sid, id, sessionToken)
}

func (i identifier) Ended(sid string) {
	i.svc.SessionEnded(sid)
	if i.ended != nil {
		i.ended(sid)
	}
}

func (i identifier) Peek(sid string, conn gateway.Connection) (core.Caller, error) {
	id, _ := conn.Ref.(authz.Identity)
	return i.svc.Peek(sid, id)
}

func (i identifier) Binding(sid string) string { return i.svc.Binding(sid) }

func (i identifier) Restore(sid, bound string) bool { return i.svc.RestoreBinding(sid, bound) }

// ownServer is Airlock's own in-process MCP server: authenticate, logout,
// help, and the compact-mode meta-tools, served under their bare names
// through the same pipeline as every other server.
func ownServer(svc *authz.Service) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: catalog.AirlockServerName, Title: "Airlock", Version: Version}, nil)
	authz.RegisterTools(s, svc)
	// The meta-tools are answered by the gateway, which runs each inner call
	// through the pipeline; they are listed here so that they appear (to
	// agents in compact mode) with their definitions from the table.
	for _, name := range []string{"get_module_schema", "call", "batch"} {
		def, ok := svc.Registry().Lookup(name)
		if !ok {
			continue
		}
		s.AddTool(&mcp.Tool{Name: def.Name, Description: def.Description, InputSchema: def.InputSchema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, core.Errorf(core.EInternal, "%s is answered by the gateway in compact mode", name)
			})
	}
	return s
}
