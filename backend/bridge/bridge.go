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
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/instance"
	"github.com/airlock-dev/airlock/backend/tokenfile"
)

// Synopsis is the bridge's help text, before its flags.
const Synopsis = `Usage: airlock bridge [--token T] [--url U] [--data-dir DIR]
       (or airlock-bridge, the same without the desktop libraries)

Relays an MCP client's stdio to a running Airlock over Streamable HTTP, for
clients that start only stdio servers. Configure it in the client as the
server's command; it connects with the token given (or the data
directory's shared agent token) and ends when the client closes stdin.
`

// Bridge is one stdio ⇄ HTTP relay.
type Bridge struct {
	URL    string
	Token  string
	Client *http.Client

	out   *json.Encoder
	outMu sync.Mutex

	mu        sync.Mutex
	sessionID string
	version   string
	listening bool
	wg        sync.WaitGroup

	goneOnce sync.Once
	gone     chan struct{} // closed when Airlock went away
	goneErr  error

	clientGone context.CancelFunc // ends the requests in flight
}

// markGone ends the relay: the session lived in the Airlock that went away,
// so the client has to start over; a stdio client does that when its server
// process exits.
func (b *Bridge) markGone(err error) {
	b.goneOnce.Do(func() {
		b.goneErr = (&core.Error{Code: core.EUnavailable, Message: fmt.Sprintf("Airlock at %s went away: %v", b.URL, err)}).
			WithHint("start it again; the MCP client then restarts the bridge")
		close(b.gone)
	})
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
	if resp.StatusCode == http.StatusUnauthorized {
		return core.Errorf(core.EUnauthorized, "Airlock at %s refused the token", b.URL).
			WithHint("`airlock token` prints the default agent's token; for another agent, `airlock agents token NAME --rotate` gives it a new one")
	}
	// Refused at the door for another reason (a ?project= or ?purpose= in
	// the URL, a suspended agent): Airlock's error says which.
	var refusal core.Error
	if resp.StatusCode >= 400 && json.Unmarshal(body, &refusal) == nil && refusal.Code != "" && refusal.Message != "" {
		return &refusal
	}
	return nil
}

func (b *Bridge) client() *http.Client {
	if b.Client != nil {
		return b.Client
	}
	return http.DefaultClient
}

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
			return b.goneErr
		case <-ctx.Done():
			b.closeSession()
			return nil
		case msg, ok := <-lines:
			if !ok {
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

// post sends one message and relays whatever comes back. Transport failures
// become JSON-RPC errors for requests, so the client never hangs.
func (b *Bridge) post(ctx context.Context, msg []byte) {
	var head rpcHead
	json.Unmarshal(msg, &head)
	fail := func(format string, args ...any) {
		if len(head.ID) == 0 || head.Method == "" {
			return
		}
		e, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": head.ID,
			"error": map[string]any{"code": -32000, "message": "airlock bridge: " + fmt.Sprintf(format, args...)}})
		b.write(e)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.URL, bytes.NewReader(msg))
	if err != nil {
		fail("%v", err)
		return
	}
	b.headers(req)
	resp, err := b.client().Do(req)
	if err != nil {
		fail("Airlock is not reachable at %s: %v", b.URL, err)
		if ctx.Err() == nil {
			b.markGone(err)
		}
		return
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		b.mu.Lock()
		b.sessionID = sid
		b.mu.Unlock()
	}
	if head.Method == "notifications/initialized" && resp.StatusCode < 300 {
		b.listen(ctx)
	}
	if resp.StatusCode == http.StatusAccepted {
		return
	}
	if resp.StatusCode >= 300 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		fail("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
		return
	}
	relay := func(data []byte) {
		var h rpcHead
		if json.Unmarshal(data, &h) == nil && h.Result != nil && h.Result.ProtocolVersion != "" && head.Method == "initialize" {
			b.mu.Lock()
			b.version = h.Result.ProtocolVersion
			b.mu.Unlock()
		}
		b.write(data)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		readSSE(resp.Body, relay)
	} else {
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			fail("read reply: %v", err)
			return
		}
		if len(bytes.TrimSpace(body)) > 0 {
			relay(body)
		}
	}
}

// listen opens the standalone SSE stream on which the server sends
// notifications such as tools/list_changed.
func (b *Bridge) listen(ctx context.Context) {
	b.mu.Lock()
	if b.listening || b.sessionID == "" {
		b.mu.Unlock()
		return
	}
	b.listening = true
	b.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.URL, nil)
	if err != nil {
		return
	}
	b.headers(req)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := b.client().Do(req)
	if err != nil {
		return
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return
	}
	go func() {
		defer resp.Body.Close()
		readSSE(resp.Body, func(d []byte) { b.write(d) })
		if ctx.Err() == nil {
			b.markGone(io.ErrUnexpectedEOF)
		}
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

// readSSE calls fn with the data of every event in r.
func readSSE(r io.Reader, fn func([]byte)) {
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
	if data.Len() > 0 {
		fn(data.Bytes())
	}
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
}

// Main relays stdio to the Airlock o names, until stdin ends or ctx does.
func Main(ctx context.Context, o Options, stdin io.Reader, stdout io.Writer) error {
	if o.URL == "" {
		// The Airlock running on this data directory says where it is;
		// otherwise the configured or default address.
		if u, ok := instance.RunningURL(o.DataDir); ok {
			o.URL = u
		} else {
			o.URL = "http://" + o.DefaultAddr + "/mcp"
		}
	}
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
