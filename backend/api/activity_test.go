package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/api"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// dial connects a real MCP client to in with its agent token, once the
// in-process server's tools are listed.
func dial(t *testing.T, in *airlock.Instance) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "timeline-test", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: in.Info.MCPURL, HTTPClient: &http.Client{Transport: bearer(in.Info.AgentToken)},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	testutil.Eventually(t, 30*time.Second, func() bool {
		res, err := sess.ListTools(context.Background(), nil)
		if err != nil {
			return false
		}
		for _, tl := range res.Tools {
			if tl.Name == "work__add" {
				return true
			}
		}
		return false
	}, "work__add never listed")
	return sess
}

func sp(s string) *string { return &s }

// The Activity chart counts the calls an agent made, by decision, for the
// list's filters — called directly and over the HTTP transport the UI uses
// in `airlock serve`, where times travel as JSON text.
func TestActivityTimelineCountsCallsByDecision(t *testing.T) {
	in := start(t)
	if _, err := in.API.Rules.Create(hitl.RuleInput{ServerID: sp("work"), ToolName: sp("echo"), AutoApprove: true, Priority: 10}); err != nil {
		t.Fatal(err)
	}
	from := time.Now().Add(-time.Minute)
	sess := dial(t, in)
	call := func(name string) *mcp.CallToolResult {
		t.Helper()
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"message": "hi", "a": 1, "b": 2}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	call("work__echo")
	call("work__echo")
	if res := call("work__nope"); !res.IsError {
		t.Fatal("calling an unknown tool succeeded")
	}
	// work__add asks a person; decline it while it waits.
	declined := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "work__add", Arguments: map[string]any{"a": 1, "b": 2}})
		declined <- res
	}()
	var pending []hitl.Approval
	testutil.Eventually(t, 10*time.Second, func() bool {
		pending, _ = in.API.Approvals.Pending()
		return len(pending) == 1
	}, "the call to work__add never waited for approval")
	if err := in.API.Approvals.Decline(pending[0].ID, "not now"); err != nil {
		t.Fatal(err)
	}
	if res := <-declined; res == nil || !res.IsError {
		t.Fatalf("the declined call answered %+v", res)
	}
	to := time.Now().Add(time.Minute)

	sum := func(tl store.Timeline) store.TimelineBucket {
		var s store.TimelineBucket
		for _, b := range tl.Buckets {
			s.Allowed, s.Approved, s.Refused, s.Expired = s.Allowed+b.Allowed, s.Approved+b.Approved, s.Refused+b.Refused, s.Expired+b.Expired
			s.Errors, s.Pending, s.Other, s.Total = s.Errors+b.Errors, s.Pending+b.Pending, s.Other+b.Other, s.Total+b.Total
		}
		return s
	}
	rpc := httptest.NewServer(api.RPCHandler(in.API.Areas()))
	defer rpc.Close()
	overHTTP := func(f core.ActivityFilter, buckets int) (store.Timeline, int, []byte) {
		body, _ := json.Marshal([]any{f, from, to, buckets})
		resp, err := http.Post(rpc.URL+"/api/rpc/Activity.Timeline", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		var tl store.Timeline
		if resp.StatusCode == http.StatusOK {
			if err := json.Unmarshal(buf.Bytes(), &tl); err != nil {
				t.Fatal(err)
			}
		}
		return tl, resp.StatusCode, buf.Bytes()
	}

	cases := []struct {
		name string
		f    core.ActivityFilter
		want store.TimelineBucket
	}{
		{"every call", core.ActivityFilter{}, store.TimelineBucket{Allowed: 2, Refused: 1, Errors: 1, Total: 4}},
		{"one tool", core.ActivityFilter{Tool: "echo"}, store.TimelineBucket{Allowed: 2, Total: 2}},
		{"one decision", core.ActivityFilter{Decision: core.DecisionDeclined}, store.TimelineBucket{Refused: 1, Total: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			direct, err := in.API.Activity.Timeline(c.f, from, to, 12)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, sum(direct)); diff != "" {
				t.Errorf("Timeline counts (-want +got):\n%s", diff)
			}
			if len(direct.Buckets) != 12 || direct.Total != c.want.Total {
				t.Errorf("Timeline has %d buckets, total %d; want 12, %d", len(direct.Buckets), direct.Total, c.want.Total)
			}
			remote, status, body := overHTTP(c.f, 12)
			if status != http.StatusOK {
				t.Fatalf("POST Activity.Timeline: %d %s", status, body)
			}
			if diff := cmp.Diff(direct, remote); diff != "" {
				t.Errorf("over HTTP (-direct +HTTP):\n%s", diff)
			}
		})
	}

	_, status, body := overHTTP(core.ActivityFilter{}, store.MaxTimelineBuckets+1)
	var e core.Error
	json.Unmarshal(body, &e)
	if status != http.StatusBadRequest || e.Code != core.EInvalid || e.Message != "a timeline has 1 to 200 buckets, not 201" {
		t.Errorf("201 buckets over HTTP: %d %s; want 400 with code %s and the limit", status, body, core.EInvalid)
	}
}
