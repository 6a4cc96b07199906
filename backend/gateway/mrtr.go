package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// In the 2026-07-28 revision a server may not send requests to the client
// (SEP-2322): a tools/call, prompts/get or resources/read that needs the
// client's model (sampling) or its user (elicitation) ends with an
// input_required result listing those input requests and a requestState,
// and the client repeats the request with the answers and that state.
//
// Downstream servers speak 2025-11-25 to Airlock and send sampling and
// elicitation requests in the middle of a call, which Airlock relays
// through the pipeline (catalog/relay.go). For an agent of the new
// revision the call therefore runs apart from the HTTP request that
// started it: when a relayed request reaches the agent's client (a
// pendingCall is that client, as catalog.Peer), the HTTP request in hand
// ends with input_required; the call keeps running (its source still waits
// for the answer) until a retry brings the answers, and the retry's HTTP
// request then waits for the next input request or the result.

// InputResponseTimeout is how long a call waits for the agent to come back
// with the answers to its input requests (or for its result to be fetched)
// before it is cancelled.
const InputResponseTimeout = 10 * time.Minute

// EStateUnknown is the code of a retry whose requestState Airlock does not
// know: never issued, already used, or expired.
const EStateUnknown = "unknown_request_state"

// pendingCall is one call of a 2026-07-28 agent that runs apart from its
// HTTP requests. It is the agent's client for the sampling and elicitation
// requests its source makes (catalog.Peer).
type pendingCall struct {
	g      *Gateway
	owner  string // Connection.Key of the credential that started it
	method string
	target string                  // the tool, prompt or resource it calls
	caps   *mcp.ClientCapabilities // from the first request's _meta
	cancel context.CancelFunc      // through stop, not directly
	ctx    context.Context         // the call's: ends when it is done or cancelled
	// stopping is held while cancel runs: it has ended ctx once its
	// children (the call's own contexts) have ended too.
	stopping sync.Mutex
	done     chan struct{} // closed when res and err are set
	res      mcp.Result
	err      error
	wake     chan struct{} // an input request arrived
	seq      atomic.Int64

	mu    sync.Mutex
	asks  map[string]*ask // input requests not answered yet, by id
	round *round          // the HTTP request answering for the call now
}

// ask is one input request waiting for the agent's answer.
type ask struct {
	req    mcp.InputRequest
	answer chan mcp.InputResponse // buffered: one answer
}

// round is one HTTP request of a pendingCall: the first, or a retry.
type round struct {
	rs       *session
	ctx      context.Context
	progress any // its progress token, if any
}

var _ catalog.Peer = (*pendingCall)(nil)

type pendingKey struct{}

// pendingOf is the call whose handler runs with ctx, if it is one.
func pendingOf(ctx context.Context) *pendingCall {
	pc, _ := ctx.Value(pendingKey{}).(*pendingCall)
	return pc
}

// roundTrip handles tools/call, prompts/get and resources/read of a
// 2026-07-28 agent: a new call, or a retry that answers a call's input
// requests.
func (g *Gateway) roundTrip(ctx context.Context, rs *session, method string, req mcp.Request) (mcp.Result, error) {
	state, answers, progress := retryOf(req)
	rd := &round{rs: rs, ctx: ctx, progress: progress}
	var pc *pendingCall
	if state == "" {
		pc = g.startCall(ctx, rs, method, req, rd)
	} else {
		var res mcp.Result
		var err error
		if pc, res, err = g.resumeCall(rs, method, req, state); pc == nil {
			return res, err
		}
		// The retry's request answers for the call before the server has
		// the answers: what it logs or reports at once travels on it (found
		// in a review: the first round's race, on every later one).
		g.attach(pc, rd)
		pc.deliver(answers)
	}
	return g.await(pc, rd)
}

// targetOf is the tool, prompt or resource a request names.
func targetOf(req mcp.Request) string {
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParamsRaw:
		return p.Name
	case *mcp.GetPromptParams:
		return p.Name
	case *mcp.ReadResourceParams:
		return p.URI
	}
	return ""
}

// startCall runs a new call apart from its HTTP request.
func (g *Gateway) startCall(ctx context.Context, rs *session, method string, req mcp.Request, rd *round) *pendingCall {
	pc := &pendingCall{g: g, owner: rs.conn.Key, method: method, target: targetOf(req), done: make(chan struct{}),
		wake: make(chan struct{}, 1), asks: map[string]*ask{}, caps: &mcp.ClientCapabilities{}}
	if ip := rs.ss.Load().InitializeParams(); ip != nil && ip.Capabilities != nil {
		pc.caps = ip.Capabilities
	}
	// The call keeps the request's values but not its end: it outlives the
	// request when it needs input. await cancels it when the agent goes.
	pc.ctx, pc.cancel = context.WithCancel(context.WithValue(context.WithoutCancel(ctx), pendingKey{}, pc))
	jr := jobRequest(rs.ss.Load(), req)
	// The request answers for the call before the call starts: a log
	// message or progress its server sends at once travels on it (found by
	// a test under load: a message sent before await had the request in
	// place had nowhere to go).
	g.attach(pc, rd)
	go func() {
		defer pc.stop()
		var res mcp.Result
		var err error
		switch method {
		case "tools/call":
			res, err = g.callTool(pc.ctx, rs, jr)
		case "prompts/get":
			res, err = g.getPrompt(pc.ctx, rs, jr)
		default:
			res, err = g.readResource(pc.ctx, rs, jr)
		}
		pc.res, pc.err = res, err
		close(pc.done)
	}()
	return pc
}

// jobRequest is req as the call's handler sees it: without the retry
// fields, and without the HTTP request (whose end must not end the call).
func jobRequest(ss *mcp.ServerSession, req mcp.Request) mcp.Request {
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParamsRaw:
		cp := *p
		cp.InputResponses, cp.RequestState = nil, ""
		return &mcp.CallToolRequest{Session: ss, Params: &cp}
	case *mcp.GetPromptParams:
		cp := *p
		cp.InputResponses, cp.RequestState = nil, ""
		return &mcp.GetPromptRequest{Session: ss, Params: &cp}
	case *mcp.ReadResourceParams:
		cp := *p
		cp.InputResponses, cp.RequestState = nil, ""
		return &mcp.ReadResourceRequest{Session: ss, Params: &cp}
	}
	return req // no parameters: the handler refuses it
}

// retryOf returns what a request carries for a multi round-trip: the state
// it echoes, the answers, and its progress token.
func retryOf(req mcp.Request) (state string, answers mcp.InputResponseMap, progress any) {
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParamsRaw:
		return p.RequestState, p.InputResponses, p.GetProgressToken()
	case *mcp.GetPromptParams:
		return p.RequestState, p.InputResponses, p.GetProgressToken()
	case *mcp.ReadResourceParams:
		return p.RequestState, p.InputResponses, p.GetProgressToken()
	}
	return "", nil, nil
}

// resumeCall finds the call a retry answers. The retry is a request of its
// own, identified by its own credential: a state Airlock does not know, a
// call another credential started, or a caller that cannot be resolved any
// more (a suspended agent) is refused and audited; the last also cancels
// the call, since nobody may answer it now. A state is good for one retry.
func (g *Gateway) resumeCall(rs *session, method string, req mcp.Request, state string) (*pendingCall, mcp.Result, error) {
	r := &core.Request{Kind: method, Exposed: targetOf(req)}
	if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
		r.Args = p.Arguments
	}
	c, cerr := g.caller(rs, r.Args)
	r.Caller = c
	p := &g.proto
	p.mu.Lock()
	pc := p.pending[state]
	switch {
	case pc == nil || pc.method != method || pc.target != r.Exposed:
		p.mu.Unlock()
		return nil, nil, g.refuseState(r, (&core.Error{Code: EStateUnknown, Message: "Airlock knows no call waiting for this requestState: it was never given, was used already, or expired"}).
			WithHint("send the request again without inputResponses and requestState"))
	case pc.owner != rs.conn.Key:
		p.mu.Unlock()
		return nil, nil, g.refuseState(r, (&core.Error{Code: core.EForbidden, Message: "this requestState belongs to a call another credential started"}).
			WithHint("a call can only be continued with the credential that started it"))
	}
	delete(p.pending, state)
	p.mu.Unlock()
	if cerr != nil {
		pc.stop()
		res, err := g.refuse(r, cerr)
		return nil, res, err
	}
	return pc, nil, nil
}

// refuseState refuses a retry whose requestState continues no call of its
// caller: recorded as any refusal, and answered with a JSON-RPC error,
// invalid params (-32602), as SEP-2322 asks of a state that fails its
// check, with the reason code in its data. A tool error (isError) reads
// as the tool's own answer to the state (found by the MCP conformance
// suite 0.2.0-alpha.12: it took one as accepting a tampered state).
func (g *Gateway) refuseState(r *core.Request, e *core.Error) error {
	g.refuse(r, e) // for its record; a tool call's answer is the error below
	rpc := pipeline.RPCError(e)
	rpc.Code = jsonrpc.CodeInvalidParams
	return rpc
}

// attach makes the HTTP request rd the one that answers for pc now: the
// call's progress and its server's log messages travel on it.
func (g *Gateway) attach(pc *pendingCall, rd *round) {
	pc.mu.Lock()
	pc.round = rd
	pc.mu.Unlock()
	p := &g.proto
	p.mu.Lock()
	if p.rounds == nil {
		p.rounds = map[*round]struct{}{}
	}
	p.rounds[rd] = struct{}{}
	p.mu.Unlock()
}

// await waits, for the HTTP request rd, until the call has its result or
// needs input from the agent. A request that ends first (the agent hung up
// or cancelled) cancels the call.
func (g *Gateway) await(pc *pendingCall, rd *round) (mcp.Result, error) {
	p := &g.proto
	g.attach(pc, rd)
	defer func() {
		pc.mu.Lock()
		pc.round = nil
		pc.mu.Unlock()
		p.mu.Lock()
		delete(p.rounds, rd)
		p.mu.Unlock()
	}()
	for {
		select {
		case <-pc.done:
			return pc.res, pc.err
		default:
		}
		if asks := pc.open(); len(asks) > 0 {
			return inputRequired(pc.method, asks, g.park(pc))
		}
		select {
		case <-pc.done:
		case <-pc.wake:
		case <-rd.ctx.Done():
			pc.stop()
			return nil, rd.ctx.Err()
		}
	}
}

// park gives pc a new requestState for the agent's retry. A call nobody
// comes back for within InputResponseTimeout is cancelled.
func (g *Gateway) park(pc *pendingCall) string {
	state := rand.Text() + rand.Text()
	p := &g.proto
	p.mu.Lock()
	if p.pending == nil {
		p.pending = map[string]*pendingCall{}
	}
	p.pending[state] = pc
	p.mu.Unlock()
	time.AfterFunc(InputResponseTimeout, func() {
		p.mu.Lock()
		waiting := p.pending[state] == pc
		delete(p.pending, state)
		p.mu.Unlock()
		if waiting {
			pc.stop()
		}
	})
	return state
}

// inputRequired is the input_required result of method.
func inputRequired(method string, asks mcp.InputRequestMap, state string) (mcp.Result, error) {
	// The SDK keeps a result's type unexported and sets it only on results
	// of its own handlers; decoding is the one way to set it from outside.
	const typ = `{"resultType":"input_required"}`
	switch method {
	case "tools/call":
		var r mcp.CallToolResult
		err := json.Unmarshal([]byte(typ), &r)
		r.Content, r.InputRequests, r.RequestState = []mcp.Content{}, asks, state
		return &r, err
	case "prompts/get":
		var r mcp.GetPromptResult
		err := json.Unmarshal([]byte(typ), &r)
		r.Messages, r.InputRequests, r.RequestState = []*mcp.PromptMessage{}, asks, state
		return &r, err
	default:
		var r mcp.ReadResourceResult
		err := json.Unmarshal([]byte(typ), &r)
		r.Contents, r.InputRequests, r.RequestState = []*mcp.ResourceContents{}, asks, state
		return &r, err
	}
}

// stop cancels the call.
func (pc *pendingCall) stop() {
	pc.stopping.Lock()
	defer pc.stopping.Unlock()
	pc.cancel()
}

// stopped waits, once pc.ctx has ended, until stop has ended the call's
// own contexts too: a context's Done is closed before its children are
// cancelled. Without it, the answer a server gave to a relayed request
// refused because the call was cancelled could reach the pipeline before
// the call's context said so, and be recorded as the call's result
// (found by a flaky test: 5 runs in 60 under -race).
func (pc *pendingCall) stopped() {
	pc.stopping.Lock()
	pc.stopping.Unlock() //nolint:staticcheck // an empty critical section: waits for stop
}

// open returns the input requests not answered yet.
func (pc *pendingCall) open() mcp.InputRequestMap {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if len(pc.asks) == 0 {
		return nil
	}
	out := make(mcp.InputRequestMap, len(pc.asks))
	for id, a := range pc.asks {
		out[id] = a.req
	}
	return out
}

// deliver hands the answers of a retry to the input requests they answer.
// An answer to an input request that is not open is ignored; an open one
// left unanswered is asked again.
func (pc *pendingCall) deliver(answers mcp.InputResponseMap) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	for id, resp := range answers {
		if a := pc.asks[id]; a != nil {
			a.answer <- resp
			delete(pc.asks, id)
		}
	}
}

// input asks the agent's client for req and waits for its answer.
func (pc *pendingCall) input(ctx context.Context, prefix string, req mcp.InputRequest) (mcp.InputResponse, error) {
	id := fmt.Sprintf("%s-%d", prefix, pc.seq.Add(1))
	a := &ask{req: req, answer: make(chan mcp.InputResponse, 1)}
	pc.mu.Lock()
	pc.asks[id] = a
	pc.mu.Unlock()
	select {
	case pc.wake <- struct{}{}:
	default:
	}
	defer func() {
		pc.mu.Lock()
		delete(pc.asks, id)
		pc.mu.Unlock()
	}()
	select {
	case resp := <-a.answer:
		return resp, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-pc.ctx.Done():
		pc.stopped()
		return nil, (&core.Error{Code: core.EUnavailable, Message: "the agent's request ended before its client answered"}).
			WithHint("the agent cancelled its request or did not come back within " + InputResponseTimeout.String())
	}
}

func unsupported(what, hint string) error {
	return (&core.Error{Code: "unsupported", Message: "the agent's MCP client does not support " + what}).WithHint(hint)
}

// CreateMessage asks the agent's client for a message from its model, as
// an input request of the agent's call.
func (pc *pendingCall) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if pc.caps.Sampling == nil {
		return nil, unsupported("sampling", "the server needs a client that can sample (e.g. Claude Desktop, VS Code)")
	}
	resp, err := pc.input(ctx, "sampling", p)
	if err != nil {
		return nil, err
	}
	switch r := resp.(type) {
	case *mcp.CreateMessageResult:
		return r, nil
	case *mcp.CreateMessageWithToolsResult:
		if len(r.Content) != 1 {
			return nil, badAnswer(core.KindSampling, "%d content blocks (want one)", len(r.Content))
		}
		return &mcp.CreateMessageResult{Meta: r.Meta, Content: r.Content[0], Model: r.Model, Role: r.Role, StopReason: r.StopReason}, nil
	}
	return nil, badAnswer(core.KindSampling, "%s", answerKind(resp))
}

// Elicit asks the agent's user, through its client, for input, as an input
// request of the agent's call.
func (pc *pendingCall) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if err := elicitSupported(pc.caps.Elicitation, p); err != nil {
		return nil, err
	}
	resp, err := pc.input(ctx, "elicitation", p)
	if err != nil {
		return nil, err
	}
	if r, ok := resp.(*mcp.ElicitResult); ok {
		return r, nil
	}
	return nil, badAnswer(core.KindElicitation, "%s", answerKind(resp))
}

func badAnswer(kind, format string, args ...any) error {
	return (&core.Error{Code: catalog.ERelayBadAnswer, Message: fmt.Sprintf("the agent's client answered %s with ", kind) + fmt.Sprintf(format, args...)}).
		WithHint("the agent's MCP client is at fault; the server got this error instead of its answer")
}

func answerKind(resp mcp.InputResponse) string {
	switch resp.(type) {
	case *mcp.ElicitResult:
		return "an elicitation result"
	case *mcp.CreateMessageResult, *mcp.CreateMessageWithToolsResult:
		return "a sampling result"
	case *mcp.ListRootsResult:
		return "a roots list"
	}
	return fmt.Sprintf("%T", resp)
}

// progress sends the call's progress to the agent on the HTTP request that
// is answering for it now; between requests there is nobody to tell.
func (pc *pendingCall) progress(progress, total float64, msg string) {
	pc.mu.Lock()
	rd := pc.round
	pc.mu.Unlock()
	if rd == nil || rd.progress == nil {
		return
	}
	ctx, cancel := context.WithTimeout(rd.ctx, time.Second)
	defer cancel()
	rd.rs.ss.Load().NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: rd.progress, Progress: progress, Total: total, Message: msg})
}
