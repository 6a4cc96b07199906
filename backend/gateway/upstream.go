package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxRequestBytes is the largest JSON-RPC message an agent may send (4 MiB).
// Larger requests get 413 before any parsing.
const MaxRequestBytes = 4 << 20

// SessionIdleTimeout closes an agent session with no request for this long.
const SessionIdleTimeout = 8 * time.Hour

// Authenticator maps a bearer token to an agent id.
type Authenticator interface {
	Authenticate(token string) (agent string, ok bool)
}

// Visibility filters the tools a caller sees; nil shows every tool.
type Visibility interface {
	Visible(agent string, t core.ToolInfo) bool
}

// Gateway serves agents: one MCP server per session, so that every session
// has its own filtered view of the tools and list_changed reaches exactly
// the sessions whose view changed.
type Gateway struct {
	sup     *Supervisor
	pipe    *Pipeline
	auth    Authenticator
	vis     Visibility
	version string
	log     *slog.Logger

	stub       *mcp.Server // answers the SDK's per-request lookups for existing sessions
	streamable *mcp.StreamableHTTPHandler
	sse        *mcp.SSEHandler

	mu    sync.Mutex
	views map[*mcp.Server]*view
}

type view struct {
	mu      sync.Mutex // serialises syncView
	agent   string
	server  *mcp.Server
	created time.Time
	tools   map[string]string // exposed name → JSON of the tool as sent
	extras  map[string]string // "p:"/"r:"/"t:" + name → JSON of the prompt/resource as sent
	servers map[string]bool   // the servers this view sees
}

// Options configure a Gateway.
type Options struct {
	Version    string
	Visibility Visibility
	Logger     *slog.Logger
}

// New returns a gateway serving the tools of sup through pipe.
func New(sup *Supervisor, pipe *Pipeline, auth Authenticator, opts Options) *Gateway {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{sup: sup, pipe: pipe, auth: auth, vis: opts.Visibility, version: opts.Version, log: opts.Logger,
		views: map[*mcp.Server]*view{}}
	g.stub = mcp.NewServer(g.impl(), nil)
	g.streamable = mcp.NewStreamableHTTPHandler(g.serverFor, &mcp.StreamableHTTPOptions{
		MaxRequestBodyBytes: MaxRequestBytes,
		Logger:              opts.Logger,
		// A client that vanished without DELETE must not keep its session
		// (and its copy of every tool) for ever; agents idle longer than
		// this start a new session, as the protocol has them do.
		SessionTimeout: SessionIdleTimeout,
	})
	g.sse = mcp.NewSSEHandler(g.serverFor, &mcp.SSEOptions{MaxRequestBodyBytes: MaxRequestBytes})
	sup.OnLog(g.forwardLog)
	sup.OnEvent(func(ev SupervisorEvent) {
		if ev.ToolsChanged {
			g.SyncTools()
		}
	})
	return g
}

func (g *Gateway) impl() *mcp.Implementation {
	return &mcp.Implementation{Name: "airlock", Title: "Airlock", Version: g.version}
}

type ctxKey int

const (
	serverKey ctxKey = iota
	agentKey
)

// AgentFrom returns the agent the identify stage put in ctx.
func AgentFrom(ctx context.Context) string {
	a, _ := ctx.Value(agentKey).(string)
	return a
}

// StreamableHandler serves Streamable HTTP (mount at /mcp).
func (g *Gateway) StreamableHandler() http.Handler { return g.identify(g.streamable, false) }

// SSEHandler serves the legacy HTTP+SSE transport (mount at /sse).
func (g *Gateway) SSEHandler() http.Handler { return g.identify(g.sse, true) }

// identify is the pipeline's first stage for the HTTP transports: it reads
// the bearer token and, for a request that opens a session, builds that
// session's server.
func (g *Gateway) identify(next http.Handler, sse bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		agent := ""
		if ok {
			agent, ok = g.auth.Authenticate(strings.TrimSpace(tok))
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="airlock"`)
			writeJSONError(w, http.StatusUnauthorized, core.Errorf(core.EUnauthorized,
				"missing or invalid agent token").WithHint("send Authorization: Bearer <token>; `airlock token` prints it"))
			return
		}
		ctx := context.WithValue(r.Context(), agentKey, agent)
		opening := false
		if sse {
			opening = r.Method == http.MethodGet && r.URL.Query().Get("sessionid") == ""
		} else {
			opening = r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == ""
		}
		if opening {
			ctx = context.WithValue(ctx, serverKey, g.newView(agent))
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func (g *Gateway) serverFor(r *http.Request) *mcp.Server {
	if s, ok := r.Context().Value(serverKey).(*mcp.Server); ok {
		return s
	}
	return g.stub
}

func writeJSONError(w http.ResponseWriter, status int, e *core.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(e)
}

// newView builds the MCP server for one new session of agent.
func (g *Gateway) newView(agent string) *mcp.Server {
	s := mcp.NewServer(g.impl(), &mcp.ServerOptions{
		HasTools:     true,
		Instructions: "Airlock gateway: tools are named <server>__<tool>. Some calls wait for a person's approval; a refusal is a tool error carrying a reason code.",
		Logger:       g.log,
	})
	v := &view{agent: agent, server: s, created: time.Now(), tools: map[string]string{}, extras: map[string]string{}, servers: map[string]bool{}}
	s.AddReceivingMiddleware(g.auditUnknownTools(v))
	// Registered before its first sync, so that a change while it syncs
	// reaches it too.
	g.mu.Lock()
	g.dropEndedLocked()
	g.views[s] = v
	g.mu.Unlock()
	g.syncView(v, g.sup.Tools())
	return s
}

// dropEndedLocked forgets views whose session has ended. A view gets a minute
// to be connected first: the SDK attaches the session after newView returns.
func (g *Gateway) dropEndedLocked() {
	for s, v := range g.views {
		if time.Since(v.created) > time.Minute && !hasSessions(s) {
			delete(g.views, s)
		}
	}
}

// SyncTools brings every session's tool list up to date; the SDK sends
// notifications/tools/list_changed (debounced) to sessions whose list changed.
func (g *Gateway) SyncTools() {
	tools := g.sup.Tools()
	g.mu.Lock()
	g.dropEndedLocked()
	views := make([]*view, 0, len(g.views))
	for _, v := range g.views {
		views = append(views, v)
	}
	g.mu.Unlock()
	for _, v := range views {
		g.syncView(v, tools)
	}
}

func hasSessions(s *mcp.Server) bool {
	for range s.Sessions() {
		return true
	}
	return false
}

// syncView makes v's server list exactly the visible tools.
func (g *Gateway) syncView(v *view, tools []core.ToolInfo) {
	v.mu.Lock()
	defer v.mu.Unlock()
	want := map[string]core.ToolInfo{}
	for _, t := range tools {
		if g.vis == nil || g.vis.Visible(v.agent, t) {
			want[t.ExposedName] = t
		}
	}
	var remove []string
	for name := range v.tools {
		if _, ok := want[name]; !ok {
			remove = append(remove, name)
		}
	}
	if len(remove) > 0 {
		v.server.RemoveTools(remove...)
		for _, n := range remove {
			delete(v.tools, n)
		}
	}
	for name, t := range want {
		mt := mcpTool(t)
		b, _ := json.Marshal(mt)
		if v.tools[name] == string(b) {
			continue
		}
		if err := addTool(v.server, mt, g.toolHandler(v.agent, t)); err != nil {
			g.log.Warn("skip downstream tool with a bad definition", "tool", name, "err", err)
			continue
		}
		v.tools[name] = string(b)
	}
	servers := map[string]bool{}
	for id := range g.sup.serverLists() {
		if g.vis == nil {
			servers[id] = true
		}
	}
	for _, t := range want {
		servers[t.ServerID] = true
	}
	v.servers = servers
	g.syncExtras(v, servers)
}

// addTool adds a tool; see guard.
func addTool(s *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) error {
	return guard(func() { s.AddTool(t, h) })
}

func mcpTool(t core.ToolInfo) *mcp.Tool {
	mt := &mcp.Tool{Name: t.ExposedName, Title: t.Title, Description: t.Description}
	mt.InputSchema = objectSchema(t.InputSchema)
	if len(t.OutputSchema) > 0 {
		mt.OutputSchema = t.OutputSchema
	}
	if a := t.Annotations; a != nil {
		ma := &mcp.ToolAnnotations{DestructiveHint: a.Destructive, OpenWorldHint: a.OpenWorld}
		if a.ReadOnly != nil {
			ma.ReadOnlyHint = *a.ReadOnly
		}
		if a.Idempotent != nil {
			ma.IdempotentHint = *a.Idempotent
		}
		mt.Annotations = ma
	}
	return mt
}

// objectSchema returns schema when it is a JSON object of type "object", and
// the empty object schema otherwise.
func objectSchema(schema json.RawMessage) json.RawMessage {
	var m map[string]any
	if len(schema) > 0 && json.Unmarshal(schema, &m) == nil && m["type"] == "object" {
		return schema
	}
	return json.RawMessage(`{"type":"object"}`)
}

func (g *Gateway) toolHandler(agent string, t core.ToolInfo) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c := &Call{Caller: Caller{Agent: agent, Session: req.Session.ID(), Client: clientName(req.Session)}, Tool: t, Args: req.Params.Arguments}
		if tok := req.Params.GetProgressToken(); tok != nil {
			ss := req.Session
			c.Progress = func(progress, total float64, msg string) {
				// Bounded, so that a stalled client cannot hold up the
				// downstream server's other notifications.
				nctx, cancel := context.WithTimeout(ctx, time.Second)
				defer cancel()
				ss.NotifyProgress(nctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: progress, Total: total, Message: msg})
			}
		}
		return g.pipe.Run(ctx, c), nil
	}
}

// auditUnknownTools records calls to tools the session cannot see. The SDK
// answers them with a JSON-RPC error; the audit log must still show them.
func (g *Gateway) auditUnknownTools(v *view) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil && method == "tools/call" && g.pipe.Audit != nil {
				if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
					server, tool, _ := strings.Cut(p.Name, Separator)
					g.pipe.Audit.Record(&core.AuditRecord{
						Time: time.Now().UTC(), Agent: v.agent, Session: req.GetSession().ID(), Client: clientOf(req.GetSession()),
						Server: server, Tool: tool, Arguments: pipeline.RedactArguments(p.Arguments), ArgsDigest: digest(p.Arguments),
						Decision: core.DecisionError, Reason: "unknown tool " + p.Name, Status: core.StatusError,
						ErrorCode: "unknown_tool", Error: err.Error(),
					})
				}
			}
			return res, err
		}
	}
}

// clientName is the name and version the client gave in initialize.
func clientName(ss *mcp.ServerSession) string {
	p := ss.InitializeParams()
	if p == nil || p.ClientInfo == nil {
		return ""
	}
	return strings.TrimSpace(p.ClientInfo.Name + " " + p.ClientInfo.Version)
}

func clientOf(s mcp.Session) string {
	if ss, ok := s.(*mcp.ServerSession); ok {
		return clientName(ss)
	}
	return ""
}
