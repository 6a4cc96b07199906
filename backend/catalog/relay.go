package catalog

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Peer is the agent's MCP client, as the gateway hands it over in
// core.Request.Peer: a source's sampling and elicitation requests during
// the agent's call are relayed to it.
type Peer interface {
	CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

// Relayer takes a relayed request through the pipeline (gate, rules,
// approval, audit) and dispatches it to its Peer.
type Relayer func(ctx context.Context, r *core.Request) (mcp.Result, error)

// SetRelayer sets how sampling and elicitation requests of sources are
// relayed; until it is set (and when it is nil) they are refused.
func (c *Catalog) SetRelayer(fn Relayer) {
	c.relayMu.Lock()
	c.relayer = fn
	c.relayMu.Unlock()
}

// ERelayUnattributed: a source asked the agent's client for something, but
// Airlock cannot tell whose request the source is handling.
const ERelayUnattributed = "relay_unattributed"

// relay forwards a source's sampling or elicitation request to the agent
// whose request the source is handling. A source is shared by every agent
// and MCP does not say which request a server-to-client request belongs
// to, so Airlock relays only when exactly one agent request is in flight
// at that source; otherwise it refuses rather than guess (a guess could
// show one agent's user another agent's question).
func (d *source) relay(ctx context.Context, kind string, params any) (mcp.Result, error) {
	d.cat.relayMu.Lock()
	relayer := d.cat.relayer
	d.cat.relayMu.Unlock()
	if relayer == nil {
		return nil, fmt.Errorf("Airlock relays no %s requests", kind)
	}
	d.mu.Lock()
	var owner *core.Request
	n := 0
	for r := range d.inflight {
		if r.Peer != nil {
			owner, n = r, n+1
		}
	}
	d.mu.Unlock()
	if n != 1 {
		msg := fmt.Sprintf("Airlock cannot tell which agent's request this %s belongs to (%d requests to %s in flight)", kind, n, d.cfg.ID)
		if n == 0 {
			msg = fmt.Sprintf("%s asked for %s while no agent request of it was in flight; Airlock relays only during an agent's call", d.cfg.ID, kind)
		}
		return nil, &core.Error{Code: ERelayUnattributed, Message: msg}
	}
	args, _ := json.Marshal(params)
	r := &core.Request{Kind: kind, Caller: owner.Caller, Server: d.cfg.ID, Name: kind, Exposed: kind,
		Args: args, Peer: owner.Peer, Progress: nil}
	return relayer(ctx, r)
}

// dispatchRelay sends a relayed request to the agent's client.
func dispatchRelay(ctx context.Context, r *core.Request) (mcp.Result, error) {
	peer, ok := r.Peer.(Peer)
	if !ok {
		return nil, core.Errorf(core.EUnavailable, "the agent's client cannot be reached for %s", r.Kind)
	}
	switch r.Kind {
	case core.KindSampling:
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(r.Args, &p); err != nil {
			return nil, core.Errorf(core.EInvalid, "the sampling request is malformed: %v", err)
		}
		return peer.CreateMessage(ctx, &p)
	default:
		var p mcp.ElicitParams
		if err := json.Unmarshal(r.Args, &p); err != nil {
			return nil, core.Errorf(core.EInvalid, "the elicitation request is malformed: %v", err)
		}
		return peer.Elicit(ctx, &p)
	}
}

// track records r as in flight at d until the returned function is called.
func (d *source) track(r *core.Request) func() {
	d.mu.Lock()
	d.inflight[r] = struct{}{}
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		delete(d.inflight, r)
		d.mu.Unlock()
	}
}

// Subscribe subscribes to updates of resource uri at server on behalf of
// one agent session; the source is subscribed once, whoever asks.
func (c *Catalog) Subscribe(ctx context.Context, server, uri string) error {
	d := c.get(server)
	if d == nil {
		return unavailable(server)
	}
	d.mu.Lock()
	d.subs[uri]++
	first := d.subs[uri] == 1
	sess := d.sess
	d.mu.Unlock()
	if first && sess != nil {
		if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			d.mu.Lock()
			if d.subs[uri]--; d.subs[uri] <= 0 {
				delete(d.subs, uri)
			}
			d.mu.Unlock()
			return c.callError(ctx, &core.Request{Server: server, Name: uri}, err)
		}
	}
	return nil
}

// Unsubscribe ends one session's subscription; the last one unsubscribes
// the source.
func (c *Catalog) Unsubscribe(ctx context.Context, server, uri string) error {
	d := c.get(server)
	if d == nil {
		return nil
	}
	d.mu.Lock()
	if d.subs[uri] == 0 {
		d.mu.Unlock()
		return nil
	}
	d.subs[uri]--
	last := d.subs[uri] == 0
	if last {
		delete(d.subs, uri)
	}
	sess := d.sess
	d.mu.Unlock()
	if last && sess != nil {
		if err := sess.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
			return c.callError(ctx, &core.Request{Server: server, Name: uri}, err)
		}
	}
	return nil
}

// resubscribe renews the source's subscriptions after it (re)connected.
func (d *source) resubscribe(ctx context.Context, sess *mcp.ClientSession) {
	d.mu.Lock()
	uris := make([]string, 0, len(d.subs))
	for u := range d.subs {
		uris = append(uris, u)
	}
	d.mu.Unlock()
	for _, u := range uris {
		if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: u}); err != nil {
			d.cat.opts.Logger.Warn("renew a resource subscription", "server", d.cfg.ID, "uri", u, "err", err)
		}
	}
}

// OnResourceUpdated registers fn to hear of notifications/resources/updated
// from sources.
func (c *Catalog) OnResourceUpdated(fn func(server string, p *mcp.ResourceUpdatedNotificationParams)) {
	c.updateListeners.add(fn)
}

func (c *Catalog) routeUpdated(server string, p *mcp.ResourceUpdatedNotificationParams) {
	for _, fn := range c.updateListeners.all() {
		fn(server, p)
	}
}

// Complete forwards completion/complete to the source that serves the
// prompt or resource template ref names (in the source's own names).
func (c *Catalog) Complete(ctx context.Context, server string, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	d := c.get(server)
	if d == nil {
		return nil, unavailable(server)
	}
	sess := d.session()
	if sess == nil {
		return nil, unavailable(server)
	}
	if caps := sess.InitializeResult().Capabilities; caps == nil || caps.Completions == nil {
		// The source offers no completions: an empty answer, as MCP allows.
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	res, err := sess.Complete(ctx, p)
	if err != nil {
		return nil, c.callError(ctx, &core.Request{Server: server, Name: "completion/complete"}, err)
	}
	return res, nil
}

func unavailable(server string) error {
	return (&core.Error{Code: core.EUnavailable, Message: fmt.Sprintf("server %q is not running", server)}).
		WithHint("see the Servers screen")
}

// elicitSchemaFix works around a limit of the Go SDK (v1.8.0): its client
// and server refuse SEP-1330's titled multi-select, an array whose items
// are {"type": "string", "anyOf": [{"const", "title"}, ...]}, with "items
// must specify enum for untitled enums", although the specification and the
// TypeScript SDK accept it. The same items without "type" (every const is a
// string, so nothing changes in meaning) pass. Airlock rewrites them so that
// such a request reaches the agent as it would without Airlock (the MCP
// conformance suite's elicitation-sep1330-enums scenario tests it).
func elicitSchemaFix(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "elicitation/create" {
			if p, ok := req.GetParams().(*mcp.ElicitParams); ok && p != nil {
				p.RequestedSchema = fixTitledMulti(p.RequestedSchema)
			}
		}
		return next(ctx, method, req)
	}
}

func fixTitledMulti(schema any) any {
	var m map[string]any
	b, err := json.Marshal(schema)
	if err != nil || json.Unmarshal(b, &m) != nil {
		return schema
	}
	props, _ := m["properties"].(map[string]any)
	changed := false
	for _, v := range props {
		prop, _ := v.(map[string]any)
		if prop == nil || prop["type"] != "array" {
			continue
		}
		items, _ := prop["items"].(map[string]any)
		if items != nil && items["type"] == "string" && items["anyOf"] != nil && items["enum"] == nil {
			delete(items, "type")
			changed = true
		}
	}
	if !changed {
		return schema
	}
	return m
}
