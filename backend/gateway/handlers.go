package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// middleware answers the requests about tools, prompts and resources of
// session s; everything else (initialize, ping, logging/setLevel, ...) is
// the SDK's.
func (g *Gateway) middleware(s *session) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && s.ss.Load() == nil {
				g.opened(s, ss)
			}
			if s.resumed && !strings.HasPrefix(method, "notifications/") && !s.relisted.Swap(true) {
				// Carried on after a restart: its lists may have changed
				// meanwhile (servers added or removed). Told on this
				// request's own stream; no event stream may be open yet.
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
					for _, list := range []string{"tools", "prompts", "resources"} {
						if err := ss.NotifyListChanged(ctx, list); err != nil {
							g.log.Warn("tell a resumed session its lists may have changed", "err", err)
						}
					}
				}
			}
			if !strings.HasPrefix(method, "notifications/") {
				// Who the session is may change (authenticate and logout,
				// by name or through compact mode's call and batch; an
				// ended binding any request's Resolve dropped): a restart
				// keeps what it is after the request (found by a code
				// review: only a tools/call saved it).
				defer g.keepBinding(s)
			}
			switch method {
			case "tools/list":
				return g.listTools(s)
			case "tools/call":
				return g.callTool(ctx, s, req)
			case "prompts/list":
				return g.listPrompts(s)
			case "prompts/get":
				return g.getPrompt(ctx, s, req)
			case "resources/list":
				return g.listResources(s)
			case "resources/templates/list":
				return g.listTemplates(s)
			case "resources/read":
				return g.readResource(ctx, s, req)
			case "initialize":
				res, err := next(ctx, method, req)
				if ir, ok := res.(*mcp.InitializeResult); ok && ir != nil {
					ir.Instructions = g.instructions(s)
				}
				return res, err
			case "notifications/initialized":
				res, err := next(ctx, method, req)
				g.announce(s, false) // what it may see now, for list_changed later
				g.keep(s)
				return res, err
			case "logging/setLevel":
				res, err := next(ctx, method, req)
				g.keep(s)
				return res, err
			}
			return next(ctx, method, req)
		}
	}
}

// listCaller resolves the caller for a listing. A caller that cannot be
// resolved sees nothing (fail closed); the refusal shows on its next call.
// A binding that ended is kept for that call to tell (Peek): a listing
// cannot (found by a code review: the first listing after an agent
// session expired dropped its binding, and the next call ran as the
// connection's own agent without a word).
func (g *Gateway) listCaller(s *session) (core.Caller, bool) {
	c, err := g.peek(s)
	return c, err == nil
}

func (g *Gateway) visible(c *core.Caller, t core.Target) bool {
	return g.lister != nil && g.lister.Check(c, t) == nil
}

// perCaller is the cache hint of every listing: each caller sees its own
// (roles, grants, authentication), so only that client may cache it, and it
// is stale at once (list_changed says when to ask again). The SDK would
// send an empty, invalid cacheScope for lists it did not build itself.
func perCaller() mcp.Cacheable { return mcp.Cacheable{TTLMs: 0, CacheScope: "private"} }

// isHelp reports whether exposed names Airlock's help tool.
func (g *Gateway) isHelp(exposed string) bool {
	t, ok := g.cat.Snapshot().Tool(exposed)
	return ok && t.ServerID == authz.Server && t.Name == authz.ToolHelp
}

func (g *Gateway) listTools(s *session) (*mcp.ListToolsResult, error) {
	res := &mcp.ListToolsResult{Cacheable: perCaller(), Tools: []*mcp.Tool{}}
	c, err := g.peek(s)
	if core.ErrorCode(err) == authz.EAgentNotAssigned {
		// A session of a project its agent has left lists help alone:
		// the one call it may still make.
		v := g.views.get(g.cat.Snapshot())
		for i, t := range v.snap.Tools {
			if t.ServerID == authz.Server && t.Name == authz.ToolHelp {
				res.Tools = append(res.Tools, v.tools[i])
			}
		}
		return res, nil
	}
	if err != nil {
		return res, nil
	}
	if tools, _ := g.visibleTools(&c, g.views.get(g.cat.Snapshot())); tools != nil {
		res.Tools = tools
	}
	return res, nil
}

func (g *Gateway) listPrompts(s *session) (*mcp.ListPromptsResult, error) {
	res := &mcp.ListPromptsResult{Cacheable: perCaller(), Prompts: []*mcp.Prompt{}}
	c, ok := g.listCaller(s)
	if !ok {
		return res, nil
	}
	for _, p := range g.cat.Snapshot().Prompts {
		if g.visible(&c, core.Target{Kind: core.KindPromptGet, Server: p.Server, Name: p.Name}) {
			res.Prompts = append(res.Prompts, p.Def)
		}
	}
	return res, nil
}

func (g *Gateway) listResources(s *session) (*mcp.ListResourcesResult, error) {
	res := &mcp.ListResourcesResult{Cacheable: perCaller(), Resources: []*mcp.Resource{}}
	c, ok := g.listCaller(s)
	if !ok {
		return res, nil
	}
	for _, r := range g.cat.Snapshot().Resources {
		if g.visible(&c, core.Target{Kind: core.KindResourceRead, Server: r.Server, Name: r.Def.URI}) {
			res.Resources = append(res.Resources, r.Def)
		}
	}
	return res, nil
}

func (g *Gateway) listTemplates(s *session) (*mcp.ListResourceTemplatesResult, error) {
	res := &mcp.ListResourceTemplatesResult{Cacheable: perCaller(), ResourceTemplates: []*mcp.ResourceTemplate{}}
	c, ok := g.listCaller(s)
	if !ok {
		return res, nil
	}
	for _, t := range g.cat.Snapshot().Templates {
		if g.visible(&c, core.Target{Kind: core.KindResourceRead, Server: t.Server, Name: t.Def.URITemplate}) {
			res.ResourceTemplates = append(res.ResourceTemplates, t.Def)
		}
	}
	return res, nil
}

// run resolves the caller and takes the request through the pipeline. A
// caller that cannot be resolved (an expired session token, a suspended
// agent) is refused, and the refusal is recorded like any other; so is a
// request that arrives while Airlock stops (Close).
func (g *Gateway) run(ctx context.Context, s *session, req mcp.Request, r *core.Request) (mcp.Result, error) {
	g.busy.begin()
	defer g.busy.end()
	ctx, cancel := g.requestContext(ctx, s, req)
	defer cancel()
	c, err := g.caller(s, r.Args)
	r.Caller = c
	// The session_token argument has done its work (it named the caller).
	// It is Airlock's credential: it must not reach a server, an approval
	// dialog, a rule made from one, or the audit log.
	r.Args = withoutSessionToken(r.Args)
	if err != nil && core.ErrorCode(err) == authz.EAgentNotAssigned && r.Kind == core.KindToolCall && g.isHelp(r.Exposed) {
		// On a session of a project its agent has left, help still
		// answers (it says why the rest is refused); the gate and every
		// other stage still apply.
		err = nil
	}
	if err == nil && g.closing.Load() {
		err = errStopping
	}
	if err != nil {
		return g.refuse(r, err)
	}
	res, err := g.pipe.Run(ctx, r)
	if p, ok := r.Peer.(peer); ok {
		// What the server withdrew is told before the answer ends the
		// stream it was sent on.
		p.relays.settle()
	}
	return res, err
}

// withoutSessionToken removes a top-level session_token from a tool call's
// arguments (cheap when there is none).
func withoutSessionToken(args json.RawMessage) json.RawMessage {
	if len(args) == 0 || !bytes.Contains(args, []byte(`"session_token"`)) {
		return args
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return args
	}
	if _, ok := obj["session_token"]; !ok {
		return args
	}
	delete(obj, "session_token")
	out, err := json.Marshal(obj)
	if err != nil {
		return args
	}
	return out
}

// refuse records a request refused before the pipeline and answers it.
// A tool call is recorded under its server and tool when the name routes,
// so that Activity's filters find it (it was recorded under no server).
func (g *Gateway) refuse(r *core.Request, err error) (mcp.Result, error) {
	server, tool := r.Server, r.Exposed
	if r.Kind == core.KindToolCall && server == "" {
		if t, ok := g.cat.Snapshot().Tool(r.Exposed); ok {
			server, tool = t.ServerID, t.Name
		}
	}
	g.record(&core.AuditRecord{Time: time.Now().UTC(), Kind: r.Kind, Agent: r.Caller.Label(), AgentID: r.Caller.AgentID,
		Client: r.Caller.Client.Name, ClientVersion: r.Caller.Client.Version, Session: r.Caller.Session, Purpose: r.Caller.Purpose,
		Server: server, Tool: tool, Arguments: pipeline.RedactArguments(r.Args), Decision: core.DecisionDenied,
		Status: core.StatusError, ErrorCode: core.ErrorCode(err), Error: core.ErrorMessage(err), Reason: core.ErrorMessage(err)})
	if r.Kind == core.KindToolCall {
		return pipeline.ErrorResult(err), nil
	}
	return nil, pipeline.RPCError(err)
}

func (g *Gateway) callTool(ctx context.Context, s *session, req mcp.Request) (mcp.Result, error) {
	p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
	if !ok {
		return nil, pipeline.RPCError(core.Errorf(core.EInvalid, "tools/call without parameters"))
	}
	if isMeta(p.Name) && g.opts.Compact != nil {
		if c, err := g.caller(s, p.Arguments); err == nil && g.compact(&c) {
			return g.runMeta(ctx, s, req, c, p)
		}
	}
	r := &core.Request{Kind: core.KindToolCall, Exposed: p.Name, Args: p.Arguments, Peer: peerOf(ctx, req)}
	for k, v := range p.Meta {
		if k == "progressToken" {
			continue // Airlock's own goes on (r.Progress)
		}
		if r.Meta == nil {
			r.Meta = map[string]any{}
		}
		r.Meta[k] = v
	}
	r.Progress = requestProgress(ctx, req, p.GetProgressToken())
	return g.run(ctx, s, req, r)
}

// requestProgress sends progress for req, whose progress token is tok (nil
// when it gave none: nil).
func requestProgress(ctx context.Context, req mcp.Request, tok any) func(progress, total float64, msg string) {
	if tok == nil {
		return nil
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	return progressFunc(ctx, ss, tok)
}

func (g *Gateway) getPrompt(ctx context.Context, s *session, req mcp.Request) (mcp.Result, error) {
	p, ok := req.GetParams().(*mcp.GetPromptParams)
	if !ok {
		return nil, pipeline.RPCError(core.Errorf(core.EInvalid, "prompts/get without parameters"))
	}
	r := &core.Request{Kind: core.KindPromptGet, Exposed: p.Name, Peer: peerOf(ctx, req)}
	if len(p.Arguments) > 0 {
		r.Args, _ = json.Marshal(p.Arguments)
	}
	r.Progress = requestProgress(ctx, req, p.GetProgressToken())
	return g.run(ctx, s, req, r)
}

func (g *Gateway) readResource(ctx context.Context, s *session, req mcp.Request) (mcp.Result, error) {
	p, ok := req.GetParams().(*mcp.ReadResourceParams)
	if !ok {
		return nil, pipeline.RPCError(core.Errorf(core.EInvalid, "resources/read without parameters"))
	}
	r := &core.Request{Kind: core.KindResourceRead, Exposed: p.URI, Peer: peerOf(ctx, req),
		Progress: requestProgress(ctx, req, p.GetProgressToken())}
	s.mu.Lock()
	if k, ok := subscription(s.subs, p.URI); ok {
		r.SubscribedAt = k[0]
	}
	s.mu.Unlock()
	res, err := g.run(ctx, s, req, r)
	if rr, ok := res.(*mcp.ReadResourceResult); ok && rr != nil {
		// What a caller may read is its own (rules, grants), like its
		// lists; and a server of 2025-11-25 gives no cache hints, which
		// left the required cacheScope empty (invalid) for a 2026-07-28
		// agent. A 2025-11-25 session gets neither field (the SDK drops
		// them for it).
		rr.Cacheable = perCaller()
	}
	return res, err
}

// progressFunc sends progress for the request that gave tok; for a call
// of a 2026-07-28 agent, on the HTTP request answering for it now.
func progressFunc(ctx context.Context, ss *mcp.ServerSession, tok any) func(progress, total float64, msg string) {
	if pc := pendingOf(ctx); pc != nil {
		return rising(pc.progress)
	}
	if ss == nil {
		return nil
	}
	return rising(func(progress, total float64, msg string) {
		// Bounded, so that a stalled client cannot hold up the source's
		// other notifications.
		nctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		ss.NotifyProgress(nctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: progress, Total: total, Message: msg})
	})
}

// rising keeps a call's progress increasing, as MCP requires, across the
// two that report it: Airlock while the call waits for a person (seconds
// waited), then the server (its own count, from 0 or 1 again). A value
// that would not increase is shifted above the last one sent, and its
// total with it.
func rising(send func(progress, total float64, msg string)) func(progress, total float64, msg string) {
	var mu sync.Mutex
	var last, offset float64
	sent := false
	return func(progress, total float64, msg string) {
		mu.Lock()
		p := progress + offset
		if sent && p <= last {
			offset += last - p + 1
			p = progress + offset
		}
		if total > 0 {
			total += offset
		}
		last, sent = p, true
		send(p, total, msg) // under the lock: sent in the order computed
		mu.Unlock()
	}
}

// Sync re-checks what every session may see and sends list_changed to the
// sessions whose tools, prompts or resources changed: after a source
// changed, a rule or grant changed, or an agent was suspended.
func (g *Gateway) Sync() {
	g.mu.Lock()
	all := make([]*session, 0, len(g.bySID))
	for _, s := range g.bySID {
		all = append(all, s)
	}
	g.mu.Unlock()
	for _, s := range all {
		g.announce(s, true)
	}
	g.syncStateless()
}

// announce computes what s may see now and, when notify is set, sends
// list_changed for each list that differs from what it was last told.
func (g *Gateway) announce(s *session, notify bool) {
	c, err := g.peek(s)
	ok := err == nil
	if core.ErrorCode(err) == core.EUnauthorized && s.conn.Key != "" {
		// The credential the session was opened with is gone (a rotated
		// token, a deleted agent): its event stream must not go on
		// hearing, so the session ends, once its requests still running
		// have been answered with the reason (found by a new-user test:
		// a call in flight was cut off unanswered, and its client hung).
		if ss := s.ss.Load(); ss != nil {
			go func() {
				if s.halt != nil {
					s.halt(errCredentialGone)
				}
				s.busy.wait(answerGrace)
				ss.Close()
			}()
		} else if s.server != nil { // a sessionless credential's listen streams
			for ss := range s.server.Sessions() {
				go ss.Close()
			}
		}
		return
	}
	snap := g.cat.Snapshot()
	var hashes [3]uint64
	servers := map[string]bool{}
	if ok {
		v := g.views.get(snap)
		h := fnv.New64a()
		tools, defs := g.visibleTools(&c, v)
		for i := range tools {
			h.Write(defs[i])
		}
		for _, t := range snap.Tools {
			if g.visible(&c, core.Target{Kind: core.KindToolCall, Server: t.ServerID, Name: t.Name}) {
				servers[t.ServerID] = true
			}
		}
		hashes[0] = h.Sum64()
		h.Reset()
		for _, p := range snap.Prompts {
			if g.visible(&c, core.Target{Kind: core.KindPromptGet, Server: p.Server, Name: p.Name}) {
				b, _ := json.Marshal(p.Def)
				h.Write(b)
				servers[p.Server] = true
			}
		}
		hashes[1] = h.Sum64()
		h.Reset()
		for _, r := range snap.Resources {
			if g.visible(&c, core.Target{Kind: core.KindResourceRead, Server: r.Server, Name: r.Def.URI}) {
				b, _ := json.Marshal(r.Def)
				h.Write(b)
				servers[r.Server] = true
			}
		}
		for _, t := range snap.Templates {
			if g.visible(&c, core.Target{Kind: core.KindResourceRead, Server: t.Server, Name: t.Def.URITemplate}) {
				b, _ := json.Marshal(t.Def)
				h.Write(b)
				servers[t.Server] = true
			}
		}
		hashes[2] = h.Sum64()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.listed
	s.listed, s.servers = hashes, servers
	if !notify {
		return
	}
	if prev[0] != hashes[0] {
		notifyToolsChanged(s.server)
	}
	if prev[1] != hashes[1] {
		notifyPromptsChanged(s.server)
	}
	if prev[2] != hashes[2] {
		notifyResourcesChanged(s.server)
	}
}

// The SDK sends list_changed when a server's own lists change, and offers
// no other way to send it. A session's server registers nothing, so adding
// and removing a probe (which no listing shows: the middleware answers
// them) makes it send exactly one debounced notification to that session.
const probeName = "airlock_list_changed_probe"

func notifyToolsChanged(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: probeName, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	srv.RemoveTools(probeName)
}

func notifyPromptsChanged(srv *mcp.Server) {
	srv.AddPrompt(&mcp.Prompt{Name: probeName}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, nil })
	srv.RemovePrompts(probeName)
}

func notifyResourcesChanged(srv *mcp.Server) {
	const uri = "airlock:" + probeName
	srv.AddResource(&mcp.Resource{Name: probeName, URI: uri}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return nil, nil
	})
	srv.RemoveResources(uri)
}

// forwardLog sends a source's log message to the sessions that see that
// server, with its logger name prefixed by the server's id. A message
// logged while the server handled requests goes only to the session whose
// requests they were: it may carry that session's data, and one agent
// (every client on the default token) has many sessions. With requests of
// several agents or sessions in flight MCP does not say whose it is, so it
// goes to nobody rather than to the wrong one. A message logged while idle
// is the server's own and goes to every session that sees the server.
func (g *Gateway) forwardLog(server string, p *mcp.LoggingMessageParams, from catalog.LogSource) {
	if !from.Idle && len(from.Agents) != 1 {
		return
	}
	msg := *p
	msg.Logger = server
	if p.Logger != "" {
		msg.Logger = server + "/" + p.Logger
	}
	// Sent in order by one goroutine, so that a stalled client holds up
	// neither the others nor the source's next messages (whose attribution
	// is taken as they are handled; found by an interop test).
	select {
	case g.logQ <- logItem{server, &msg, from}:
	default:
		g.log.Warn("a server's log message is dropped: too many are waiting to be sent", "server", server)
	}
}

// logItem is a server's log message on its way to the agents' sessions.
type logItem struct {
	server string
	msg    *mcp.LoggingMessageParams
	from   catalog.LogSource
}

// deliverLogs sends the queued log messages until the gateway stops.
func (g *Gateway) deliverLogs() {
	for {
		select {
		case <-g.stopped.Done():
			return
		case it := <-g.logQ:
			g.deliverLog(it.server, it.msg, it.from)
		}
	}
}

func (g *Gateway) deliverLog(server string, msg *mcp.LoggingMessageParams, from catalog.LogSource) {
	g.mu.Lock()
	all := make([]*session, 0, len(g.bySID))
	for _, s := range g.bySID {
		all = append(all, s)
	}
	g.mu.Unlock()
	for _, s := range all {
		s.mu.Lock()
		sees := s.servers[server]
		s.mu.Unlock()
		ss := s.ss.Load()
		if !sees || ss == nil || !from.Idle && !g.callOf(s, from) {
			continue
		}
		// A stalled client must not hold up the others.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		ss.Log(ctx, msg)
		cancel()
	}
	g.logStateless(server, msg, from)
}

// callOf reports whether the requests a server handled when it logged
// (from) are all of session s.
func (g *Gateway) callOf(s *session, from catalog.LogSource) bool {
	return len(from.Sessions) == 1 && from.Sessions[0] == s.id() && g.sessionOf(s, from.Agents[0])
}

// sessionOf reports whether session s belongs to the agent named as
// catalog.LogSource names agents.
func (g *Gateway) sessionOf(s *session, agent string) bool {
	c, err := g.peek(s)
	if err != nil {
		return false
	}
	if c.AgentID != "" {
		return c.AgentID == agent
	}
	return c.Label() == agent
}

// viewCache holds the MCP form of one snapshot's tools, built once per
// snapshot rather than once per listing.
type viewCache struct {
	mu sync.Mutex
	v  *view
}

type view struct {
	snap  *catalog.Snapshot
	tools []*mcp.Tool    // aligned with snap.Tools
	defs  [][]byte       // the JSON of each, for change detection
	index map[string]int // of tools, by exposed name
}

func (c *viewCache) get(s *catalog.Snapshot) *view {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.v != nil && c.v.snap == s {
		return c.v
	}
	v := &view{snap: s, tools: make([]*mcp.Tool, len(s.Tools)), defs: make([][]byte, len(s.Tools)), index: make(map[string]int, len(s.Tools))}
	for i, t := range s.Tools {
		v.tools[i] = mcpTool(t)
		v.index[t.ExposedName] = i
		v.defs[i], _ = json.Marshal(v.tools[i])
	}
	c.v = v
	return v
}

func mcpTool(t core.ToolInfo) *mcp.Tool {
	mt := &mcp.Tool{Name: t.ExposedName, Title: t.Title, Description: t.Description}
	mt.InputSchema = objectSchema(t.InputSchema)
	if len(t.OutputSchema) > 0 {
		mt.OutputSchema = t.OutputSchema
	}
	if len(t.Meta) > 0 {
		mt.Meta = t.Meta
	}
	if len(t.Icons) > 0 {
		json.Unmarshal(t.Icons, &mt.Icons)
	}
	if len(t.Execution) > 0 {
		mt.Execution = t.Execution
	}
	if a := t.Annotations; a != nil {
		ma := &mcp.ToolAnnotations{Title: a.Title, DestructiveHint: a.Destructive, OpenWorldHint: a.OpenWorld}
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
