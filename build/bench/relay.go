package main

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
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The relay role: the least a gateway between a Streamable HTTP client and
// a stdio server can do. It is this program again (roleEnv=relay), serving
// HTTP on one address and writing every JSON-RPC message to one child
// process's stdin as it came, with nothing else: no MCP SDK, no sessions
// worth the name, no checks, no audit. Request ids are renumbered so that
// concurrent sessions cannot collide, and each answer goes back as one SSE
// event with a Content-Length, as Airlock sends it. Its figures are the
// transport floor of the report: what any gateway of this shape pays for
// the extra process and the HTTP hop before it does any work.

// relayAddrEnv is the address the relay listens on.
const relayAddrEnv = "AIRLOCK_BENCH_RELAY_ADDR"

// runRelay serves until ctx ends; args is the stdio server's command line.
func runRelay(ctx context.Context, addr string, args []string) error {
	if len(args) == 0 {
		return errors.New("relay: no server command")
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	r := &relay{stdin: stdin, waiting: map[int64]chan []byte{}}
	go r.readAnswers(stdout)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type relay struct {
	wmu   sync.Mutex // one message at a time on stdin
	stdin io.Writer
	seq   atomic.Int64

	mu      sync.Mutex
	waiting map[int64]chan []byte // relay id → the waiting request's answer
}

// readAnswers hands each answer from the server to the request waiting for
// it; the server's own requests and notifications are dropped (the bench's
// clients advertise no capabilities and set no log level).
func (r *relay) readAnswers(stdout io.Reader) {
	br := bufio.NewReaderSize(stdout, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil || m.Method != "" {
			continue
		}
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			continue
		}
		r.mu.Lock()
		ch := r.waiting[id]
		delete(r.waiting, id)
		r.mu.Unlock()
		if ch != nil {
			ch <- line
		}
	}
}

func (r *relay) send(msg []byte) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	_, err := r.stdin.Write(append(msg, '\n'))
	return err
}

func (r *relay) serve(w http.ResponseWriter, req *http.Request) {
	switch req.Method {
	case http.MethodGet: // no standalone stream: clients accept 405
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	case http.MethodDelete:
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 4<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		http.Error(w, "not a JSON-RPC message", http.StatusBadRequest)
		return
	}
	clientID, isCall := m["id"]
	if !isCall || m["method"] == nil { // a notification (or a response)
		if err := r.send(bytes.TrimSpace(body)); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	id := r.seq.Add(1)
	m["id"] = json.RawMessage(strconv.FormatInt(id, 10))
	msg, _ := json.Marshal(m)
	ch := make(chan []byte, 1)
	r.mu.Lock()
	r.waiting[id] = ch
	r.mu.Unlock()
	if err := r.send(msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	var line []byte
	select {
	case line = <-ch:
	case <-req.Context().Done():
		r.mu.Lock()
		delete(r.waiting, id)
		r.mu.Unlock()
		return
	}
	var answer map[string]json.RawMessage
	if err := json.Unmarshal(line, &answer); err != nil {
		http.Error(w, "bad answer from the server", http.StatusBadGateway)
		return
	}
	answer["id"] = clientID
	data, _ := json.Marshal(answer)
	event := append(append([]byte("event: message\ndata: "), data...), '\n', '\n')
	if bytes.Equal(m["method"], []byte(`"initialize"`)) {
		w.Header().Set("Mcp-Session-Id", fmt.Sprintf("relay-%d", id))
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(event)))
	w.Write(event)
}
