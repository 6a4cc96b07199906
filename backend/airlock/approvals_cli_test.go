package airlock_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/cli"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// `airlock approvals` decides the calls waiting for a person without a
// browser (a headless serve over SSH; found by a new-user test: only the
// UI could): list shows them, show gives the arguments, decline sends the
// reason to the agent, approve lets one through.
func TestApprovalsCLIDecidesWaitingCalls(t *testing.T) {
	dir := t.TempDir()
	in := start(t, dir)
	if _, err := in.API.Servers.Add(testutil.EverythingServer(t, "everything")); err != nil {
		t.Fatal(err)
	}
	sess := connect(t, in)
	waitTool(t, sess, "everything__echo")
	approvals := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := cli.RunApprovals(context.Background(), dir, args, &out, &errOut); err != nil {
			t.Fatalf("airlock approvals %s: %v (%s)", strings.Join(args, " "), err, errOut.String())
		}
		return out.String()
	}
	waiting := func(message string) (string, chan *mcp.CallToolResult) {
		done := make(chan *mcp.CallToolResult, 1)
		go func() {
			res, _ := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": message}})
			done <- res
		}()
		var id string
		testutil.Eventually(t, 30*time.Second, func() bool {
			p, _ := in.API.Approvals.Pending()
			if len(p) == 1 {
				id = p[0].ID
			}
			return id != ""
		}, "the call never waited for approval")
		return id, done
	}

	id, done := waiting("first")
	if out := approvals("list"); !strings.Contains(out, id) || !strings.Contains(out, "echo") {
		t.Errorf("approvals list:\n%s\nwant the waiting echo call %s", out, id)
	}
	if out := approvals("show", id); !strings.Contains(out, `"message": "first"`) {
		t.Errorf("approvals show %s:\n%s\nwant its arguments", id, out)
	}
	approvals("decline", id, "--reason", "not now, from the terminal")
	if res := <-done; res == nil || !res.IsError || !strings.Contains(textOf(res), "not now, from the terminal") {
		t.Errorf("the declined call's answer: %+v, want the reason", res)
	}

	id, done = waiting("second")
	approvals("approve", id)
	if res := <-done; res == nil || res.IsError || !strings.Contains(textOf(res), "second") {
		t.Errorf("the approved call's answer: %+v, want the echo", res)
	}
	if out := approvals("list"); !strings.Contains(out, "no call waits") {
		t.Errorf("approvals list with nothing waiting:\n%s", out)
	}
}
