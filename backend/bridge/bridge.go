// Package bridge relays MCP between stdio and a running Airlock's Streamable
// HTTP endpoint, for clients that only launch stdio servers (Claude Desktop,
// many CLIs). It relays JSON-RPC messages unchanged, so every MCP feature the
// gateway offers (progress, list_changed, cancellation) passes through.
package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/instance"
	"github.com/airlock-dev/airlock/backend/loopback"
	"github.com/airlock-dev/airlock/backend/tokenfile"
)

// Synopsis is the bridge's help text, before its flags.
const Synopsis = `Usage: airlock bridge [--token T] [--purpose task|chat] [--project NAME] [--url U] [--data-dir DIR]
       (or airlock-bridge, the same without the desktop libraries)

Relays an MCP client's stdio to a running Airlock over Streamable HTTP, for
clients that start only stdio servers. Configure it in the client as the
server's command; it connects with the token given (or the data
directory's shared agent token) and ends when the client closes stdin.
--purpose chat opens an agent's chat session rather than a task session,
and --project the session in one of the agent's projects: they are the
?purpose= and ?project= of the URL, which they replace in a --url that
has them. When Airlock restarts, it waits for it (two minutes at most) and
carries on with the same session.
`

// PurposeUsage and ProjectUsage are the help of the --purpose and --project
// flags, which both commands that run a bridge take.
const (
	PurposeUsage = "the session's purpose, `task|chat`: task (the default), or chat for an agent's chat session (?purpose= on the URL)"
	ProjectUsage = "the project `NAME` (or id) the session works in, one of the agent's (?project= on the URL)"
)

// DefaultPatience is how long a bridge waits for an Airlock that went away
// (a restart, an update) to answer again before it gives up and ends.
const DefaultPatience = 2 * time.Minute

// Bridge is one stdio ⇄ HTTP relay.
//
// Airlock keeps an agent's session across its restarts, so when it goes
// away the bridge keeps running with the session it has: it tries to reach
// Airlock again, with a growing pause, for Patience; requests the client
// sends meanwhile wait for it, and the event stream is opened again once
// it is back. A stdio client cannot be told to start over (Claude Desktop
// does not restart a server that ended), so ending the bridge is left for
// an Airlock that does not come back in time or no longer knows the
// session.
type Bridge struct {
	URL    string
	Token  string
	Client *http.Client
	// Patience is how long to wait for Airlock when it went away; zero is
	// DefaultPatience.
	Patience time.Duration

	out   *json.Encoder
	outMu sync.Mutex

	mu        sync.Mutex
	sessionID string
	version   string
	listening bool          // the client is initialized: its event stream is kept open
	streaming bool          // the event stream is open
	away      chan struct{} // non-nil while Airlock is away; closed when it answers again
	wg        sync.WaitGroup

	goneOnce sync.Once
	gone     chan struct{} // closed when the bridge gives Airlock up
	goneErr  *core.Error

	inputEnded chan struct{}      // closed when stdin ends
	clientGone context.CancelFunc // ends the requests in flight
}

// markGone ends the relay with err, the reason the client's requests from
// now on are answered with.
func (b *Bridge) markGone(err *core.Error) {
	b.goneOnce.Do(func() {
		b.goneErr = err
		close(b.gone)
	})
}

// gaveUp reports whether the bridge gave Airlock up (markGone).
func (b *Bridge) gaveUp() bool {
	select {
	case <-b.gone:
		return true
	default:
		return false
	}
}

// Check fails at once, with a message saying what to do, when no Airlock
// answers at URL or the token is refused.
func (b *Bridge) Check(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.URL, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"ping"}`))
	if err != nil {
		return core.Errorf(core.EInvalid, "bad Airlock URL %q: %v", b.URL, err)
	}
	b.headers(req)
	resp, err := b.client().Do(req)
	if err != nil {
		return (&core.Error{Code: core.EUnavailable, Message: fmt.Sprintf("no Airlock is running at %s (%v)", b.URL, err)}).
			WithHint("start Airlock (the desktop app, or 'airlock serve'), or pass --url")
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if e := b.refusal(resp.StatusCode, body); e != nil {
		return e
	}
	return nil
}

// refusal is the reason Airlock gave for refusing a request with status
// and body for good (a refused token, a forgotten session), or nil.
func (b *Bridge) refusal(status int, body []byte) *core.Error {
	switch status {
	case http.StatusUnauthorized:
		return core.Errorf(core.EUnauthorized, "Airlock at %s refused the token", b.URL).
			WithHint("`airlock token` prints the default agent's token; for another agent, `airlock agents token NAME --rotate` gives it a new one")
	case http.StatusNotFound:
		b.mu.Lock()
		sid := b.sessionID
		b.mu.Unlock()
		if sid != "" {
			return (&core.Error{Code: core.ENotFound, Message: fmt.Sprintf("Airlock at %s no longer knows this MCP session (it was ended, or that Airlock does not keep it): the bridge cannot carry it on and ends", b.URL)}).
				WithHint("restart the Airlock server in the MCP client (or the client), which opens a new session")
		}
	}
	// Refused at the door for another reason (a ?project= or ?purpose= in
	// the URL, a suspended agent): Airlock's error says which.
	var refusal core.Error
	if status >= 400 && json.Unmarshal(body, &refusal) == nil && refusal.Code != "" && refusal.Message != "" {
		return &refusal
	}
	return nil
}

func (b *Bridge) client() *http.Client {
	if b.Client != nil {
		return b.Client
	}
	return ownClient
}

// ownClient sends the token only to a loopback port this user's program
// listens on: after Airlock stopped (or crashed), another user of the
// machine could take its port (found by a code review). Checked on each
// new connection, before anything is written to it.
var ownClient = func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	dial := t.DialContext
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if err := loopback.CheckOwn(c.RemoteAddr().String()); err != nil {
			c.Close()
			return nil, core.Errorf(core.EForbidden, "%v", err).WithHint("is Airlock running? start it; a program of another user holds its port meanwhile")
		}
		return c, nil
	}
	return &http.Client{Transport: t}
}()

func (b *Bridge) headers(req *http.Request) {
	req.Header.Set("Authorization", "Bearer "+b.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	b.mu.Lock()
	if b.sessionID != "" {
		req.Header.Set("Mcp-Session-Id", b.sessionID)
	}
	if b.version != "" {
		req.Header.Set("Mcp-Protocol-Version", b.version)
	}
	b.mu.Unlock()
}

// Run relays until stdin ends or ctx is done.
func (b *Bridge) Run(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	if err := b.Check(ctx); err != nil {
		return err
	}
	// The requests in flight end when the client goes away: Airlock then
	// cancels them (a call waiting for approval leaves the queue) instead
	// of running them for nobody.
	ctx, b.clientGone = context.WithCancel(ctx)
	defer b.clientGone()
	if f, ok := stdout.(*os.File); ok {
		go watchPeer(ctx, f, b.clientGone)
	}
	b.out = json.NewEncoder(stdout)
	b.gone = make(chan struct{})
	b.inputEnded = make(chan struct{})
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
				lines <- append([]byte(nil), line...)
			}
		}
		readErr <- sc.Err()
		close(lines)
	}()
	first := true
	for {
		select {
		case <-b.gone:
			// The requests still in flight are answered with the reason
			// before the bridge ends.
			b.clientGone()
			b.wg.Wait()
			return b.goneErr
		case <-ctx.Done():
			b.closeSession()
			return nil
		case msg, ok := <-lines:
			if !ok {
				// The answers in flight still go out (a client may close
				// stdin and read them), but none waits for an Airlock
				// that is away.
				close(b.inputEnded)
				b.wg.Wait()
				b.closeSession()
				if err := <-readErr; err != nil && !errors.Is(err, io.EOF) {
					return fmt.Errorf("read stdin: %w", err)
				}
				return nil
			}
			if first || isInitialized(msg) {
				// The handshake goes in order: initialize creates the session
				// every later request names, and initialized opens the stream
				// that carries the server's notifications.
				b.post(ctx, msg)
				first = false
				continue
			}
			b.wg.Add(1)
			go func() { defer b.wg.Done(); b.post(ctx, msg) }()
		}
	}
}

func (b *Bridge) write(msg json.RawMessage) {
	b.outMu.Lock()
	defer b.outMu.Unlock()
	if err := b.out.Encode(msg); err != nil {
		b.clientGone() // nobody reads what we write (EPIPE)
	}
}

type rpcHead struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Result *struct {
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"result,omitempty"`
}

// isRequest reports whether the message expects an answer.
func (h *rpcHead) isRequest() bool { return len(h.ID) > 0 && h.Method != "" }

// answers reports whether the message is the answer to request req.
func (h *rpcHead) answers(req *rpcHead) bool {
	return h.Method == "" && bytes.Equal(h.ID, req.ID)
}

// repeatable reports whether a request may be sent again when Airlock
// went away before answering it: it only reads, so running it twice
// changes nothing. A tool call may have had effects, and anything not
// known here is taken as one.
func repeatable(method string) bool {
	switch method {
	case "initialize", "ping", "tools/list", "prompts/list", "prompts/get",
		"resources/list", "resources/templates/list", "resources/read",
		"resources/subscribe", "resources/unsubscribe", "completion/complete",
		"logging/setLevel":
		return true
	}
	return false
}

// errMayHaveRun answers a request Airlock took but did not answer before
// it went away.
var errMayHaveRun = (&core.Error{Code: core.EShuttingDown,
	Message: "Airlock went away while the request ran: it may have run, and its answer was lost"}).
	WithHint("check what it did before you retry it; the bridge carries on once Airlock is back")

// post sends one message and relays whatever comes back. When Airlock is
// away the message waits for it; one Airlock may have taken is sent again
// only when that is harmless (repeatable). A request is answered exactly
// once, if need be with the reason it was not.
func (b *Bridge) post(ctx context.Context, msg []byte) {
	var head rpcHead
	json.Unmarshal(msg, &head)
	for {
		if e := b.await(ctx); e != nil {
			b.answer(&head, e)
			return
		}
		err := b.send(ctx, msg, &head, b.relayAnswer(&head))
		var refused *core.Error
		switch {
		case err == nil:
			return
		case ctx.Err() != nil:
			if b.gaveUp() {
				b.answer(&head, b.goneErr)
			}
			return
		case errors.As(err, &refused):
			b.answer(&head, refused)
			b.markGone(refused)
			return
		}
		b.lost(ctx, err)
		var unsent *notSent
		if errors.As(err, &unsent) {
			continue // it never reached Airlock
		}
		if !head.isRequest() {
			return // a notification or an answer that may have arrived: nothing to answer
		}
		if !repeatable(head.Method) {
			b.answer(&head, errMayHaveRun)
			return
		}
	}
}

// relayAnswer relays what Airlock sends while answering request head (its
// answer, progress, requests to the client), learning the protocol
// version from an initialize result.
func (b *Bridge) relayAnswer(head *rpcHead) func([]byte) {
	return func(data []byte) {
		var h rpcHead
		if head.Method == "initialize" && json.Unmarshal(data, &h) == nil && h.Result != nil && h.Result.ProtocolVersion != "" {
			b.mu.Lock()
			b.version = h.Result.ProtocolVersion
			b.mu.Unlock()
		}
		b.write(data)
	}
}

// notSent is a failure to reach Airlock at all: the message was not sent.
type notSent struct{ err error }

func (e *notSent) Error() string { return e.err.Error() }
func (e *notSent) Unwrap() error { return e.err }

// send posts msg and relays (through relay) what comes back. It returns
// nil once the message was taken and, for a request, answered; a
// *core.Error when Airlock refused the session for good; a *notSent when
// Airlock could not be reached; another error when the message may have
// reached Airlock but its answer did not come back.
func (b *Bridge) send(ctx context.Context, msg []byte, head *rpcHead, relay func([]byte)) error {
	fail := func(format string, args ...any) {
		if !head.isRequest() {
			return
		}
		e, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": head.ID,
			"error": map[string]any{"code": -32000, "message": "airlock bridge: " + fmt.Sprintf(format, args...)}})
		b.write(e)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.URL, bytes.NewReader(msg))
	if err != nil {
		fail("%v", err)
		return nil
	}
	b.headers(req)
	resp, err := b.client().Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return &notSent{err}
		}
		return err
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		b.mu.Lock()
		b.sessionID = sid
		b.mu.Unlock()
	}
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusUnauthorized {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if e := b.refusal(resp.StatusCode, body); e != nil && (e.Code == core.ENotFound || e.Code == core.EUnauthorized) {
			return e
		}
		fail("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
		return nil
	}
	if head.Method == "notifications/initialized" && resp.StatusCode < 300 {
		b.mu.Lock()
		b.listening = true
		b.mu.Unlock()
		b.openStream(ctx)
	}
	if resp.StatusCode == http.StatusAccepted {
		return nil
	}
	if resp.StatusCode >= 300 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		fail("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
		return nil
	}
	answered := !head.isRequest()
	watch := func(data []byte) {
		var h rpcHead
		if !answered && json.Unmarshal(data, &h) == nil && h.answers(head) {
			answered = true
		}
		relay(data)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		err = readSSE(resp.Body, watch)
	} else {
		var body []byte
		body, err = io.ReadAll(resp.Body)
		if err == nil && len(bytes.TrimSpace(body)) > 0 {
			watch(body)
		}
	}
	if answered {
		return nil
	}
	if err == nil {
		err = io.ErrUnexpectedEOF // the stream ended without the answer
	}
	return err
}

// answer answers request head with e, in the form the gateway gives its
// own refusals: a tool call gets a tool error, which the model reads, any
// other request a JSON-RPC error whose data is e.
func (b *Bridge) answer(head *rpcHead, e *core.Error) {
	if !head.isRequest() {
		return
	}
	text := fmt.Sprintf("Airlock bridge: %s [%s]", e.Message, e.Code)
	var msg map[string]any
	if head.Method == "tools/call" {
		if e.Hint != "" {
			text += "\nHint: " + e.Hint
		}
		msg = map[string]any{"jsonrpc": "2.0", "id": head.ID, "result": map[string]any{
			"isError": true,
			"content": []any{map[string]any{"type": "text", "text": text}},
			"_meta":   map[string]any{"airlock/error": e},
		}}
	} else {
		if e.Hint != "" {
			text += " Hint: " + e.Hint
		}
		msg = map[string]any{"jsonrpc": "2.0", "id": head.ID,
			"error": map[string]any{"code": codeRefused, "message": text, "data": e}}
	}
	out, _ := json.Marshal(msg)
	b.write(out)
}

// codeRefused is the JSON-RPC error code of a refused request, as the
// gateway's (pipeline.CodeRefused, not imported to keep the bridge small).
const codeRefused = -32010

// await returns at once while Airlock is reachable; while it is away, once
// it is back, or the reason to give up waiting.
func (b *Bridge) await(ctx context.Context) *core.Error {
	if b.gaveUp() {
		return b.goneErr
	}
	b.mu.Lock()
	back := b.away
	b.mu.Unlock()
	if back == nil {
		return nil
	}
	select {
	case <-back:
		return nil
	case <-b.gone:
		return b.goneErr
	case <-b.inputEnded:
		return core.Errorf(core.EUnavailable, "Airlock at %s is away and the client closed the bridge's input", b.URL)
	case <-ctx.Done():
		return core.Errorf(core.EUnavailable, "the bridge is ending")
	}
}

// lost notes that Airlock did not answer (err) and, unless the bridge is
// already trying to reach it again, starts to.
func (b *Bridge) lost(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.away != nil {
		return
	}
	b.away = make(chan struct{})
	// Kept-alive connections to the Airlock that went away are dead: a
	// request sent on one fails after it was written, and a tool call
	// then cannot be told from one that ran.
	b.client().CloseIdleConnections()
	go b.reconnect(ctx, b.away, err)
}

// reconnect tries to reach Airlock again, with the same session, pausing
// longer after each failure, until it answers (then the requests waiting
// go on and the event stream opens again) or Patience has passed, or
// Airlock refuses the session (then the bridge gives up).
func (b *Bridge) reconnect(ctx context.Context, back chan struct{}, cause error) {
	patience := b.Patience
	if patience <= 0 {
		patience = DefaultPatience
	}
	deadline := time.Now().Add(patience)
	pause := 100 * time.Millisecond
	for {
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		err := b.probe(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		var refused *core.Error
		if errors.As(err, &refused) {
			b.markGone(refused)
			return
		}
		cause = err
		if time.Now().After(deadline) {
			b.markGone((&core.Error{Code: core.EUnavailable,
				Message: fmt.Sprintf("Airlock at %s went away (%v) and did not come back within %s", b.URL, cause, patience)}).
				WithHint("start it again, then restart the Airlock server in the MCP client (or the client): the bridge has ended"))
			return
		}
		pause = min(2*pause, 5*time.Second)
	}
	b.mu.Lock()
	b.away = nil
	b.mu.Unlock()
	close(back)
	b.openStream(ctx)
}

// probeID is the id of the bridge's own pings, which the client never sees.
const probeID = `"airlock-bridge-probe"`

// probe pings Airlock on the session: nil when it answers, a *core.Error
// when it refuses the session for good. What Airlock sends on the ping's
// stream besides its answer (it tells a session carried on after a
// restart that its lists may have changed) goes to the client.
func (b *Bridge) probe(ctx context.Context) error {
	b.mu.Lock()
	sid := b.sessionID
	b.mu.Unlock()
	if sid == "" {
		err := b.Check(ctx)
		if core.ErrorCode(err) == core.EUnavailable {
			return errors.New(core.ErrorMessage(err))
		}
		return err
	}
	head := &rpcHead{ID: json.RawMessage(probeID), Method: "ping"}
	return b.send(ctx, []byte(`{"jsonrpc":"2.0","id":`+probeID+`,"method":"ping"}`), head, func(data []byte) {
		var h rpcHead
		if json.Unmarshal(data, &h) == nil && h.answers(head) {
			return
		}
		b.write(data)
	})
}

// openStream opens the event stream (GET) on which Airlock sends the
// client what answers none of its requests (list_changed, resource
// updates), once the client is initialized and again after Airlock came
// back. When the stream breaks, the bridge tries to reach Airlock again.
func (b *Bridge) openStream(ctx context.Context) {
	b.mu.Lock()
	if !b.listening || b.streaming || b.sessionID == "" || b.away != nil {
		b.mu.Unlock()
		return
	}
	b.streaming = true
	b.mu.Unlock()
	ended := func(err error) {
		b.mu.Lock()
		b.streaming = false
		b.mu.Unlock()
		if err != nil {
			b.lost(ctx, err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.URL, nil)
	if err != nil {
		ended(nil)
		return
	}
	b.headers(req)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := b.client().Do(req)
	if err != nil {
		ended(err)
		return
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		ended(nil)
		if e := b.refusal(resp.StatusCode, body); e != nil && (e.Code == core.ENotFound || e.Code == core.EUnauthorized) {
			b.markGone(e)
		}
		return
	}
	go func() {
		defer resp.Body.Close()
		err := readSSE(resp.Body, func(d []byte) { b.write(d) })
		if err == nil {
			err = io.ErrUnexpectedEOF // Airlock ended it: it stops
		}
		ended(err)
	}()
}

func isInitialized(msg []byte) bool {
	var h rpcHead
	return json.Unmarshal(msg, &h) == nil && h.Method == "notifications/initialized"
}

func (b *Bridge) closeSession() {
	b.mu.Lock()
	sid := b.sessionID
	b.mu.Unlock()
	if sid == "" {
		return
	}
	req, err := http.NewRequest(http.MethodDelete, b.URL, nil)
	if err != nil {
		return
	}
	b.headers(req)
	if resp, err := b.client().Do(req); err == nil {
		resp.Body.Close()
	}
}

// readSSE calls fn with the data of every event in r, and returns why r
// ended early (nil at its end).
func readSSE(r io.Reader, fn func([]byte)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if data.Len() > 0 {
				fn(append([]byte(nil), data.Bytes()...))
				data.Reset()
			}
		case bytes.HasPrefix(line, []byte("data:")):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" ")))
		}
	}
	if err := sc.Err(); err != nil {
		return err // what was cut off is no whole message
	}
	if data.Len() > 0 {
		fn(data.Bytes())
	}
	return nil
}

// Options are what `airlock bridge` (and the small airlock-bridge binary)
// are given.
type Options struct {
	DataDir string // where a running Airlock publishes its address and the token file is
	URL     string // the MCP endpoint; empty: the running Airlock's, else http://$AIRLOCK_ADDR/mcp
	Token   string // the agent token; empty: the data directory's token file
	// DefaultAddr is the address used when no Airlock published one and no
	// URL was given.
	DefaultAddr string
	// Purpose ("task" or "chat") and Project (a project's name or id), when
	// set, are the session's ?purpose= and ?project= on the URL, given or
	// found: a stdio client's config can name them without knowing the URL.
	Purpose, Project string
}

// Main relays stdio to the Airlock o names, until stdin ends or ctx does.
func Main(ctx context.Context, o Options, stdin io.Reader, stdout io.Writer) error {
	switch o.Purpose {
	case "", core.PurposeTask, core.PurposeChat:
	default:
		// Said here, before anything else: Airlock would refuse it too, but
		// only once one is running.
		return core.Errorf(core.EInvalid, "--purpose is task or chat, not %q", o.Purpose).
			WithHint("task (the default) for a session that works on tasks; chat for an agent's chat session")
	}
	if o.URL == "" {
		// The Airlock running on this data directory says where it is;
		// otherwise the configured or default address.
		if u, ok := instance.RunningURL(o.DataDir); ok {
			o.URL = u
		} else {
			o.URL = "http://" + o.DefaultAddr + "/mcp"
		}
	}
	u, err := sessionURL(o.URL, o.Purpose, o.Project)
	if err != nil {
		return err
	}
	o.URL = u
	if o.Token == "" {
		tok, err := tokenfile.AgentToken(o.DataDir, false)
		if err != nil {
			return core.Errorf(core.EInvalid, "no --token given and none found in %s: %v", o.DataDir, err)
		}
		o.Token = tok
	}
	b := &Bridge{URL: o.URL, Token: o.Token}
	return b.Run(ctx, stdin, stdout)
}

// sessionURL is endpoint with ?purpose= and ?project= set to purpose and
// project, those that are not empty; the URL's other parameters stay.
func sessionURL(endpoint, purpose, project string) (string, error) {
	if purpose == "" && project == "" {
		return endpoint, nil
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", core.Errorf(core.EInvalid, "bad Airlock URL %q: %v", endpoint, err)
	}
	q := u.Query()
	if purpose != "" {
		q.Set("purpose", purpose)
	}
	if project != "" {
		q.Set("project", project)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}
