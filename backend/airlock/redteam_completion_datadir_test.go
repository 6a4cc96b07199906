package airlock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/testutil"
)

// 7f0fc0a says "the data-directory guard sees the values [completion/
// complete] sends", but the gateway's Precheck is the built-in servers'
// policy alone (it passes every request that is not a tools/call), not the
// data-directory guard: an agent sends a path in Airlock's data directory
// (the agents' token) to a server you added, which a tools/call with the
// same value is refused for (TestServersAreNotGivenTheDataDirectory).
func TestCompletionNeverGivesAServerTheDataDirectory(t *testing.T) {
	dir := t.TempDir()
	writeServers(t, dir, testutil.EverythingServer(t, "everything"))
	in := start(t, dir)
	allowAll(t, in)
	sess := connect(t, in)
	waitTool(t, sess, "everything__echo")
	var prompt string
	testutil.Eventually(t, 30*time.Second, func() bool {
		res, err := sess.ListPrompts(context.Background(), nil)
		if err != nil {
			return false
		}
		for _, p := range res.Prompts {
			if strings.HasSuffix(p.Name, "completable-prompt") {
				prompt = p.Name
				return true
			}
		}
		return false
	}, "the everything server's completable prompt")

	value := dir + "/agent-token"
	res, err := sess.Complete(context.Background(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: prompt},
		Argument: mcp.CompleteParamsArgument{Name: "department", Value: value}})
	if err == nil || !strings.Contains(err.Error(), "path_protected") {
		t.Errorf("completion/complete of %s with %q = %+v, %v; want a path_protected refusal (the value never reaches the server)", prompt, value, res, err)
	}
}
