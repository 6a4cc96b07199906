package catalog

import (
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The ids of URL elicitations are remembered for their completion, but
// not for ever and not without bound: a server that names a million ids
// in its refusals must not grow Airlock's memory.
func TestElicitationsBoundedAndExpiring(t *testing.T) {
	now := time.Unix(0, 0)
	e := elicitations{now: func() time.Time { return now }, kept: 3}
	for i := range 3 {
		e.note("s", fmt.Sprint(i), fmt.Sprint("peer", i))
		now = now.Add(time.Second)
	}
	e.note("s", "3", "peer3") // the oldest, 0, goes
	if _, ok := e.peer("s", "0"); ok {
		t.Error("id 0 is still kept past the bound; want the oldest dropped")
	}
	for _, id := range []string{"1", "2", "3"} {
		if p, ok := e.peer("s", id); !ok || p != "peer"+id {
			t.Errorf("id %s = %v %v, want peer%s", id, p, ok, id)
		}
	}
	if _, ok := e.peer("other", "1"); ok {
		t.Error("another server's id 1 was found; want ids kept per server")
	}
	now = now.Add(elicitationTTL + time.Second)
	if _, ok := e.peer("s", "3"); ok {
		t.Error("id 3 is still kept after its time; want it forgotten")
	}
	if len(e.to) != 2 {
		t.Errorf("%d ids kept, want 2 (the expired one looked up is dropped)", len(e.to))
	}
}

// A -32042 refusal names the elicitations its client must complete; other
// errors name none.
func TestElicitationsNamedByARefusal(t *testing.T) {
	var e elicitations
	e.noteRequired("pay", "peer", mcp.URLElicitationRequiredError([]*mcp.ElicitParams{
		{Mode: "url", Message: "m", URL: "https://x", ElicitationID: "a"},
		{Mode: "url", Message: "m", URL: "https://y", ElicitationID: "b"}}))
	e.noteRequired("pay", "peer", fmt.Errorf("not a refusal"))
	for _, id := range []string{"a", "b"} {
		if p, ok := e.peer("pay", id); !ok || p != "peer" {
			t.Errorf("id %s = %v %v, want the refused client", id, p, ok)
		}
	}
	if len(e.to) != 2 {
		t.Errorf("%d ids kept, want 2", len(e.to))
	}
}

// A session that ended is forgotten with the ids given to it.
func TestElicitationsForgetAnEndedClient(t *testing.T) {
	var e elicitations
	e.note("s", "a", "one")
	e.note("s", "b", "two")
	e.forget("one")
	if _, ok := e.peer("s", "a"); ok {
		t.Error("the ended client's id is still kept")
	}
	if _, ok := e.peer("s", "b"); !ok {
		t.Error("another client's id was forgotten with it")
	}
}
