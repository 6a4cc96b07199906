package airlock_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/teams"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// A new passkey ends every session opened with the old one, "the agent's
// runs' included" (README, Security): the run's credential stops working at
// once — but the run is left running, shown as running on the board and by
// `airlock runs live`, its agent refused on every call ("Invalid
// session_token. Please re-authenticate.", which it cannot: it has no
// passkey). As when its agent is suspended, the run ends, saying why.
func TestRunEndsWhenItsCredentialIsEnded(t *testing.T) {
	rs := newRuns(t)
	if _, err := rs.in.API.Runs.SetProfile(rs.worker.Agent.ID, runner.Profile{Template: runner.TemplateCustom, Command: "/bin/sleep", Args: []string{"300"}, WorkDir: rs.work}); err != nil {
		t.Fatal(err)
	}
	run, err := rs.in.API.Runs.Start(rs.task(t, teams.StatusInProgress))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(rs.dataDir, "runs", run.ID, "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	token := regexp.MustCompile(authz.SessionPrefix + `[A-Za-z0-9_-]+`).FindString(string(cfg))
	if code := mcpStatus(t, rs.in, token); code != 200 {
		t.Fatalf("the live run's credential: HTTP %d", code)
	}
	if _, err := rs.in.API.Agents.RotatePasskey(rs.worker.Agent.ID); err != nil {
		t.Fatal(err)
	}
	if code := mcpStatus(t, rs.in, token); code != 401 {
		t.Fatalf("the run's credential after a new passkey: HTTP %d, want 401 (as documented)", code)
	}
	testutil.Eventually(t, 30*time.Second, func() bool {
		got, err := rs.in.API.Runs.Get(run.ID)
		return err == nil && got.Status != runner.StatusRunning
	}, "the run goes on, shown as running, after its credential was ended by a new passkey")
	if got, _ := rs.in.API.Runs.Get(run.ID); got.Reason == "" || !gone(run.PID) {
		t.Errorf("run after its credential ended = %+v (process gone %v), want ended with a reason", got, gone(run.PID))
	}
}
