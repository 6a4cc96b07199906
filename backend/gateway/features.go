package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// peer is the agent's MCP client, for the sampling and elicitation
// requests a source makes while it handles the agent's request. reqCtx is
// the context of that request's handler: a request sent with its values
// goes out on the HTTP stream of the agent's request (as a server's own
// requests during a call do), not on the standalone stream a client may
// not have opened.
type peer struct {
	ss     *mcp.ServerSession
	reqCtx context.Context
	// relays are the requests sent to the client on that request's stream
	// and not ended yet.
	relays *relays
}

// relayGrace is how long the answer to an agent's request waits for the
// requests relayed on its stream to end (withdrawn by their server, or
// answered). A server that gives up on its sampling or elicitation
// request cancels it and then ends its call; the two can reach Airlock
// in either order (the Go SDK sends the cancellation on a goroutine of
// its own), and the cancellation must go out on the call's stream before
// the answer that ends that stream, or the request stays open in the
// agent's client.
const relayGrace = time.Second

// relays counts the requests relayed to the agent's client on the stream
// of one of its requests.
type relays struct {
	mu   sync.Mutex
	live map[chan struct{}]bool
}

// begin records one relayed request; the function it returns ends it.
func (r *relays) begin() func() {
	if r == nil {
		return func() {}
	}
	done := make(chan struct{})
	r.mu.Lock()
	if r.live == nil {
		r.live = map[chan struct{}]bool{}
	}
	r.live[done] = true
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.live, done)
		r.mu.Unlock()
		close(done)
	}
}

// settle returns once the requests relayed on the stream have ended, at
// most relayGrace: one still open after it belongs to another call of the
// session, or to a server that keeps it open past its call (its answer
// still reaches the server; only its cancellation would be lost).
func (r *relays) settle() {
	if r == nil {
		return
	}
	r.mu.Lock()
	wait := make([]chan struct{}, 0, len(r.live))
	for done := range r.live {
		wait = append(wait, done)
	}
	r.mu.Unlock()
	if len(wait) == 0 {
		return
	}
	t := time.NewTimer(relayGrace)
	defer t.Stop()
	for _, done := range wait {
		select {
		case <-done:
		case <-t.C:
			return
		}
	}
}

// relatedContext is ctx's cancellation with the values of the agent's
// request (the SDK sends the request on that request's stream), but not
// its end: the answer comes back on a request of its own, so a request
// of the agent that ends first (Airlock cannot tell which of a session's
// calls a server asks for) does not throw it away (found by an interop
// test: with calls in flight at once, a sampling or elicitation answer
// the user had given was lost with "context canceled").
func (p peer) relatedContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if p.reqCtx == nil {
		return ctx, func() {}
	}
	// A server's withdrawal is sent on before the relay returns (SDK
	// patch), so that the answer, which waits for it (settle), follows it.
	rel, cancel := context.WithCancel(mcp.WithCancelSentOnReturn(whileLive{Context: context.Background(), req: p.reqCtx}))
	stop := context.AfterFunc(ctx, cancel)
	end := p.relays.begin()
	return rel, func() { stop(); cancel(); end() }
}

// whileLive has the values of the agent's request req while it runs and
// none once it ended: a relayed request goes out on that request's stream,
// and so does its withdrawal while the agent still reads that stream. An
// agent that cancelled its call has stopped reading it (the Go SDK's
// client hangs up on it at once), so a withdrawal after that goes on the
// session's own stream, the only one it still reads (found by a review:
// the dialog stayed open in the agent's client).
type whileLive struct {
	context.Context
	req context.Context
}

func (w whileLive) Value(key any) any {
	if w.req.Err() != nil {
		return nil
	}
	return w.req.Value(key)
}

var _ catalog.Peer = peer{}

// PeerClient is the agent session behind the request: a server's request
// during any of its calls goes to the same client.
func (p peer) PeerClient() any { return p.ss }

func (p peer) caps() *mcp.ClientCapabilities {
	if ip := p.ss.InitializeParams(); ip != nil && ip.Capabilities != nil {
		return ip.Capabilities
	}
	return &mcp.ClientCapabilities{}
}

// CreateMessage asks the agent's client for a message from its model.
func (p peer) CreateMessage(ctx context.Context, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if p.caps().Sampling == nil {
		return nil, (&core.Error{Code: "unsupported", Message: "the agent's MCP client does not support sampling"}).
			WithHint("the server needs a client that can sample (e.g. Claude Desktop, VS Code)")
	}
	ctx, cancel := p.relatedContext(ctx)
	defer cancel()
	return p.ss.CreateMessage(ctx, params)
}

// Elicit asks the agent's user, through its client, for input.
func (p peer) Elicit(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if err := elicitSupported(p.caps().Elicitation, params); err != nil {
		return nil, err
	}
	ctx, cancel := p.relatedContext(ctx)
	defer cancel()
	return p.ss.Elicit(ctx, params)
}

// ElicitationComplete tells the agent's client that a URL elicitation
// ended: on the stream of the request it was given during while that
// request runs, else on the session's own stream.
func (p peer) ElicitationComplete(ctx context.Context, params *mcp.ElicitationCompleteParams) error {
	if p.reqCtx != nil && p.reqCtx.Err() == nil {
		if err := p.ss.NotifyElicitationComplete(whileLive{Context: ctx, req: p.reqCtx}, params); err == nil {
			return nil
		}
	}
	return p.ss.NotifyElicitationComplete(ctx, params)
}

var _ catalog.ElicitationCompleter = peer{}

// elicitSupported says why a client with the elicitation capability caps
// cannot answer params, or nil when it can. A client that declares no mode
// takes forms only (MCP 2025-11-25). Its client is not at fault, as the
// SDK's refusal made it look (found by an interop test: relay_bad_answer).
func elicitSupported(caps *mcp.ElicitationCapabilities, params *mcp.ElicitParams) error {
	if caps == nil {
		return (&core.Error{Code: "unsupported", Message: "the agent's MCP client does not support elicitation"}).
			WithHint("the server needs a client that can ask its user (elicitation)")
	}
	url := params.Mode == "url" || params.Mode == "" && (params.URL != "" || params.ElicitationID != "")
	if url && caps.URL == nil {
		return (&core.Error{Code: "unsupported", Message: "the agent's MCP client does not support elicitation through a URL, only forms"}).
			WithHint("the server needs a client that can open a URL for its user (URL-mode elicitation)")
	}
	if !url && caps.Form == nil && caps.URL != nil {
		return (&core.Error{Code: "unsupported", Message: "the agent's MCP client does not support elicitation through a form, only URLs"}).
			WithHint("the server needs a client that can show its user a form (form-mode elicitation)")
	}
	return nil
}

// peerOf returns the agent's client behind req, handled with ctx, or nil.
// For a call of a 2026-07-28 agent that is the call itself, which carries
// the requests to the client as input requests (mrtr.go).
func peerOf(ctx context.Context, req mcp.Request) any {
	if pc := pendingOf(ctx); pc != nil {
		return pc
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		return peer{ss: ss, reqCtx: ctx, relays: &relays{}}
	}
	return nil
}

// KindComplete is the audit kind of completion/complete.
const KindComplete = "completion/complete"

// complete answers completion/complete for session s: the prompt or
// resource template the reference names must be one the caller may use.
// The request is recorded like any other (refused or answered; found by a
// red-team review: neither left a trace, so an agent could probe servers
// it is not granted unseen), made durable before it reaches the server
// (refused when it cannot be), and the policies that refuse outright (the
// data-directory guard) see the values it sends.
func (g *Gateway) complete(s *session) func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		c, err := g.caller(s, nil)
		if err != nil {
			return nil, rpcErr(err)
		}
		p := *req.Params
		ref := *p.Ref
		args, _ := json.Marshal(&p)
		r := &core.Request{Kind: KindComplete, Caller: c, Name: cmp.Or(ref.Name, ref.URI), Exposed: cmp.Or(ref.Name, ref.URI), Args: args}
		refuse := func(err error) (*mcp.CompleteResult, error) {
			_, err = g.refuse(r, err)
			return nil, err
		}
		snap := g.cat.Snapshot()
		switch ref.Type {
		case "ref/prompt":
			pr, ok := snap.Prompt(ref.Name)
			if !ok {
				return refuse(core.Errorf(catalog.EUnknownPrompt, "no server offers a prompt named %q", ref.Name))
			}
			r.Server = pr.Server
			if err := g.lister.Check(&c, core.Target{Kind: core.KindPromptGet, Server: pr.Server, Name: pr.Name}); err != nil {
				return refuse(err)
			}
			r.Name, ref.Name = pr.Name, pr.Name
		case "ref/resource":
			r.Server = templateServer(snap, ref.URI)
			if r.Server == "" {
				return refuse(core.Errorf(catalog.EUnknownResource, "no server offers the resource or template %q", ref.URI))
			}
			if err := g.lister.Check(&c, core.Target{Kind: core.KindResourceRead, Server: r.Server, Name: ref.URI}); err != nil {
				return refuse(err)
			}
		default:
			return refuse(core.Errorf(core.EInvalid, "unknown completion reference type %q", ref.Type))
		}
		if g.opts.Precheck != nil {
			if v := g.opts.Precheck.Check(ctx, r); v.Outcome == core.Deny {
				return refuse((&core.Error{Code: cmp.Or(v.Code, core.EDenied), Message: v.Reason}).WithHint(v.Hint))
			}
		}
		start := time.Now()
		rec := &core.AuditRecord{Time: start.UTC(), Kind: r.Kind, Agent: c.Label(), AgentID: c.AgentID,
			Client: c.Client.Name, ClientVersion: c.Client.Version, Session: c.Session, Purpose: c.Purpose,
			Server: r.Server, Tool: r.Name, Arguments: pipeline.RedactArguments(args), Decision: core.DecisionAllow,
			Reason: "a completion of a prompt or resource the agent may use", Status: core.StatusRunning}
		if g.opts.Audit == nil {
			return nil, rpcErr(core.Errorf(pipeline.EAuditUnavailable, "Airlock cannot record this request (no audit log), so it refuses it"))
		}
		pipeline.ClipRecord(rec)
		if err := g.opts.Audit.Begin(rec); err != nil {
			return nil, rpcErr(core.Errorf(pipeline.EAuditUnavailable, "Airlock cannot record this request, so it refuses it: %s", core.ErrorMessage(err)))
		}
		p.Ref = &ref
		res, err := g.cat.Complete(ctx, r.Server, &p)
		rec.LatencyUs, rec.Status = time.Since(start).Microseconds(), core.StatusOK
		if err != nil {
			rec.Status, rec.ErrorCode, rec.Error = core.StatusError, core.ErrorCode(err), core.ErrorMessage(err)
		}
		g.opts.Audit.Finish(rec)
		if err != nil {
			return nil, rpcErr(err)
		}
		return res, nil
	}
}

// templateServer is the server of a resource template or resource URI.
func templateServer(snap *catalog.Snapshot, uri string) string {
	for _, t := range snap.Templates {
		if t.Def.URITemplate == uri {
			return t.Server
		}
	}
	server, _ := snap.ResourceServer(uri)
	return server
}

// subscribe and unsubscribe are session s's resources/subscribe handlers:
// the caller must be allowed to read the resource; the source is
// subscribed once for every session that asks.
func (g *Gateway) subscribe(s *session, on bool) func(context.Context, string) error {
	return func(ctx context.Context, uri string) error {
		if uri == "" {
			// Names no resource: a bad request, not one no server offers.
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "uri is required: name the resource to subscribe to or unsubscribe from"}
		}
		if !on {
			// Whatever the catalog offers now: the resource may be gone
			// since, and the subscription must still be released.
			s.mu.Lock()
			key, had := subscription(s.subs, uri)
			delete(s.subs, key)
			s.mu.Unlock()
			if !had {
				return nil
			}
			g.keepSubscriptions(s)
			return g.cat.Unsubscribe(ctx, key[0], key[1])
		}
		server, err := g.subscribeTarget(ctx, s, uri)
		if err != nil {
			return err
		}
		key := [2]string{server, uri}
		s.mu.Lock()
		had := subscribedTo(s.subs, uri)
		s.mu.Unlock()
		if had {
			// Subscribed already, maybe to another server (the one server
			// of resources then, one whose template matches it now): one
			// subscription per URI, which the unsubscribe releases (found
			// in a review: a second one stayed upstream).
			return nil
		}
		if err := g.cat.Subscribe(ctx, server, uri); err != nil {
			return rpcErr(err)
		}
		s.mu.Lock()
		s.subs[key] = true
		s.mu.Unlock()
		g.keepSubscriptions(s)
		return nil
	}
}

// subscribedTo reports whether subs, keyed by server and URI, holds uri.
func subscribedTo[V comparable](subs map[[2]string]V, uri string) bool {
	_, ok := subscription(subs, uri)
	return ok
}

// subscription returns the key of subs, keyed by server and URI, that
// holds uri: there is at most one.
func subscription[V comparable](subs map[[2]string]V, uri string) ([2]string, bool) {
	var zero V
	for k, v := range subs {
		if k[1] == uri && v != zero {
			return k, true
		}
	}
	return [2]string{}, false
}

// keepSubscriptions keeps what session s is subscribed to for a restart
// (found by a new-user test: after one, a subscribed client heard of no
// update until it subscribed again, which clients do not do).
func (g *Gateway) keepSubscriptions(s *session) {
	if g.opts.Sessions == nil || !s.keepable() {
		return
	}
	s.keepMu.Lock()
	defer s.keepMu.Unlock()
	s.mu.Lock()
	subs := make([][2]string, 0, len(s.subs))
	for k := range s.subs {
		subs = append(subs, k)
	}
	s.mu.Unlock()
	slices.SortFunc(subs, func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	if err := g.opts.Sessions.Subscriptions(s.id(), subs); err != nil {
		g.log.Warn("keep a session's subscriptions for after a restart", "err", err)
	}
}

// resubscribe subscribes a session carried on from an earlier run to what
// it was subscribed to then, where its agent may still read it (a source
// not started yet is subscribed once it is). One it may no longer read is
// dropped, as a new subscription to it would be refused.
func (g *Gateway) resubscribe(s *session, subs [][2]string) {
	if len(subs) == 0 {
		return
	}
	c, err := g.peek(s)
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	for _, k := range subs {
		if err == nil {
			if cerr := g.lister.Check(&c, core.Target{Kind: core.KindResourceRead, Server: k[0], Name: k[1]}); cerr != nil {
				g.log.Info("a resumed session's subscription is dropped: its agent may no longer read the resource", "server", k[0], "uri", k[1], "err", cerr)
				continue
			}
		} else {
			g.log.Info("a resumed session's subscription is dropped", "server", k[0], "uri", k[1], "err", err)
			continue
		}
		if err := g.cat.Subscribe(ctx, k[0], k[1]); err != nil {
			g.log.Warn("subscribe a resumed session again", "server", k[0], "uri", k[1], "err", err)
			continue
		}
		s.mu.Lock()
		ended := s.ctx.Err() != nil // its subscriptions were released
		if !ended {
			s.subs[k] = true
			s.server.RestoreSubscription(s.ss.Load(), k[1])
		}
		s.mu.Unlock()
		if ended {
			g.cat.Unsubscribe(context.Background(), k[0], k[1])
			return
		}
	}
	g.keepSubscriptions(s)
}

// KindSubscribe is the audit kind of a refused resource subscription.
const KindSubscribe = "resources/subscribe"

// subscribeTarget is the server that offers uri, when the agent of session
// s may read it (a subscription is a standing read). A refused
// subscription is recorded in Activity, with its reason, and the error is
// the JSON-RPC error the agent gets.
func (g *Gateway) subscribeTarget(ctx context.Context, s *session, uri string) (string, error) {
	snap := g.cat.Snapshot()
	server := templateServer(snap, uri)
	c, err := g.caller(s, nil)
	if err == nil && server == "" {
		// One it serves but does not list, as for a read (found by an
		// interop test: read through Airlock, but refused a subscription).
		// Only for a caller who may ask: the lookup may list resources
		// again (found in a review).
		server, _ = g.cat.ResourceServerFor(ctx, snap, uri)
	}
	if err == nil && server == "" {
		err = core.Errorf(catalog.EUnknownResource, "no server offers the resource %q", uri)
	}
	if err == nil {
		err = g.lister.Check(&c, core.Target{Kind: core.KindResourceRead, Server: server, Name: uri})
	}
	if err == nil {
		return server, nil
	}
	_, err = g.refuse(&core.Request{Kind: KindSubscribe, Caller: c, Server: server, Exposed: uri}, err)
	return "", err
}

// releaseSubscriptions drops what a closed session was subscribed to.
func (g *Gateway) releaseSubscriptions(s *session) {
	s.mu.Lock()
	keys := make([][2]string, 0, len(s.subs))
	for k := range s.subs {
		keys = append(keys, k)
	}
	s.subs = map[[2]string]bool{}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, k := range keys {
		g.cat.Unsubscribe(ctx, k[0], k[1])
	}
}

// forwardUpdated passes a source's notifications/resources/updated to the
// sessions subscribed to that resource.
func (g *Gateway) forwardUpdated(server string, p *mcp.ResourceUpdatedNotificationParams) {
	key := [2]string{server, p.URI}
	g.mu.Lock()
	var to []*session
	for _, s := range g.bySID {
		s.mu.Lock()
		if s.subs[key] {
			to = append(to, s)
		}
		s.mu.Unlock()
	}
	g.mu.Unlock()
	for _, s := range to {
		if !g.mayRead(s, server, p.URI) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		s.server.ResourceUpdated(ctx, p)
		cancel()
	}
	g.updatedStateless(server, p)
}

// mayRead reports whether the agent of session s may still read the
// resource it subscribed to: a subscription does not outlive the access
// it was made with (a revoked grant, a suspended agent).
func (g *Gateway) mayRead(s *session, server, uri string) bool {
	c, err := g.peek(s)
	return err == nil && g.lister.Check(&c, core.Target{Kind: core.KindResourceRead, Server: server, Name: uri}) == nil
}

// airlockInstructions is what Airlock tells every agent at initialize
// about itself; instructions adds its servers' own.
const airlockInstructions = "Airlock gateway: downstream tools are named <server>__<tool>. Some calls wait for a person's approval; a refusal is a tool error carrying a reason code and a hint. Call the help tool to see what you can use."

// maxServerInstructions is how much of one server's instructions an agent
// is given (a server's guidance is a few paragraphs; this keeps one server
// from filling the agent's context).
const maxServerInstructions = 8 << 10

// instructions are Airlock's own, then those of each running server the
// caller of session s may use something of (a tool, prompt or resource), as
// the user accepted them (a rewrite waits on the Servers screen, as a
// changed tool does), under its name: an agent connected to the server
// directly would have got them (found by an interop test: they were
// dropped).
func (g *Gateway) instructions(s *session) string {
	notes := g.cat.Instructions()
	if len(notes) == 0 {
		return airlockInstructions
	}
	c, err := g.peek(s)
	if err != nil {
		return airlockInstructions
	}
	snap := g.cat.Snapshot()
	uses := map[string]bool{}
	for _, t := range snap.Tools {
		if notes[t.ServerID] != "" && !uses[t.ServerID] && g.visible(&c, core.Target{Kind: core.KindToolCall, Server: t.ServerID, Name: t.Name}) {
			uses[t.ServerID] = true
		}
	}
	for _, p := range snap.Prompts {
		if notes[p.Server] != "" && !uses[p.Server] && g.visible(&c, core.Target{Kind: core.KindPromptGet, Server: p.Server, Name: p.Name}) {
			uses[p.Server] = true
		}
	}
	for _, r := range snap.Resources {
		if notes[r.Server] != "" && !uses[r.Server] && g.visible(&c, core.Target{Kind: core.KindResourceRead, Server: r.Server, Name: r.Def.URI}) {
			uses[r.Server] = true
		}
	}
	ids := slices.Sorted(maps.Keys(uses))
	if len(ids) == 0 {
		return airlockInstructions
	}
	var b strings.Builder
	b.WriteString(airlockInstructions)
	b.WriteString("\n\nInstructions of the servers behind Airlock, as each gave them (each quoted under its server's name):")
	for _, id := range ids {
		text := strings.TrimSpace(notes[id])
		if len(text) > maxServerInstructions {
			text = strings.ToValidUTF8(text[:maxServerInstructions], "") + " […]"
		}
		// Every line quoted: a server's text cannot pass for another
		// server's section, or for Airlock's own words (found in a
		// review: a "## Server guide" line in another server's text).
		fmt.Fprintf(&b, "\n\n## Server %s\n\n> %s", id, strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", "\n> "))
	}
	return b.String()
}

// serverOptions are the options of every MCP server the gateway serves
// agents with: a session's, and a sessionless credential's (stateless.go).
// s is the session (or credential) it serves; complete answers
// completion/complete; subscribe answers resources/subscribe (on) and
// resources/unsubscribe.
func (g *Gateway) serverOptions(s *session, complete func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error),
	subscribe func(ctx context.Context, uri string, on bool) error) *mcp.ServerOptions {
	return &mcp.ServerOptions{
		Instructions: airlockInstructions, // and its servers' (instructions)
		Logger:       slog.New(quietUndelivered{g.log.Handler()}),
		// A relayed elicitation's answer goes to the server as the user gave
		// it (SDK patch): with the schema's defaults filled in, the server
		// got values the user never chose (found by an interop test).
		KeepElicitationContent: true,
		// A 2026-07-28 tools/call's Mcp-Param-* headers are checked against
		// its arguments by the x-mcp-header annotations of the tool as
		// agents see it (SEP-2243; SDK patch): the SDK knew only tools
		// registered with it, and Airlock registers none, so it checked
		// nothing (found by the MCP conformance suite 0.2.0-alpha.12).
		// Only a tool the caller may see: a header error must not tell of a
		// hidden one (noted with the header check); for any other the pipeline's
		// refusal stands.
		ToolForHeaders: func(name string) *mcp.Tool { return g.headerTool(s, name) },
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Logging:     &mcp.LoggingCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
		},
		CompletionHandler: complete,
		SubscribeHandler: func(ctx context.Context, req *mcp.SubscribeRequest) error {
			return subscribe(ctx, req.Params.URI, true)
		},
		UnsubscribeHandler: func(ctx context.Context, req *mcp.UnsubscribeRequest) error {
			return subscribe(ctx, req.Params.URI, false)
		},
	}
}

// quietUndelivered logs at debug level what the SDK warns about each time
// a notification finds no stream to take it ("rejected by transport": a
// session whose client keeps no GET stream open cannot get list_changed,
// which is how many clients work); every other record passes as it is.
type quietUndelivered struct{ slog.Handler }

func (q quietUndelivered) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn && strings.Contains(r.Message, "rejected by transport") {
		if !q.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return q.Handler.Handle(ctx, r)
}

func (q quietUndelivered) WithAttrs(as []slog.Attr) slog.Handler {
	return quietUndelivered{q.Handler.WithAttrs(as)}
}

func (q quietUndelivered) WithGroup(name string) slog.Handler {
	return quietUndelivered{q.Handler.WithGroup(name)}
}

// headerTool is the tool exposed as name as session s's caller sees it, or
// nil when there is none or the caller may not see it.
func (g *Gateway) headerTool(s *session, name string) *mcp.Tool {
	v := g.views.get(g.cat.Snapshot())
	i, ok := v.index[name]
	if !ok {
		return nil
	}
	c, err := g.peek(s)
	if err != nil {
		return nil
	}
	if t := v.snap.Tools[i]; !g.visible(&c, core.Target{Kind: core.KindToolCall, Server: t.ServerID, Name: t.Name}) {
		return nil
	}
	return v.tools[i]
}
