package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ElicitationCompleter is a Peer that can be told a URL elicitation ended
// (notifications/elicitation/complete). A Peer without it is not told.
type ElicitationCompleter interface {
	ElicitationComplete(ctx context.Context, p *mcp.ElicitationCompleteParams) error
}

// A URL elicitation ends out of band, in the user's browser: the server
// says so with notifications/elicitation/complete and the elicitation's
// id, during the call or long after it, and clients wait for it to retry.
// MCP names no request in it, so Airlock remembers which agent client each
// id was given to (relayed, or named in a -32042 refusal) and tells that
// client only.
const (
	// elicitationsKept bounds the ids remembered; the oldest goes first.
	elicitationsKept = 1024
	// elicitationTTL is how long an id is remembered: a sign-in or a
	// payment in the browser takes minutes.
	elicitationTTL = 30 * time.Minute
)

// elicitations maps a server and an elicitation id to the agent client it
// was given to.
type elicitations struct {
	mu   sync.Mutex
	to   map[[2]string]elicitation
	now  func() time.Time // tests
	kept int              // elicitationsKept (tests)
}

type elicitation struct {
	peer any
	at   time.Time
}

// note remembers that server's elicitation id went to peer. The same id
// given to another client later goes to that one from then on.
func (e *elicitations) note(server, id string, peer any) {
	if id == "" || peer == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock()
	if e.to == nil {
		e.to = map[[2]string]elicitation{}
	}
	key := [2]string{server, id}
	if _, ok := e.to[key]; !ok && len(e.to) >= e.limit() {
		e.dropLocked(now)
	}
	e.to[key] = elicitation{peer: peer, at: now}
}

// dropLocked forgets the expired ids, else the oldest one.
func (e *elicitations) dropLocked(now time.Time) {
	var oldest [2]string
	var oldestAt time.Time
	for k, v := range e.to {
		if now.Sub(v.at) > elicitationTTL {
			delete(e.to, k)
			continue
		}
		if oldestAt.IsZero() || v.at.Before(oldestAt) {
			oldest, oldestAt = k, v.at
		}
	}
	if len(e.to) >= e.limit() {
		delete(e.to, oldest)
	}
}

// peer returns the client server's elicitation id was given to.
func (e *elicitations) peer(server, id string) (any, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	key := [2]string{server, id}
	v, ok := e.to[key]
	if ok && e.clock().Sub(v.at) > elicitationTTL {
		delete(e.to, key)
		return nil, false
	}
	return v.peer, ok
}

// noteRequired remembers the elicitations a server's -32042 refusal (URL
// elicitation required) of a request of peer names: the client opens
// their URLs and retries once they are complete.
func (e *elicitations) noteRequired(server string, peer any, err error) {
	var wire *jsonrpc.Error
	if peer == nil || !errors.As(err, &wire) || wire.Code != mcp.CodeURLElicitationRequired {
		return
	}
	var data struct {
		Elicitations []struct {
			ElicitationID string `json:"elicitationId"`
		} `json:"elicitations"`
	}
	if json.Unmarshal(wire.Data, &data) != nil {
		return
	}
	for i, el := range data.Elicitations {
		if i == elicitationsKept {
			break
		}
		e.note(server, el.ElicitationID, peer)
	}
}

func (e *elicitations) clock() time.Time {
	if e.now != nil {
		return e.now()
	}
	return time.Now()
}

func (e *elicitations) limit() int {
	if e.kept > 0 {
		return e.kept
	}
	return elicitationsKept
}

// forget drops the ids given to client (a Peer's PeerClient), whose
// session ended: nobody is left to tell, and the entries held it.
func (e *elicitations) forget(client any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, v := range e.to {
		if peerClient(v.peer) == client {
			delete(e.to, k)
		}
	}
}

// ClientEnded tells the catalog that the agent client client (a Peer's
// PeerClient, such as the gateway's session) is gone.
func (c *Catalog) ClientEnded(client any) { c.elicits.forget(client) }

// elicitationComplete passes a server's notifications/elicitation/complete
// to the agent client its elicitation was given to, and to nobody else:
// an id Airlock did not give out is dropped.
func (c *Catalog) elicitationComplete(ctx context.Context, server string, p *mcp.ElicitationCompleteParams) {
	if p == nil || p.ElicitationID == "" {
		return
	}
	peer, ok := c.elicits.peer(server, p.ElicitationID)
	if !ok {
		return
	}
	to, ok := peer.(ElicitationCompleter)
	if !ok {
		return
	}
	// Bounded: a stalled client must not hold up the server's other
	// notifications.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if err := to.ElicitationComplete(ctx, p); err != nil {
		c.opts.Logger.Debug("an elicitation's completion did not reach the agent", "server", server, "err", err)
	}
}
