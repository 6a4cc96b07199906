package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// peerClient is the agent client behind p: the session of a 2025-11-25
// agent's requests, or the request itself.
func peerClient(p any) any {
	if pc, ok := p.(interface{ PeerClient() any }); ok {
		return pc.PeerClient()
	}
	return p
}

// ERelayUnattributed: a source asked the agent's client for something, but
// Airlock cannot tell whose request the source is handling.
const ERelayUnattributed = "relay_unattributed"

// relay forwards a source's sampling or elicitation request to the agent
// whose request the source is handling. A source is shared by every agent
// and MCP does not say which request a server-to-client request belongs
// to, so Airlock relays only when the requests in flight at that source
// all come from one agent client (one session); otherwise it refuses
// rather than guess (a guess could show one agent's user another agent's
// question).
//
// PeerClient, when a Peer has it, names the client behind it: requests of
// one session share it.
func (d *source) relay(ctx context.Context, kind string, params any) (mcp.Result, error) {
	d.cat.relayMu.Lock()
	relayer := d.cat.relayer
	d.cat.relayMu.Unlock()
	if relayer == nil {
		return nil, fmt.Errorf("Airlock relays no %s requests", kind)
	}
	d.mu.Lock()
	var owner *core.Request
	clients := map[any]bool{}
	for r := range d.inflight {
		if r.Peer != nil {
			owner, clients[peerClient(r.Peer)] = r, true
		}
	}
	n := len(clients)
	d.mu.Unlock()
	if n != 1 {
		msg := fmt.Sprintf("Airlock cannot tell which agent's request this %s belongs to: requests of more than one agent session are in flight at %s", kind, d.cfg.ID)
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

// Error codes of relayed requests that are not what MCP says they must be.
const (
	// ERelayMalformed: a source's sampling or elicitation request is not
	// one an agent's client could answer (no messages, no token budget, a
	// message without a role or content, an elicitation with no message, a
	// URL elicitation without its id). It is refused before anyone is
	// asked, and the source gets the refusal.
	ERelayMalformed = "relay_malformed"
	// ERelayBadAnswer: the agent's client answered a relayed request with
	// something that is not an answer to it (another kind of result, a
	// sampling result without content or role, an unknown elicitation
	// action). The source gets the refusal, never the garbage.
	ERelayBadAnswer = "relay_bad_answer"
)

// checkRelay refuses a relayed request that no client could answer. The
// SDK already refused what does not decode; this is what decodes but makes
// no sense. Route calls it, so that the refusal is recorded and nobody is
// asked to approve a request that cannot be sent.
func checkRelay(r *core.Request) error {
	bad := func(format string, args ...any) error {
		return (&core.Error{Code: ERelayMalformed, Message: fmt.Sprintf("%s sent a malformed %s: ", r.Server, r.Kind) + fmt.Sprintf(format, args...)}).
			WithHint("the server is at fault; nothing was asked of the agent's client")
	}
	switch r.Kind {
	case core.KindSampling:
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(r.Args, &p); err != nil {
			return bad("%v", err)
		}
		if len(p.Messages) == 0 {
			return bad("it has no messages")
		}
		if p.MaxTokens <= 0 {
			return bad("maxTokens is %d; it must be at least 1", p.MaxTokens)
		}
		for i, m := range p.Messages {
			if m == nil || m.Content == nil || (m.Role != "user" && m.Role != "assistant") {
				return bad("message %d needs a role (user or assistant) and content", i)
			}
		}
	case core.KindElicitation:
		var p mcp.ElicitParams
		if err := json.Unmarshal(r.Args, &p); err != nil {
			return bad("%v", err)
		}
		if p.Message == "" {
			return bad("it has no message for the user")
		}
		// The SDK refused unknown modes, form schemas that are not objects
		// and URL requests without a URL before Airlock saw the request.
		if p.Mode == "url" && p.ElicitationID == "" {
			return bad("a url elicitation needs an elicitationId")
		}
	}
	return nil
}

// dispatchRelay sends a relayed request to the agent's client, and checks
// that what comes back answers it.
func (c *Catalog) dispatchRelay(ctx context.Context, r *core.Request) (mcp.Result, error) {
	peer, ok := r.Peer.(Peer)
	if !ok {
		return nil, core.Errorf(core.EUnavailable, "the agent's client cannot be reached for %s", r.Kind)
	}
	badAnswer := func(format string, args ...any) error {
		return (&core.Error{Code: ERelayBadAnswer, Message: fmt.Sprintf("the agent's client answered %s with ", r.Kind) + fmt.Sprintf(format, args...)}).
			WithHint("the agent's MCP client is at fault; the server got this error instead of its answer")
	}
	switch r.Kind {
	case core.KindSampling:
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(r.Args, &p); err != nil {
			return nil, core.Errorf(core.EInvalid, "the sampling request is malformed: %v", err)
		}
		res, err := peer.CreateMessage(ctx, &p)
		if err != nil {
			return nil, relayError(err, badAnswer)
		}
		if res == nil || res.Content == nil || (res.Role != "user" && res.Role != "assistant") {
			return nil, badAnswer("a result without content or role")
		}
		return res, nil
	default:
		var p mcp.ElicitParams
		if err := json.Unmarshal(r.Args, &p); err != nil {
			return nil, core.Errorf(core.EInvalid, "the elicitation request is malformed: %v", err)
		}
		if p.ElicitationID != "" {
			// Before it is asked: the server may complete it at once.
			c.elicits.note(r.Server, p.ElicitationID, r.Peer)
		}
		res, err := peer.Elicit(ctx, &p)
		if err != nil {
			return nil, relayError(err, badAnswer)
		}
		if res == nil || (res.Action != "accept" && res.Action != "decline" && res.Action != "cancel") {
			action := ""
			if res != nil {
				action = res.Action
			}
			return nil, badAnswer("the action %q (want accept, decline or cancel)", action)
		}
		return res, nil
	}
}

// relayError says why a relayed request got no answer. The client's own
// refusal (a JSON-RPC error), Airlock's refusals and cancellations pass as
// they are; a client that went away is unavailable; anything else is an
// answer Airlock could not read.
func relayError(err error, badAnswer func(string, ...any) error) error {
	var ce *core.Error
	var wire *jsonrpc.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &wire), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, mcp.ErrConnectionClosed):
		return core.Errorf(core.EUnavailable, "the agent's client went away before it answered")
	}
	return badAnswer("something Airlock cannot read: %v", err)
}

// track records r as in flight at d until the returned function is called.
func (d *source) track(r *core.Request, cancel context.CancelCauseFunc) func() {
	d.mu.Lock()
	d.inflight[r] = cancel
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		delete(d.inflight, r)
		d.ended[logWhomOf(r)] = time.Now()
		if len(d.ended) > 64 {
			d.pruneEndedLocked()
		}
		d.mu.Unlock()
	}
}

// subscriptions counts the agent sessions subscribed to each resource of
// each server. They belong to the catalog, not to a source: a source that is
// restarted, reconfigured or removed and added again is a new source, and
// the sessions that subscribed before still want the updates.
type subscriptions struct {
	mu sync.Mutex
	n  map[[2]string]int // server, URI → sessions subscribed
}

// add counts one more session subscribed to uri at server and reports
// whether it is the first.
func (s *subscriptions) add(server, uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n = map[[2]string]int{}
	}
	s.n[[2]string{server, uri}]++
	return s.n[[2]string{server, uri}] == 1
}

// remove counts one session less and reports whether it was the last; ok is
// false when none was subscribed.
func (s *subscriptions) remove(server, uri string) (last, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [2]string{server, uri}
	if s.n[k] == 0 {
		return false, false
	}
	s.n[k]--
	if s.n[k] == 0 {
		delete(s.n, k)
		return true, true
	}
	return false, true
}

func (s *subscriptions) of(server string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var uris []string
	for k := range s.n {
		if k[0] == server {
			uris = append(uris, k[1])
		}
	}
	return uris
}

// Subscribe subscribes to updates of resource uri at server on behalf of
// one agent session; the source is subscribed once, whoever asks.
func (c *Catalog) Subscribe(ctx context.Context, server, uri string) error {
	d := c.get(server)
	if d == nil {
		return unavailable(server)
	}
	first := c.subs.add(server, uri)
	if sess := d.session(); first && sess != nil {
		if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			c.subs.remove(server, uri)
			return c.callError(ctx, &core.Request{Server: server, Name: uri}, err)
		}
	}
	return nil
}

// Unsubscribe ends one session's subscription; the last one unsubscribes
// the source.
func (c *Catalog) Unsubscribe(ctx context.Context, server, uri string) error {
	last, ok := c.subs.remove(server, uri)
	if !ok || !last {
		return nil
	}
	d := c.get(server)
	if d == nil {
		return nil // removed: nothing is subscribed there any more
	}
	if sess := d.session(); sess != nil {
		if err := sess.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
			return c.callError(ctx, &core.Request{Server: server, Name: uri}, err)
		}
	}
	return nil
}

// resubscribe renews the subscriptions to the source's resources after it
// (re)connected, whichever source object held them before.
func (d *source) resubscribe(ctx context.Context, sess *mcp.ClientSession) {
	for _, u := range d.cat.subs.of(d.cfg.ID) {
		if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: u}); err != nil {
			d.cat.opts.Logger.Warn("renew a resource subscription", "server", d.cfg.ID, "uri", u, "err", d.secrets.redact(err.Error()))
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
	ctx, _, stop, _ := d.callDeadline(ctx)
	defer stop()
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

// serverRequests handles roots/list before the SDK does: it is refused, as
// Airlock offers no roots.
func serverRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "roots/list" {
			// Airlock offers no roots (see connect): one agent's folders
			// would become every agent's. A server that asks anyway is
			// told so, rather than given an empty list it may read as
			// "no folders".
			return nil, &jsonrpc.Error{Code: -32000,
				Message: "Airlock does not relay roots: this server is shared by every agent connected to Airlock, and roots belong to one; give the server its folders in its configuration"}
		}
		return next(ctx, method, req)
	}
}
