package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxRequestBytes is the largest JSON-RPC message an agent may send (16
// MiB): room for file_write's largest content (builtin.MaxWriteCapBytes)
// even where JSON escaping doubles it. Larger requests get 413 before any
// parsing.
const MaxRequestBytes = 16 << 20

// defaultLogLevel is the level from which a session whose client set none
// hears its servers' log messages.
const defaultLogLevel = "info"

// SessionIdleTimeout closes an agent session with no request for this long.
const SessionIdleTimeout = 8 * time.Hour

// DrainTimeout is how long Close lets the requests already running finish
// and answer their agents; what is still running then is answered with
// core.EShuttingDown. It bounds a stop, which holds the data directory
// until it ends.
const DrainTimeout = 10 * time.Second

// Connection is who opened an HTTP connection, as the Identifier sees it.
type Connection struct {
	// Key identifies the credential (a hash of the token; "" when none was
	// given). An MCP session belongs to the key that opened it: a request
	// on it with another key is refused.
	Key string
	// Ref is the identifier's own view of the credential, handed back to
	// Resolve.
	Ref any
	// Label names who the credential belongs to, for the audit log of a
	// refused connection ("" when nobody is known).
	Label string
}

// Identifier tells who is calling.
type Identifier interface {
	// Identify checks the credential of one HTTP request (its bearer token
	// and the connection's query parameters). A bad, expired or revoked
	// credential, or a suspended agent, is a *core.Error (gate 1).
	Identify(r *http.Request) (Connection, error)
	// Resolve returns the caller of one MCP request on session sid, made
	// over conn. sessionToken is the request's session_token argument, if
	// any. It runs for every request, because a session's identity and
	// purpose change (authenticate, logout, a suspended agent).
	Resolve(sid string, conn Connection, sessionToken string) (core.Caller, error)
	// Peek is Resolve for a look that is no request of the agent's (a
	// listing's baseline, whom a notification may reach): it changes
	// nothing, so that a binding that ended is told to the session's next
	// request.
	Peek(sid string, conn Connection) (core.Caller, error)
	// Ended tells that session sid is gone.
	Ended(sid string)
	// Binding is the agent session authenticate bound to session sid ("":
	// none), kept for a restart; Restore binds it again after one, as it
	// was, and says whether that agent session is still live: the first
	// Resolve refuses one that ended meanwhile.
	Binding(sid string) string
	Restore(sid, bound string) (live bool)
}

// Lister decides what a caller is shown in listings: the same answer the
// pipeline's gate gives when the target is called, so that a hidden target
// called by name is refused for the reason it was hidden.
type Lister interface {
	Check(c *core.Caller, t core.Target) error
}

// Runner takes a request through the pipeline.
type Runner interface {
	Run(ctx context.Context, r *core.Request) (mcp.Result, error)
}

// Options configure a Gateway.
type Options struct {
	Version string
	Logger  *slog.Logger
	// Audit records requests the gateway refuses before the pipeline (a
	// session used with another credential, a suspended agent).
	Audit pipeline.Auditor
	// Compact, when set, gives agents in compact mode (seed 003) the
	// meta-tools get_module_schema, call and batch instead of every
	// downstream tool.
	Compact Compactor
	// Precheck, when set, is the policy a batch's calls are checked
	// against before any runs, with the permissions: a call it denies
	// (the shell policy's deny list) refuses the whole batch (found by a
	// new-user test: the calls before a denied rm -rf ran).
	Precheck pipeline.Policy
	// Drain overrides DrainTimeout (tests shorten it).
	Drain time.Duration
	// Sessions keeps the agents' Streamable HTTP sessions across a restart
	// of Airlock (nil: a session ends with the process).
	Sessions SessionStore
}

// SessionStore keeps MCP sessions across restarts: a client that comes
// back with the id of a session of an earlier run carries on with it, as
// long as it presents the same credential. Claude Code, for one, does not
// open a new session when its old one is "not found", as the protocol has
// it do: its tools stop working until it restarts.
type SessionStore interface {
	// Save keeps session id, opened with credential (Connection.Key), in
	// state (the JSON of the SDK's mcp.ServerSessionState).
	Save(id, credential string, state []byte) error
	// Load returns what Save, Bind and Subscriptions kept of session id.
	Load(id string) (k core.KeptSession, ok bool, err error)
	// Bind keeps the agent session (authenticate's) bound to session id.
	Bind(id, bound string) error
	// Subscriptions keeps the resources session id is subscribed to, as
	// server and URI pairs.
	Subscriptions(id string, subs [][2]string) error
	// Delete forgets session id: it ended.
	Delete(id string) error
	// Seen marks sessions still open when Airlock stops.
	Seen(ids []string) error
}

// Gateway serves agents over Streamable HTTP and legacy SSE. Every session
// gets its own MCP server that registers no tools: a middleware answers
// listings from the catalog's snapshot, filtered for the caller of that
// very request, and hands every tools/call, prompts/get and resources/read
// to the pipeline. Nothing about a caller is fixed when a session opens.
type Gateway struct {
	cat    *catalog.Catalog
	pipe   Runner
	ids    Identifier
	lister Lister
	opts   Options
	log    *slog.Logger

	stub       *mcp.Server // answers the SDK's per-request lookups for existing sessions
	streamable *mcp.StreamableHTTPHandler
	sse        *mcp.SSEHandler
	views      viewCache

	mu       sync.Mutex
	sessions map[*mcp.Server]*session
	bySID    map[string]*session

	// posts are the HTTP requests in flight, so that a handler learns when
	// the client that sent its request hung up.
	posts   sync.Map // post id → context.Context
	postSeq atomic.Uint64

	proto protoState // agents of the sessionless revision (stateless.go)

	// busy counts the POSTs being answered and the requests in the
	// pipeline, so that Close lets them finish.
	busy inflight

	// closing is set when Close begins: new requests are refused.
	closing atomic.Bool
	// logQ holds the servers' log messages for deliverLogs.
	logQ chan logItem
	// stopped ends, with errShuttingDown as its cause, when Close's drain
	// time is over: sessionless requests still running take it on.
	stopped context.Context
	stop    context.CancelCauseFunc
}

// inflight counts work in progress and tells a waiter when none is left.
type inflight struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil when nobody waits
}

func (f *inflight) begin() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *inflight) end() {
	f.mu.Lock()
	f.n--
	if f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
	f.mu.Unlock()
}

// wait returns when nothing is in progress, or after timeout.
func (f *inflight) wait(timeout time.Duration) {
	f.mu.Lock()
	if f.n == 0 {
		f.mu.Unlock()
		return
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	idle := f.idle
	f.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}

// New returns a gateway serving what cat offers through pipe.
func New(cat *catalog.Catalog, pipe Runner, ids Identifier, lister Lister, opts Options) *Gateway {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Drain <= 0 {
		opts.Drain = DrainTimeout
	}
	g := &Gateway{cat: cat, pipe: pipe, ids: ids, lister: lister, opts: opts, log: opts.Logger,
		sessions: map[*mcp.Server]*session{}, bySID: map[string]*session{}}
	g.stopped, g.stop = context.WithCancelCause(context.Background())
	g.stub = mcp.NewServer(g.impl(), nil)
	g.streamable = mcp.NewStreamableHTTPHandler(g.serverFor, &mcp.StreamableHTTPOptions{
		MaxRequestBodyBytes: MaxRequestBytes,
		Logger:              opts.Logger,
		// A client that vanished without DELETE must not keep its session
		// for ever; agents idle longer than this start a new session, as
		// the protocol has them do.
		SessionTimeout: SessionIdleTimeout,
	})
	g.sse = mcp.NewSSEHandler(g.serverFor, &mcp.SSEOptions{MaxRequestBodyBytes: MaxRequestBytes})
	g.logQ = make(chan logItem, 1024)
	go g.deliverLogs()
	cat.OnLog(g.forwardLog)
	cat.OnResourceUpdated(g.forwardUpdated)
	cat.OnChange(func(ch catalog.Change) {
		if ch.ListsChanged {
			g.Sync()
		}
	})
	return g
}

func (g *Gateway) impl() *mcp.Implementation {
	return &mcp.Implementation{Name: catalog.AirlockServerName, Title: "Airlock", Version: g.opts.Version}
}

// StreamableHandler serves Streamable HTTP (mount at /mcp).
func (g *Gateway) StreamableHandler() http.Handler { return g.identify(g.streamable, false) }

// SSEHandler serves the legacy HTTP+SSE transport (mount at /sse).
func (g *Gateway) SSEHandler() http.Handler { return g.identify(g.sse, true) }

type ctxKey int

const serverKey ctxKey = iota

// postHeader carries the id of the HTTP request a JSON-RPC message came in
// on, from the HTTP layer to the handler (the SDK passes headers through).
// Whatever a client sends under this name is replaced.
const postHeader = "X-Airlock-Post"

// identify is the gateway's HTTP layer: it checks the credential of every
// request (gate 1: unknown, expired or revoked credentials and suspended
// agents are refused at once), refuses a request on a session that another
// credential opened, and builds the MCP server of a session being opened.
func (g *Gateway) identify(next http.Handler, sse bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pw := &plainErrors{ResponseWriter: w, sse: sse}
		defer pw.finish()
		w = pw
		conn, err := g.ids.Identify(r)
		sid := r.Header.Get("Mcp-Session-Id")
		if sse && r.Method == http.MethodPost {
			sid = r.URL.Query().Get("sessionid")
		}
		if err != nil && !g.refusedInside(r, conn, err, sid) {
			// Only a missing or unknown credential is 401 with a
			// challenge: OAuth-capable clients (Claude Code, Cursor) take
			// that as "sign in", which a bad ?purpose= or ?project= is not.
			status := http.StatusForbidden // a known credential that may not be used now
			switch core.ErrorCode(err) {
			case core.EUnauthorized:
				status = http.StatusUnauthorized
				w.Header().Set("WWW-Authenticate", `Bearer realm="airlock"`)
			case core.EInvalid:
				status = http.StatusBadRequest
			case core.ENotFound, projectNotFound:
				status = http.StatusNotFound
			}
			// A known credential that may not be used now, and a token
			// nobody knows (a guess, a revoked or rotated one): both are in
			// Activity, as security events.
			if conn.Label != "" || r.Header.Get("Authorization") != "" {
				g.refuseConnection(r, conn, err)
			}
			writeRefusal(w, r, status, asCoreError(err))
			return
		}
		stateless, verr := speaksStateless(r)
		if verr != nil {
			g.refuseVersion(w, r, conn, verr)
			return
		}
		var resume *keptSession
		if sid != "" {
			s := g.session(sid)
			foreign := s != nil && s.conn.Key != conn.Key
			if s == nil && !sse && !stateless {
				resume, foreign = g.kept(sid, conn)
			}
			if foreign {
				g.refuseForeign(r, conn, sid)
				hint := "open your own session: connect without Mcp-Session-Id"
				if conn.Key == "" {
					// No credential on a session opened with one: the token
					// was left off (found by a new-user test: the hint sent
					// the client to open a session of its own).
					hint = "send the token this session was opened with (Authorization: Bearer …), or connect without Mcp-Session-Id for a session of your own"
				}
				writeRefusal(w, r, http.StatusForbidden, (&core.Error{Code: core.EForbidden,
					Message: "this MCP session belongs to another credential"}).WithHint(hint))
				return
			}
		}
		if r.Method == http.MethodPost && (r.ContentLength > MaxRequestBytes || r.ContentLength < 0 && !readBody(r)) {
			// Refused before the SDK reads it, as a JSON-RPC error with a
			// reason (the SDK's own 413 is a line of plain text).
			msg := fmt.Sprintf("the request is %d bytes; Airlock takes requests up to %d bytes (16 MiB)", r.ContentLength, MaxRequestBytes)
			if r.ContentLength < 0 {
				msg = fmt.Sprintf("the request is larger than the %d bytes (16 MiB) Airlock takes", MaxRequestBytes)
			}
			writeRefusal(w, r, http.StatusRequestEntityTooLarge, (&core.Error{Code: ERequestTooLarge, Message: msg}).
				WithHint("send less at once (a file in parts, a shorter argument)"))
			return
		}
		// A sessionless client's subscriptions/listen stream stays open as
		// long as the client runs: it is no request a stop waits for
		// (found by an interop test: every stop took the whole drain
		// time while such a client was connected). The SDK checks the
		// header against the message.
		if r.Method == http.MethodPost && !(stateless && r.Header.Get("Mcp-Method") == "subscriptions/listen") {
			g.busy.begin()
			defer g.busy.end()
			// The session's own count too, until the answer is written: a
			// session whose credential went away ends after it (found by
			// CI under -race: ended between the handler and the write,
			// the answer was lost).
			if s := g.session(sid); sid != "" && s != nil && !sse {
				s.busy.begin()
				defer s.busy.end()
			}
		}
		if stateless && !sse {
			g.serveStateless(w, r, conn)
			return
		}
		if r.Method == http.MethodGet && !sse && !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			// A session's event stream is SSE: a GET that cannot take it is
			// refused, not left open without a word (found by an interop
			// test: it hung).
			writeRefusal(w, r, http.StatusNotAcceptable, (&core.Error{Code: core.EInvalid,
				Message: "GET on the MCP endpoint opens the session's event stream: it needs Accept: text/event-stream"}).
				WithHint("POST JSON-RPC messages; GET only with Accept: text/event-stream"))
			return
		}
		ctx := r.Context()
		opening := false
		if sse {
			// Every GET opens a new session (the SDK ignores a sessionid
			// on it): each must be made here, with its owner.
			opening = r.Method == http.MethodGet
		} else {
			opening = r.Method == http.MethodPost && sid == ""
			if opening && !opensSession(r) {
				// MCP's Streamable HTTP: a request other than initialize
				// without a session is a 400 (found by an interop test:
				// the SDK opened a session for it and answered that it
				// was not initialized).
				writeRefusal(w, r, http.StatusBadRequest, (&core.Error{Code: core.EInvalid,
					Message: "this request needs a session, and it carries no Mcp-Session-Id"}).
					WithHint("send initialize first (without Mcp-Session-Id), then the Mcp-Session-Id it answers with on every request"))
				return
			}
		}
		if resume != nil {
			g.resume(r, sid, conn, resume)
		}
		if r.Method == http.MethodDelete && sid != "" && !sse && g.opts.Sessions != nil {
			// Its client ends it: forgotten before the answer, so that a
			// request right after cannot carry it on (found by CI: the
			// record went only when the session's end was noticed).
			if err := g.opts.Sessions.Delete(sid); err != nil {
				g.log.Warn("forget an ended session", "err", err)
			}
		}
		if opening {
			s := g.newSession(conn)
			if sse {
				// A legacy SSE session is its event stream (the GET): when
				// the client goes away, its calls end with it. (The SDK
				// closes the session only once those calls have returned.)
				context.AfterFunc(r.Context(), s.end)
				// Its POSTs name it by the sessionid of the endpoint the
				// stream announces: learn it, so that a POST with another
				// credential is refused as for Streamable HTTP.
				w = &sseEndpoint{ResponseWriter: w, found: func(id string) { s.sseID.Store(id) }}
			}
			ctx = context.WithValue(ctx, serverKey, s.server)
		}
		// Only Streamable HTTP answers a request on the POST that carried
		// it; a legacy SSE POST ends at once, long before its handler.
		if r.Method == http.MethodPost && !sse {
			// Unique, not secret: whatever a client sends under the
			// header is replaced here or deleted.
			id := strconv.FormatUint(g.postSeq.Add(1), 36)
			r.Header.Set(postHeader, id)
			g.posts.Store(id, r.Context())
			defer g.posts.Delete(id)
		} else {
			r.Header.Del(postHeader)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// sseEndpoint passes a legacy SSE stream through and reports the session
// id in the endpoint event the SDK writes first
// ("data: /sse?sessionid=ID").
type sseEndpoint struct {
	http.ResponseWriter
	found func(id string)
	done  bool
}

func (e *sseEndpoint) Write(p []byte) (int, error) {
	if !e.done {
		if _, rest, ok := bytes.Cut(p, []byte("sessionid=")); ok {
			end := bytes.IndexAny(rest, "&\r\n")
			if end < 0 {
				end = len(rest)
			}
			e.done = true
			e.found(string(rest[:end]))
		}
	}
	return e.ResponseWriter.Write(p)
}

func (e *sseEndpoint) Flush() {
	if f, ok := e.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (e *sseEndpoint) Unwrap() http.ResponseWriter { return e.ResponseWriter }

// refusedInside reports whether a request whose credential may not be
// used now (err: a suspended agent's token) goes on to be refused inside,
// request by request, rather than at the door: on a session its agent
// opened before. There every call is refused by the pipeline's gate as a
// tool error with the reason code, listings are empty, and the session
// lives on, so that the agent works again as soon as it is resumed. An
// HTTP 403 made MCP clients give the session up for good. For the
// sessionless revision the same holds for a credential that was used
// before (its client would close on a 403 too). A new session, and a
// credential never seen, are still refused at the door.
func (g *Gateway) refusedInside(r *http.Request, conn Connection, err error, sid string) bool {
	switch core.ErrorCode(err) {
	case core.EUnauthorized, core.EInvalid:
		return false // not a known credential
	}
	if conn.Key == "" {
		return false
	}
	if sid == "" {
		// A new session for a project its agent is not in is refused
		// at the door; one opened before the agent left is refused
		// inside.
		return core.ErrorCode(err) != authz.EAgentNotAssigned && g.knownCredential(r)
	}
	s := g.session(sid)
	if s == nil {
		// A session of an earlier run, opened with this credential, is
		// carried on as its agent's session, refused inside (found by a
		// regression test: a suspended agent's session was refused at the
		// door after a restart, and its client gave it up for good).
		k, foreign := g.kept(sid, conn)
		return k != nil && !foreign
	}
	return s.conn.Key == conn.Key
}

// refuseConnection records a request refused at the door: a known
// credential that may not be used now (a suspended agent's), or a token
// nobody knows, so that Activity shows it.
func (g *Gateway) refuseConnection(r *http.Request, conn Connection, err error) {
	who := conn.Label
	if who == "" {
		who = core.Unauthenticated
	}
	rec := &core.AuditRecord{Time: time.Now().UTC(), Kind: "session", Agent: who, Session: r.Header.Get("Mcp-Session-Id"),
		Tool: r.Method + " " + r.URL.Path, Decision: core.DecisionDenied, Status: core.StatusError,
		ErrorCode: core.ErrorCode(err), Error: core.ErrorMessage(err), Reason: core.ErrorMessage(err)}
	g.record(rec)
}

// record writes the record of a request the gateway refused or answered
// itself, outside the pipeline, to the audit log.
func (g *Gateway) record(rec *core.AuditRecord) {
	if g.opts.Audit == nil {
		return
	}
	pipeline.ClipRecord(rec)
	if g.opts.Audit.Begin(rec) == nil {
		g.opts.Audit.Finish(rec)
	}
}

// refuseForeign records a request made on a session with another
// credential than the one that opened it.
func (g *Gateway) refuseForeign(r *http.Request, conn Connection, sid string) {
	// Who tried, when the credential is known: that is what the record is for.
	who := conn.Label
	if who == "" {
		who = core.Unauthenticated
	}
	rec := &core.AuditRecord{Time: time.Now().UTC(), Kind: "session", Agent: who, Session: sid,
		Tool: r.Method + " " + r.URL.Path, Decision: core.DecisionDenied, Status: core.StatusError,
		ErrorCode: core.EForbidden, Error: "a request on this session came with another credential than the one that opened it",
		Reason: "session belongs to another credential"}
	g.record(rec)
}

func (g *Gateway) serverFor(r *http.Request) *mcp.Server {
	if s, ok := r.Context().Value(serverKey).(*mcp.Server); ok {
		return s
	}
	return g.stub
}

// projectNotFound is authz's code for a ?project= nobody has (the gateway
// does not import authz).
const projectNotFound = "project_not_found"

// writeRefusal answers a request refused at the door with its HTTP status
// and Airlock's error (code, message, hint) as the JSON body. When the
// request was a POST of a JSON-RPC request, the body is also that
// request's JSON-RPC error response (the same reason code in its message
// and data), which MCP clients show: the Go SDK's client, given only the
// status, says "Forbidden" and nothing of why.
func writeRefusal(w http.ResponseWriter, r *http.Request, status int, e *core.Error) {
	body := map[string]any{"code": e.Code, "message": e.Message}
	if e.Hint != "" {
		body["hint"] = e.Hint
	}
	if id := requestID(r); id != nil {
		rpc := pipeline.RPCError(e)
		body["jsonrpc"] = "2.0"
		body["id"] = id
		body["error"] = map[string]any{"code": rpc.Code, "message": rpc.Message, "data": rpc.Data}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// requestID is the id of the JSON-RPC request a POST carries, or nil (not
// a POST, not one request, a notification). It reads the body.
func requestID(r *http.Request) json.RawMessage {
	if r.Method != http.MethodPost || r.Body == nil {
		return nil
	}
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	// A refused request is read no further than needed: a small one whole,
	// of a large one the start, where every client puts the id
	// ({"jsonrpc":"2.0","id":7,"method":…}).
	const whole = 64 << 10
	body, _ := io.ReadAll(io.LimitReader(r.Body, whole+1))
	if len(body) > whole {
		if m := leadingID.FindSubmatch(body[:4096]); m != nil {
			return json.RawMessage(m[1])
		}
		return nil
	}
	if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 || string(msg.ID) == "null" {
		return nil
	}
	return msg.ID
}

var leadingID = regexp.MustCompile(`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*("(?:[^"\\]|\\.){0,256}"|-?[0-9]{1,20})`)

// ERequestTooLarge: a request over MaxRequestBytes.
const ERequestTooLarge = "request_too_large"

// opensSession reports whether a POST without a session may open one: its
// message is initialize (or a ping, which MCP allows before it), or a batch
// with initialize in it, or something the SDK refuses as it should (a body
// that is not JSON). It reads the body and puts it back.
func opensSession(r *http.Request) bool {
	body, _ := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
	r.Body = io.NopCloser(bytes.NewReader(body))
	type message struct {
		Method string `json:"method"`
	}
	var one message
	if json.Unmarshal(body, &one) == nil {
		return one.Method == "initialize" || one.Method == "ping"
	}
	var batch []message
	if json.Unmarshal(body, &batch) == nil {
		for _, m := range batch {
			if m.Method == "initialize" {
				return true
			}
		}
		return false
	}
	return true
}

// readBody reads a POST's body that came without a length (chunked), up
// to MaxRequestBytes, and gives it to the SDK with its length. It reports
// false when the body is larger (found by an interop test: the SDK's
// refusal of it was plain text, without a reason code). A body cut short
// goes on as it is: the SDK refuses what does not parse.
func readBody(r *http.Request) bool {
	body, _ := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
	if len(body) > MaxRequestBytes {
		return false
	}
	r.Body, r.ContentLength = &readOnce{b: body}, int64(len(body))
	return true
}

// readOnce is a request body read from memory that lets go of it once read
// (the SDK keeps its own copy for as long as the call runs; found in a
// review: a chunked body was held twice).
type readOnce struct{ b []byte }

func (r *readOnce) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		r.b = nil
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	if len(r.b) == 0 {
		r.b = nil
	}
	return n, nil
}

func (r *readOnce) Close() error { r.b = nil; return nil }

// rpcErr is the JSON-RPC error of a refused protocol request.
func rpcErr(err error) error { return pipeline.RPCError(err) }

func asCoreError(err error) *core.Error {
	var e *core.Error
	if errors.As(err, &e) {
		return e
	}
	return &core.Error{Code: core.EUnauthorized, Message: err.Error()}
}

// session is one agent session: its MCP server, the connection that opened
// it, and what it was last told its lists are.
type session struct {
	server  *mcp.Server
	conn    Connection
	created time.Time
	ss      atomic.Pointer[mcp.ServerSession]

	// ctx ends when the session does (a legacy SSE client that went away,
	// a DELETE): its requests still running are cancelled with it. halt
	// ends it when Airlock stops and the drain time is over, with the
	// reason as its cause, which its requests take on.
	ctx  context.Context
	end  context.CancelFunc
	halt context.CancelCauseFunc
	// busy counts its requests being handled (requestContext), so that a
	// session ended by Airlock sends their answers first.
	busy inflight
	// sseID is a legacy SSE session's id, the sessionid of the endpoint
	// its client POSTs to (sseEndpoint).
	sseID atomic.Value

	// resumed is set on a session of an earlier run carried on (kept);
	// relisted once its client was told its lists may have changed.
	resumed  bool
	relisted atomic.Bool
	// keptBinding is the binding last kept for a restart (a string).
	keptBinding atomic.Value
	// keepMu serialises what is kept of the session for a restart (its
	// subscriptions, its binding): each save reads the state it writes
	// under it, so an older copy is never written last (found by a code
	// review: of 16 subscriptions made at once, 8 were kept).
	keepMu sync.Mutex

	mu      sync.Mutex // serialises announce
	listed  [3]uint64  // hashes of the tools, prompts and resources it was last shown
	servers map[string]bool
	subs    map[[2]string]bool // server, resource URI it subscribed to
}

func (s *session) id() string {
	if id, _ := s.sseID.Load().(string); id != "" {
		return id // a legacy SSE session: the SDK gives it no ID
	}
	if ss := s.ss.Load(); ss != nil {
		return ss.ID()
	}
	return ""
}

func (s *session) client() core.ClientInfo {
	ss := s.ss.Load()
	if ss == nil {
		return core.ClientInfo{}
	}
	p := ss.InitializeParams()
	if p == nil || p.ClientInfo == nil {
		return core.ClientInfo{}
	}
	return core.ClientInfo{Name: p.ClientInfo.Name, Version: p.ClientInfo.Version}
}

// newSession builds the MCP server for one new session opened over conn.
func (g *Gateway) newSession(conn Connection) *session {
	s := &session{conn: conn, created: time.Now(), subs: map[[2]string]bool{}}
	s.ctx, s.halt = context.WithCancelCause(context.Background())
	s.end = func() { s.halt(nil) }
	opts := g.serverOptions(s, g.complete(s),
		func(ctx context.Context, uri string, on bool) error { return g.subscribe(s, on)(ctx, uri) })
	// A client that never sends logging/setLevel (many never do) hears
	// its servers' lines from info up (SDK patch; upstream sent it none).
	// Connected directly it hears what the server sends it, and most
	// servers (the TypeScript and Python SDKs') send such a client every
	// line. Debug is left out: Airlock asks every server for debug lines,
	// so a server that sends nothing unasked (the Go SDK's) would flood a
	// client that asked for nothing. Its own level, once set, decides,
	// per session.
	opts.DefaultLogLevel = defaultLogLevel
	s.server = mcp.NewServer(g.impl(), opts)
	srv := s.server
	srv.AddReceivingMiddleware(g.middleware(s))
	g.mu.Lock()
	g.dropUnopenedLocked()
	g.sessions[srv] = s
	g.mu.Unlock()
	return s
}

// dropUnopenedLocked forgets sessions that never initialized. A session
// gets a minute: the SDK attaches it after newSession returns.
func (g *Gateway) dropUnopenedLocked() {
	for srv, s := range g.sessions {
		if s.ss.Load() == nil && time.Since(s.created) > time.Minute {
			delete(g.sessions, srv)
			s.end()
		}
	}
}

// opened registers a session once the SDK made it, and forgets it when it
// ends, so that a closed session frees its memory at once.
func (g *Gateway) opened(s *session, ss *mcp.ServerSession) {
	if !s.ss.CompareAndSwap(nil, ss) {
		return
	}
	sid := s.id()
	g.mu.Lock()
	g.bySID[sid] = s
	g.mu.Unlock()
	go func() {
		ss.Wait()
		s.end()
		g.mu.Lock()
		delete(g.sessions, s.server)
		delete(g.bySID, sid)
		g.mu.Unlock()
		if g.opts.Sessions != nil && s.keepable() && !g.closing.Load() {
			// It ended (DELETE, idle, its credential gone); one open when
			// Airlock stops is kept for the next run.
			if err := g.opts.Sessions.Delete(sid); err != nil {
				g.log.Warn("forget an ended session", "err", err)
			}
		}
		g.releaseSubscriptions(s)
		g.cat.ClientEnded(ss)
		g.ids.Ended(sid)
	}()
}

// keepable reports whether s can be kept across a restart: a Streamable
// HTTP session (a legacy SSE one is its event stream, which a restart
// ends).
func (s *session) keepable() bool {
	id, _ := s.sseID.Load().(string)
	ss := s.ss.Load()
	return id == "" && ss != nil && ss.ID() != ""
}

// keep saves what the next run needs to carry s on, once it is initialized
// and when its state changes (the log level).
func (g *Gateway) keep(s *session) {
	if g.opts.Sessions == nil || !s.keepable() {
		return
	}
	ss := s.ss.Load()
	st := ss.State()
	if st.InitializeParams == nil {
		return
	}
	b, err := json.Marshal(st)
	if err == nil {
		err = g.opts.Sessions.Save(ss.ID(), s.conn.Key, b)
	}
	if err != nil {
		// The session works on; only a restart of Airlock would end it.
		g.log.Warn("keep a session for after a restart", "err", err)
	}
}

// resume carries on session sid of an earlier run, kept with state, as a
// session of this gateway: registered at once, whatever its first request
// is (found by a regression test: a session whose client reconnected its
// event stream first was dropped as never opened a minute later, and every
// call on it was cancelled). The request then finds it as any other.
func (g *Gateway) resume(r *http.Request, sid string, conn Connection, k *keptSession) {
	s := g.newSession(conn)
	s.resumed = true
	// The agent it authenticated as, before any request can find it
	// (found by a code review: a request arriving with the first ran as
	// the connection's own agent).
	live := k.Bound == "" || g.ids.Restore(sid, k.Bound)
	s.keptBinding.Store(k.Bound)
	ss, made, err := g.streamable.Resume(r, sid, s.server, k.state)
	if err != nil || !made {
		if err != nil {
			g.log.Warn("carry on a session of an earlier run", "err", err)
		}
		// Another request resumed it at the same time, or it failed (the
		// request then finds no session, as before).
		g.mu.Lock()
		delete(g.sessions, s.server)
		g.mu.Unlock()
		s.end()
		return
	}
	g.opened(s, ss)
	// Seen now: a session kept through crashes alone is kept a week from
	// its last use, not from its first.
	if err := g.opts.Sessions.Seen([]string{sid}); err != nil {
		g.log.Warn("mark a resumed session seen", "err", err)
	}
	if live {
		go g.resubscribe(s, k.Subs)
		g.announce(s, false) // what it may see now, for list_changed later
		return
	}
	// Else the agent session authenticate bound to it ended while Airlock
	// was down: resolving it here would drop the binding without a word,
	// where its first request must say so (found by a regression test).
	// Its subscriptions, made as that agent, go, here and in the store (a
	// code review found them kept for the run after).
	if len(k.Subs) > 0 {
		if err := g.opts.Sessions.Subscriptions(sid, nil); err != nil {
			g.log.Warn("forget a resumed session's subscriptions", "err", err)
		}
	}
}

// keptSession is what an earlier run kept of a session: its protocol
// state, decoded, and the rest as the store has it.
type keptSession struct {
	core.KeptSession
	state *mcp.ServerSessionState
}

// kept returns what an earlier run kept of session sid, when it was opened
// with conn's credential; foreign when another credential opened it.
func (g *Gateway) kept(sid string, conn Connection) (k *keptSession, foreign bool) {
	if g.opts.Sessions == nil {
		return nil, false
	}
	ks, ok, err := g.opts.Sessions.Load(sid)
	if err != nil {
		g.log.Warn("look up a session of an earlier run", "err", err)
		return nil, false
	}
	if !ok {
		return nil, false
	}
	if ks.Credential != conn.Key {
		return nil, true
	}
	st := new(mcp.ServerSessionState)
	if json.Unmarshal(ks.State, st) != nil || st.InitializeParams == nil {
		return nil, false
	}
	return &keptSession{KeptSession: ks, state: st}, false
}

// keepBinding keeps what authenticate or logout made of s's binding, for
// a restart.
func (g *Gateway) keepBinding(s *session) {
	if g.opts.Sessions == nil || !s.keepable() {
		return
	}
	sid := s.id()
	if kept, _ := s.keptBinding.Load().(string); kept == g.ids.Binding(sid) {
		return // the common case, without the lock
	}
	s.keepMu.Lock()
	defer s.keepMu.Unlock()
	b := g.ids.Binding(sid)
	if kept, _ := s.keptBinding.Load().(string); kept == b {
		return
	}
	if err := g.opts.Sessions.Bind(sid, b); err != nil {
		g.log.Warn("keep a session's binding for after a restart", "err", err)
		return
	}
	s.keptBinding.Store(b)
}

// session returns the session with MCP session id sid, if this gateway
// made it.
func (g *Gateway) session(sid string) *session {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.bySID[sid]; s != nil {
		return s
	}
	// Sessions become known by id at their first message; one used with
	// another credential before that is found here.
	for _, s := range g.sessions {
		if s.id() == sid {
			return s
		}
		for ss := range s.server.Sessions() {
			if ss.ID() == sid {
				return s
			}
		}
	}
	return nil
}

// Sessions returns the number of open sessions.
func (g *Gateway) Sessions() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.bySID)
}

// caller resolves the caller of one request on s. args are the request's
// arguments, where a session_token may be given (seed 000's style).
func (g *Gateway) caller(s *session, args json.RawMessage) (core.Caller, error) {
	sid := s.id()
	c, err := g.ids.Resolve(sid, s.conn, sessionTokenArg(args))
	c.Session = sid
	c.Client = s.client()
	return c, err
}

// peek is caller for a look that is no request of the agent's
// (Identifier.Peek).
func (g *Gateway) peek(s *session) (core.Caller, error) {
	sid := s.id()
	c, err := g.ids.Peek(sid, s.conn)
	c.Session = sid
	c.Client = s.client()
	return c, err
}

// sessionTokenArg returns the session_token argument of a tool call.
func sessionTokenArg(args json.RawMessage) string {
	if len(args) == 0 || !strings.Contains(string(args), `"session_token"`) {
		return ""
	}
	var a struct {
		SessionToken string `json:"session_token"`
	}
	if json.Unmarshal(args, &a) != nil {
		return ""
	}
	return a.SessionToken
}

// requestContext ties a handler's context to the HTTP request its message
// came in on, and to its session, so that a client that hangs up cancels
// its requests: a call waiting for approval then leaves the queue instead
// of running later. (A legacy SSE client's POSTs end at once; its session
// ends when its event stream does.) When Airlock stops and the drain time
// is over, the session's end carries the reason as its cause: the pipeline
// answers the agent with it, where an agent's own cancellation goes
// unanswered.
func (g *Gateway) requestContext(ctx context.Context, s *session, req mcp.Request) (context.Context, context.CancelFunc) {
	var post context.Context
	if extra := req.GetExtra(); extra != nil && extra.Header != nil {
		if p, ok := g.posts.Load(extra.Header.Get(postHeader)); ok {
			post = p.(context.Context)
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stops := make([]func() bool, 0, 3)
	s.busy.begin()
	if s.ctx == nil && post == nil {
		// A sessionless call: its own context ends it, and the end of a
		// stop's drain, with the reason (found by a new-user test: such a
		// call was recorded as cancelled by its agent).
		stops = append(stops, context.AfterFunc(g.stopped, func() { cancel(context.Cause(g.stopped)) }))
	}
	if s.ctx != nil { // a sessionless request's session is the request
		stops = append(stops, context.AfterFunc(s.ctx, func() { cancel(context.Cause(s.ctx)) }))
	}
	if post != nil {
		stops = append(stops, context.AfterFunc(post, func() { cancel(nil) }))
	}
	var once sync.Once
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel(nil)
		once.Do(s.busy.end)
	}
}

// answerGrace is how long Close waits, after the drain time, for the
// requests it ended to send their answers.
const answerGrace = 2 * time.Second

// errShuttingDown is the answer to a request still running when the drain
// time is over; errStopping refuses one that arrives while Airlock stops.
var (
	errShuttingDown = (&core.Error{Code: core.EShuttingDown,
		Message: "the request was still running when Airlock stopped: it was ended unfinished and may have had effects"}).
		WithHint("check what it did before you retry it, once Airlock runs again")
	errCredentialGone = (&core.Error{Code: core.EUnauthorized,
		Message: "the credential this session was opened with was rotated or deleted (or its agent deleted): the session ends, and this request with it"}).
		WithHint("connect again with the agent's current token")
	errStopping = (&core.Error{Code: core.EShuttingDown, Message: "Airlock is stopping and takes no new requests; this one did not run"}).
			WithHint("retry it once Airlock runs again")
)

// Close stops the gateway in bounded time: new requests are refused,
// requests already running get the drain time (Options.Drain) to finish
// and answer their agents, those still running then are answered with
// core.EShuttingDown, and every agent session ends, so that an HTTP
// shutdown waits for nothing.
func (g *Gateway) Close() {
	g.closing.Store(true)
	g.busy.wait(g.opts.Drain)
	g.mu.Lock()
	all := make([]*session, 0, len(g.sessions))
	for _, s := range g.sessions {
		all = append(all, s)
	}
	g.mu.Unlock()
	if g.opts.Sessions != nil {
		// Kept for the next run, which carries them on.
		var open []string
		for _, s := range all {
			if s.keepable() {
				open = append(open, s.id())
			}
		}
		if err := g.opts.Sessions.Seen(open); err != nil {
			g.log.Warn("mark the open sessions for the next run", "err", err)
		}
	}
	g.stop(errShuttingDown)
	for _, s := range all {
		if s.halt != nil {
			s.halt(errShuttingDown)
		}
	}
	// Their answers go out before the sessions, and with them the
	// streams the answers travel on, end.
	g.busy.wait(answerGrace)
	for _, s := range all {
		for ss := range s.server.Sessions() {
			ss.Close()
		}
	}
	g.closeStateless()
}
