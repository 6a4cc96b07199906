package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Airlock speaks both protocol revisions the Go SDK speaks on the agent
// side. A 2025-11-25 (or older) agent opens a session with initialize and
// gets its own MCP server for its lifetime (gateway.go). A 2026-07-28 agent
// (SEP-2575) has no session: every request is a POST that carries its
// protocol version, client info and capabilities in _meta, and is served by
// a throwaway SDK session (the SDK serves that revision only in its
// stateless mode). Such requests are told apart by their
// MCP-Protocol-Version header, which that revision makes mandatory.
//
// Identity and ownership without a session id. Every request is identified
// on its own, from its own credential (gate 1 in identify, then Resolve
// with no session id), exactly as on a session; nothing a request does is
// attributed to any other request's credential. What outlives one request
// belongs to the credential that made it:
//   - a call waiting for the agent's answers to input requests (SEP-2322,
//     mrtr.go) belongs to the Connection.Key that started it: a retry with
//     its requestState and another credential, or none, is refused and
//     audited, and the call stays the owner's. Each requestState is good
//     for one retry (a new one comes with every input_required result), so
//     a replayed or leaked state is refused too;
//   - subscriptions/listen streams (list_changed, resources/updated) are
//     HTTP responses: only the request that opened one reads it. They are
//     grouped per credential and URL (the same bearer token and query), the
//     nearest thing this revision has to a session, so that list_changed is
//     computed for what that credential sees.
//
// A request with no credential is "nobody" as on a session; its waiting
// calls are then guarded only by the requestState, a random 128-bit token.

// statelessVersion is the first revision without sessions.
const statelessVersion = "2026-07-28"

// EProtocolVersion is the code of a request in a protocol revision Airlock
// does not speak.
const EProtocolVersion = "unsupported_protocol_version"

// speaksStateless reports whether r is a request of a revision without
// sessions; a revision Airlock does not speak is a *core.Error.
func speaksStateless(r *http.Request) (bool, *core.Error) {
	v := r.Header.Get("Mcp-Protocol-Version")
	if v == "" {
		return false, nil // initialize, or a client of 2025-03-26 or older
	}
	if !slices.Contains(mcp.SupportedProtocolVersions(), v) {
		return false, (&core.Error{Code: EProtocolVersion,
			Message: "Airlock does not speak MCP protocol version " + strings.TrimSpace(clipVersion(v))}).
			WithHint("use one of " + strings.Join(mcp.SupportedProtocolVersions(), ", "))
	}
	return v >= statelessVersion, nil
}

func clipVersion(v string) string {
	if len(v) > 40 {
		return v[:40] + "…"
	}
	return v
}

// refuseVersion answers a request in a protocol revision Airlock does not
// speak: HTTP 400 with the JSON-RPC error SEP-2575 defines for it
// (UnsupportedProtocolVersionError, whose data lists the revisions Airlock
// speaks, so that a client can retry with one), the reason code in its
// message and data as in every refusal. A known credential's attempt is
// audited.
func (g *Gateway) refuseVersion(w http.ResponseWriter, r *http.Request, conn Connection, e *core.Error) {
	if conn.Key != "" {
		g.refuseConnection(r, conn, e)
	}
	id := requestID(r)
	if id == nil {
		id = json.RawMessage("null")
	}
	data := struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
		*core.Error
	}{mcp.SupportedProtocolVersions(), clipVersion(r.Header.Get("Mcp-Protocol-Version")), e}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{
		"code": mcp.CodeUnsupportedProtocolVersion, "message": pipeline.RPCError(e).Message, "data": data}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write(body)
}

type connCtxKey struct{}

// serveStateless hands a request of the sessionless revision, made over
// conn, to the SDK's stateless handler. The SDK keeps the HTTP request's
// context values in the handler's context, which is how the middleware
// learns conn.
func (g *Gateway) serveStateless(w http.ResponseWriter, r *http.Request, conn Connection) {
	r.Header.Del(postHeader) // a stateless handler's context ends with its request
	ctx := context.WithValue(r.Context(), connCtxKey{}, conn)
	g.proto.handler(g).ServeHTTP(w, r.WithContext(ctx))
}

// protoState is what the gateway keeps for agents of the sessionless
// revision.
type protoState struct {
	once sync.Once
	h    *mcp.StreamableHTTPHandler

	mu      sync.Mutex
	creds   map[[32]byte]*credential
	pending map[string]*pendingCall // requestState → the call waiting for it
	rounds  map[*round]struct{}     // requests waiting on a call now
}

func (p *protoState) handler(g *Gateway) *mcp.StreamableHTTPHandler {
	p.once.Do(func() {
		p.h = mcp.NewStreamableHTTPHandler(g.credentialServer, &mcp.StreamableHTTPOptions{
			Stateless:           true,
			MaxRequestBodyBytes: MaxRequestBytes,
			Logger:              g.log,
			// A client that hangs up cancels its request, as on a session.
			PropagateRequestCancellation: true,
		})
	})
	return p.h
}

// credential is what outlives one request of one credential over one URL:
// the MCP server its requests are served by (whose subscriptions/listen
// streams hear its list_changed and resources/updated), what it was last
// told its lists are, and the resources it is subscribed to.
type credential struct {
	sess     *session // its server and the connection that first used it; never has an SDK session
	lastUsed time.Time

	mu   sync.Mutex
	subs map[[2]string]int // server, URI → listen streams subscribed
}

// knownCredential reports whether r is a request of the sessionless
// revision whose credential made requests before (it has a server here).
func (g *Gateway) knownCredential(r *http.Request) bool {
	if stateless, err := speaksStateless(r); err != nil || !stateless {
		return false
	}
	key := credentialKey(r)
	p := &g.proto
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.creds[key] != nil
}

// credentialKey identifies the credential of a sessionless request: its
// Authorization header and the URL's query (project, purpose).
func credentialKey(r *http.Request) [32]byte {
	return sha256.Sum256([]byte(r.Header.Get("Authorization") + "\n" + r.URL.RawQuery))
}

// credentialServer is the stateless handler's getServer: the server of the
// request's credential, made at its first request. The SDK calls it twice
// for every request, so it is a map lookup.
func (g *Gateway) credentialServer(r *http.Request) *mcp.Server {
	conn, ok := r.Context().Value(connCtxKey{}).(Connection)
	if !ok {
		return nil // not through identify: the SDK answers 400
	}
	key := credentialKey(r)
	p := &g.proto
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if cr := p.creds[key]; cr != nil {
		cr.lastUsed = now
		return cr.sess.server
	}
	if p.creds == nil {
		p.creds = map[[32]byte]*credential{}
	}
	// Forget credentials that have been idle as long as a session may be,
	// with nothing open: their next request starts afresh.
	for k, cr := range p.creds {
		if now.Sub(cr.lastUsed) > SessionIdleTimeout && !hasSessions(cr.sess.server) {
			delete(p.creds, k)
		}
	}
	cr := &credential{sess: &session{conn: conn, created: now}, lastUsed: now, subs: map[[2]string]int{}}
	cr.sess.server = mcp.NewServer(g.impl(), g.serverOptions(cr.sess,
		func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			rs := requestSession(ctx)
			if rs == nil {
				return nil, rpcErr(errNoConnection)
			}
			return g.complete(rs)(ctx, req)
		},
		func(ctx context.Context, uri string, on bool) error { return g.subscribeStateless(ctx, cr, uri, on) }))
	cr.sess.server.AddReceivingMiddleware(g.statelessMiddleware(cr))
	g.announce(cr.sess, false) // what it sees now, for list_changed later
	p.creds[key] = cr
	return cr.sess.server
}

func hasSessions(srv *mcp.Server) bool {
	for range srv.Sessions() {
		return true
	}
	return false
}

var errNoConnection = core.Errorf(core.EInternal, "a request reached Airlock's MCP server without its connection")

type requestSessionKey struct{}

// requestSession is the session view of the stateless request handled with
// ctx, or nil.
func requestSession(ctx context.Context) *session {
	rs, _ := ctx.Value(requestSessionKey{}).(*session)
	return rs
}

// statelessMiddleware answers the requests of credential cr as the session
// middleware answers a session's: every request gets a session view of its
// own (its connection and its SDK session, whose client info and
// capabilities come from the request's _meta), so that the caller is
// resolved per request from the request's own credential.
func (g *Gateway) statelessMiddleware(cr *credential) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			conn, ok := ctx.Value(connCtxKey{}).(Connection)
			ss, _ := req.GetSession().(*mcp.ServerSession)
			if !ok || ss == nil {
				return nil, rpcErr(errNoConnection) // fail closed
			}
			rs := &session{server: cr.sess.server, conn: conn}
			rs.ss.Store(ss)
			ctx = context.WithValue(ctx, requestSessionKey{}, rs)
			switch method {
			case "tools/list":
				return g.listTools(rs)
			case "prompts/list":
				return g.listPrompts(rs)
			case "resources/list":
				return g.listResources(rs)
			case "resources/templates/list":
				return g.listTemplates(rs)
			case "tools/call", "prompts/get", "resources/read":
				return g.roundTrip(ctx, rs, method, req)
			case "server/discover":
				res, err := next(ctx, method, req)
				if dr, ok := res.(*mcp.DiscoverResult); ok && dr != nil {
					// Made for this caller: no client or intermediary may
					// give it to another (found in a review: "public").
					dr.Instructions, dr.Cacheable = g.instructions(rs), perCaller()
				}
				return res, err
			}
			return next(ctx, method, req)
		}
	}
}

// subscribeStateless is credential cr's resources/subscribe handler, which
// the SDK calls for every URI a subscriptions/listen stream asks for, and
// its unsubscribe handler, called when that stream ends.
func (g *Gateway) subscribeStateless(ctx context.Context, cr *credential, uri string, on bool) error {
	if !on {
		cr.mu.Lock()
		key, ok := subscription(cr.subs, uri)
		if !ok {
			cr.mu.Unlock()
			return nil
		}
		if cr.subs[key]--; cr.subs[key] == 0 {
			delete(cr.subs, key)
		}
		cr.mu.Unlock()
		// The stream has ended, and with it ctx.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return g.cat.Unsubscribe(uctx, key[0], key[1])
	}
	rs := requestSession(ctx)
	if rs == nil {
		return rpcErr(errNoConnection)
	}
	server, err := g.subscribeTarget(ctx, rs, uri)
	if err != nil {
		return err
	}
	key := [2]string{server, uri}
	cr.mu.Lock()
	if k, ok := subscription(cr.subs, uri); ok {
		// Another stream of the credential has it, maybe from another
		// server (the one server of resources then): the same key, which
		// a release by URI finds (found in a review: a release took the
		// other stream's server).
		key = k
	}
	cr.subs[key]++
	cr.mu.Unlock()
	if err := g.cat.Subscribe(ctx, key[0], uri); err != nil {
		cr.mu.Lock()
		if cr.subs[key]--; cr.subs[key] == 0 {
			delete(cr.subs, key)
		}
		cr.mu.Unlock()
		return rpcErr(err)
	}
	return nil
}

func (p *protoState) credentials() []*credential {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*credential, 0, len(p.creds))
	for _, cr := range p.creds {
		out = append(out, cr)
	}
	return out
}

// syncStateless sends list_changed to the listen streams of every
// credential whose lists changed.
func (g *Gateway) syncStateless() {
	for _, cr := range g.proto.credentials() {
		g.announce(cr.sess, true)
	}
}

// updatedStateless passes a source's notifications/resources/updated to
// the listen streams subscribed to that resource.
func (g *Gateway) updatedStateless(server string, p *mcp.ResourceUpdatedNotificationParams) {
	for _, cr := range g.proto.credentials() {
		cr.mu.Lock()
		n := cr.subs[[2]string{server, p.URI}]
		cr.mu.Unlock()
		if n > 0 && g.mayRead(cr.sess, server, p.URI) {
			// The SDK sends it to the streams of cr that asked for this URI.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			cr.sess.server.ResourceUpdated(ctx, p)
			cancel()
		}
	}
}

// logStateless passes a source's log message to the requests of this
// revision in flight whose caller sees the source: in it a server's log
// messages travel on the response to a request, at the level the request
// asked for in _meta (logging/setLevel is gone). A message that arrives
// when no such request is open has nowhere to go. That includes one a
// source sends just before its result: the SDK's client handles a server's
// notifications on a queue of their own, apart from responses
// (internal/jsonrpc2 handleAsync), so the result can end the agent's
// request first.
func (g *Gateway) logStateless(server string, msg *mcp.LoggingMessageParams, from catalog.LogSource) {
	g.proto.mu.Lock()
	rounds := make([]*round, 0, len(g.proto.rounds))
	for rd := range g.proto.rounds {
		rounds = append(rounds, rd)
	}
	g.proto.mu.Unlock()
	for _, rd := range rounds {
		c, err := g.peek(rd.rs)
		if err != nil || !g.seesServer(&c, server) || !from.Idle && !g.sessionOf(rd.rs, from.Agents[0]) {
			continue
		}
		ctx, cancel := context.WithTimeout(rd.ctx, time.Second)
		rd.rs.ss.Load().Log(ctx, msg)
		cancel()
	}
}

// seesServer reports whether c may use anything server offers.
func (g *Gateway) seesServer(c *core.Caller, server string) bool {
	snap := g.cat.Snapshot()
	for _, t := range snap.Tools {
		if t.ServerID == server && g.visible(c, core.Target{Kind: core.KindToolCall, Server: server, Name: t.Name}) {
			return true
		}
	}
	for _, p := range snap.Prompts {
		if p.Server == server && g.visible(c, core.Target{Kind: core.KindPromptGet, Server: server, Name: p.Name}) {
			return true
		}
	}
	for _, r := range snap.Resources {
		if r.Server == server && g.visible(c, core.Target{Kind: core.KindResourceRead, Server: server, Name: r.Def.URI}) {
			return true
		}
	}
	for _, t := range snap.Templates {
		if t.Server == server && g.visible(c, core.Target{Kind: core.KindResourceRead, Server: server, Name: t.Def.URITemplate}) {
			return true
		}
	}
	return false
}

// closeStateless ends the listen streams and the calls waiting for answers.
func (g *Gateway) closeStateless() {
	p := &g.proto
	p.mu.Lock()
	pending := make([]*pendingCall, 0, len(p.pending))
	for state, pc := range p.pending {
		pending = append(pending, pc)
		delete(p.pending, state)
	}
	p.mu.Unlock()
	for _, pc := range pending {
		pc.stop()
	}
	// A session's Close waits for its requests to end, and a sessionless
	// request's context is the caller's, which the drain cannot end: the
	// wait is bounded, and a request still running then is cut when the
	// HTTP server closes its connection (found by a regression test: a
	// stop waited 2 minutes for a call of a 2026-07-28 client).
	var wg sync.WaitGroup
	for _, cr := range p.credentials() {
		for ss := range cr.sess.server.Sessions() {
			wg.Go(func() { ss.Close() })
		}
	}
	closed := make(chan struct{})
	go func() { wg.Wait(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(answerGrace):
		g.log.Warn("sessionless requests were still running when Airlock stopped; their connections are cut")
	}
}
