// Copyright 2026 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by an MIT-style
// license that can be found in the LICENSE file.

package jsonrpc2

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
)

// directReader is a DirectReader whose Read ends (io.EOF) once eof is
// closed; messages come only through deliver.
type directReader struct {
	eof     chan struct{}
	deliver func(Message) error
}

func (r *directReader) Read(context.Context) (Message, error) {
	<-r.eof
	return nil, io.EOF
}

func (r *directReader) SetDeliver(d func(Message) error) { r.deliver = d }

type discardWriter struct{}

func (discardWriter) Write(context.Context, Message) error { return nil }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// A message delivered while the connection stops reading is either taken
// or refused; it must not find the connection done half-way (Airlock
// patch, DirectReader). deliver checked that the connection still read,
// then took the message under the lock again: in between the reader could
// end and the idle connection close, and the request's count made the
// done connection busy again, which updateInFlight panics on.
func TestDeliverWhileTheReaderEnds(t *testing.T) {
	for i := range 20000 {
		r := &directReader{eof: make(chan struct{})}
		c := NewConnection(context.Background(), ConnectionConfig{
			Reader: r,
			Writer: discardWriter{},
			Closer: nopCloser{},
			Bind: func(*Connection) Handler {
				return HandlerFunc(func(context.Context, *Request) (any, error) { return nil, nil })
			},
		})
		note, err := NewNotification("n", nil)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var panicked any
		wg.Go(func() {
			defer func() { panicked = recover() }()
			r.deliver(note)
		})
		close(r.eof)
		wg.Wait()
		if panicked != nil {
			t.Fatalf("iteration %d: deliver panicked: %v", i, fmt.Sprint(panicked))
		}
		c.Close()
	}
}
