package airlock_test

import (
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/backend/runner"
)

// The built-in tools refuse a folder in Airlock's data directory (an
// allowed folder there is refused, and so is every path into it), but an
// agent's run may be started there: an allowed folder that holds the data
// directory (the home folder, say) lets a run profile name the data
// directory itself, or a folder in it (such as runs/, where the MCP configs
// of the other live runs are, with their credentials), as the run's
// working directory, and the run starts in it (found by a new-user test).
// An agent CLI whose file tools read its working directory unasked (Claude
// Code's Read) can then read agent-token, the shared token of the
// superuser "default".
func TestRunWorkDirIsNeverTheDataDirectory(t *testing.T) {
	rs := newRuns(t)
	// The folder that holds both the work folder and the data directory.
	if _, err := rs.in.API.Builtin.AllowPath(filepath.Dir(rs.dataDir)); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{rs.dataDir, filepath.Join(rs.dataDir, "journal")} {
		p, err := rs.in.API.Runs.SetProfile(rs.worker.Agent.ID, runner.Profile{Template: runner.TemplateCustom, Command: "/bin/true", WorkDir: dir})
		if err == nil {
			t.Errorf("a run profile working in %s (the data directory) was accepted: %+v", dir, p)
		}
	}
}
