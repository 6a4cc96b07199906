package catalog

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// InProcessTransports returns a connected pair of transports for an
// in-process server (the built-in tools, the team tools), as the catalogue
// connects to one: each hands the other its JSON-RPC messages as values. The SDK's mcp.NewInMemoryTransports joins
// the two sides with a net.Pipe, so every message was encoded as JSON on
// one side and scanned and decoded again on the other, in small
// synchronous chunks; for a 1 MiB file_read that was a third of the call.
// The results themselves are still JSON (the SDK marshals a handler's
// result before it writes it), so the client decodes them as from any
// other server. The envelope is not decoded in between, so the SDK's
// checks on an incoming message as a whole (its nesting depth) do not
// apply to it: both sides are Airlock's own.
func InProcessTransports() (client, server mcp.Transport) {
	// A few messages may wait in each direction, as upstream's reader
	// goroutine and decoder held some: a side that writes while the other
	// is writing too (jsonrpc2 answers a duplicate id or "server closing"
	// from its read loop) does not wait for it.
	p := &memPipe{
		toServer: make(chan jsonrpc.Message, memPipeBuffer),
		toClient: make(chan jsonrpc.Message, memPipeBuffer),
		closed:   make(chan struct{}),
	}
	return &memTransport{&memConn{p: p, in: p.toClient, out: p.toServer}},
		&memTransport{&memConn{p: p, in: p.toServer, out: p.toClient}}
}

// memPipeBuffer is how many messages may wait in each direction.
const memPipeBuffer = 8

// memPipe is what the two sides share. Closing either side closes both,
// as with a net.Pipe: the other side's Read returns io.EOF.
type memPipe struct {
	toServer, toClient chan jsonrpc.Message
	closed             chan struct{}
	once               sync.Once
}

type memTransport struct{ conn *memConn }

func (t *memTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

// memConn is one side of a memPipe.
type memConn struct {
	p       *memPipe
	in, out chan jsonrpc.Message
}

// errMemClosed is what Write returns once either side has closed.
var errMemClosed = errors.New("in-process connection closed")

func (c *memConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.p.closed:
		return nil, io.EOF
	default:
	}
	select {
	case m := <-c.in:
		return m, nil
	case <-c.p.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write hands the other side what it would have decoded from the wire: a
// copy of the envelope without the transport's Extra, and an error as the
// JSON-RPC error it is sent as (the params or result bytes are shared:
// neither side changes them once written).
func (c *memConn) Write(ctx context.Context, m jsonrpc.Message) error {
	switch v := m.(type) {
	case *jsonrpc.Request:
		cp := *v
		cp.Extra = nil
		m = &cp
	case *jsonrpc.Response:
		cp := *v
		cp.Extra = nil
		cp.Error = wireError(v.Error)
		m = &cp
	default:
		return errors.New("in-process connection: unknown message type")
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.p.closed:
		return errMemClosed
	default:
	}
	select {
	case c.out <- m:
		return nil
	case <-c.p.closed:
		return errMemClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *memConn) Close() error {
	c.p.once.Do(func() { close(c.p.closed) })
	return nil
}

func (c *memConn) SessionID() string { return "" }

// wireError is err as the receiving side decodes it: a *jsonrpc.Error with
// the message of err and the code of the JSON-RPC error it wraps, if any
// (what the SDK's jsonrpc2 sends for a handler's error).
func wireError(err error) error {
	if err == nil {
		return nil
	}
	if w, ok := err.(*jsonrpc.Error); ok {
		cp := *w // the receiver's own, as if decoded
		return &cp
	}
	out := &jsonrpc.Error{Message: err.Error()}
	var wrapped *jsonrpc.Error
	if errors.As(err, &wrapped) {
		out.Code = wrapped.Code
	}
	return out
}
