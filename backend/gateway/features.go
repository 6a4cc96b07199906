package gateway

import (
	"context"
	"time"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
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
}

// relatedContext is ctx's cancellation with the values of the agent's
// request.
func (p peer) relatedContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if p.reqCtx == nil {
		return ctx, func() {}
	}
	rel, cancel := context.WithCancel(p.reqCtx)
	stop := context.AfterFunc(ctx, cancel)
	return rel, func() { stop(); cancel() }
}

var _ catalog.Peer = peer{}

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
	if p.caps().Elicitation == nil {
		return nil, (&core.Error{Code: "unsupported", Message: "the agent's MCP client does not support elicitation"}).
			WithHint("the server needs a client that can ask its user (elicitation)")
	}
	ctx, cancel := p.relatedContext(ctx)
	defer cancel()
	return p.ss.Elicit(ctx, params)
}

// peerOf returns the agent's client behind req, handled with ctx, or nil.
func peerOf(ctx context.Context, req mcp.Request) any {
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		return peer{ss: ss, reqCtx: ctx}
	}
	return nil
}

// complete answers completion/complete for session s: the prompt or
// resource template the reference names must be one the caller may use.
func (g *Gateway) complete(s *session) func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		c, err := g.caller(s, nil)
		if err != nil {
			return nil, rpcErr(err)
		}
		p := *req.Params
		ref := *p.Ref
		snap := g.cat.Snapshot()
		var server string
		switch ref.Type {
		case "ref/prompt":
			pr, ok := snap.Prompt(ref.Name)
			if !ok {
				return nil, rpcErr(core.Errorf(catalog.EUnknownPrompt, "no server offers a prompt named %q", ref.Name))
			}
			if err := g.lister.Check(&c, core.Target{Kind: core.KindPromptGet, Server: pr.Server, Name: pr.Name}); err != nil {
				return nil, rpcErr(err)
			}
			server, ref.Name = pr.Server, pr.Name
		case "ref/resource":
			server = templateServer(snap, ref.URI)
			if server == "" {
				return nil, rpcErr(core.Errorf(catalog.EUnknownResource, "no server offers the resource or template %q", ref.URI))
			}
			if err := g.lister.Check(&c, core.Target{Kind: core.KindResourceRead, Server: server, Name: ref.URI}); err != nil {
				return nil, rpcErr(err)
			}
		default:
			return nil, rpcErr(core.Errorf(core.EInvalid, "unknown completion reference type %q", ref.Type))
		}
		p.Ref = &ref
		res, err := g.cat.Complete(ctx, server, &p)
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
		server := templateServer(g.cat.Snapshot(), uri)
		if server == "" {
			if !on {
				return nil
			}
			return rpcErr(core.Errorf(catalog.EUnknownResource, "no server offers the resource %q", uri))
		}
		key := [2]string{server, uri}
		s.mu.Lock()
		had := s.subs[key]
		s.mu.Unlock()
		if on {
			c, err := g.caller(s, nil)
			if err == nil {
				err = g.lister.Check(&c, core.Target{Kind: core.KindResourceRead, Server: server, Name: uri})
			}
			if err != nil {
				return rpcErr(err)
			}
			if had {
				return nil
			}
			if err := g.cat.Subscribe(ctx, server, uri); err != nil {
				return rpcErr(err)
			}
			s.mu.Lock()
			s.subs[key] = true
			s.mu.Unlock()
			return nil
		}
		if !had {
			return nil
		}
		s.mu.Lock()
		delete(s.subs, key)
		s.mu.Unlock()
		return g.cat.Unsubscribe(ctx, server, uri)
	}
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
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		s.server.ResourceUpdated(ctx, p)
		cancel()
	}
}
