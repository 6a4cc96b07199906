package teams_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/fsutil"
	"github.com/airlock-dev/airlock/backend/teams"
)

func writeLog(t *testing.T, path string, lines int) {
	t.Helper()
	var b strings.Builder
	for i := range lines {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

func intp(n int) *int { return &n }

// Execution logs: made in the data directory's log folder, 0600; read
// back by tail or offset with truncated; only the agent's own.
func TestExecutionLogs(t *testing.T) {
	w := newWorld(t)
	task := w.task(t, "manager-dev", "worker-frontend-01", "run me", teams.StatusInProgress)
	e, err := w.svc.StartExecution(task.ID, w.id("worker-frontend-01"))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(e.LogFilePath)
	if err != nil || fi.Mode().Perm() != 0o600 || !strings.HasPrefix(e.LogFilePath, w.logDir) {
		t.Fatalf("log file %s: %v %v", e.LogFilePath, fi, err)
	}
	writeLog(t, e.LogFilePath, 250)
	code := 0
	if _, err := w.svc.FinishExecution(e.ID, teams.ExecCompleted, &code); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.FinishExecution(e.ID, teams.ExecFailed, nil); core.ErrorCode(err) != core.EConflict {
		t.Errorf("finishing twice: %v", err)
	}
	cases := []struct {
		name         string
		tail, offset *int
		first, last  string
		n, offsetOut int
		truncated    bool
		code         string
	}{
		{name: "default tail", first: "line 150", last: "line 249", n: 100, offsetOut: 150, truncated: true},
		{name: "tail 3", tail: intp(3), first: "line 247", last: "line 249", n: 3, offsetOut: 247, truncated: true},
		{name: "tail beyond", tail: intp(1000), first: "line 0", last: "line 249", n: 250, truncated: false},
		{name: "offset 0", offset: intp(0), first: "line 0", last: "line 99", n: 100, truncated: true},
		{name: "offset 200", offset: intp(200), first: "line 200", last: "line 249", n: 50, offsetOut: 200, truncated: true},
		{name: "offset past the end", offset: intp(300), n: 0, offsetOut: 300, truncated: true},
		{name: "both", tail: intp(1), offset: intp(1), code: core.EInvalid},
		{name: "tail 0", tail: intp(0), code: core.EInvalid},
		{name: "negative offset", offset: intp(-1), code: core.EInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, chunk, err := w.svc.ReadLog(w.id("worker-frontend-01"), e.ID, c.tail, c.offset)
			if core.ErrorCode(err) != c.code {
				t.Fatalf("code %q (%v), want %q", core.ErrorCode(err), err, c.code)
			}
			if c.code != "" {
				return
			}
			if len(chunk.Lines) != c.n || chunk.TotalLines != 250 || chunk.Truncated != c.truncated || chunk.Offset != c.offsetOut {
				t.Fatalf("chunk: %d lines of %d, offset %d, truncated %v", len(chunk.Lines), chunk.TotalLines, chunk.Offset, chunk.Truncated)
			}
			if c.n > 0 && (chunk.Lines[0] != c.first || chunk.Lines[len(chunk.Lines)-1] != c.last) {
				t.Errorf("lines %q … %q, want %q … %q", chunk.Lines[0], chunk.Lines[len(chunk.Lines)-1], c.first, c.last)
			}
		})
	}
	if _, _, err := w.svc.ReadLog(w.id("worker-frontend-02"), e.ID, nil, nil); core.ErrorCode(err) != teams.ECodeUnauthorized {
		t.Errorf("another agent reading the log: %v", err)
	}
	if _, _, err := w.svc.ReadLog(authz.OwnerID, e.ID, nil, nil); err != nil {
		t.Errorf("the owner reading the log on the board: %v", err)
	}
	if _, _, err := w.svc.ReadLog(w.id("worker-frontend-01"), "exec_nope", nil, nil); core.ErrorCode(err) != teams.ECodeExecutionNotFound {
		t.Errorf("an unknown execution: %v", err)
	}
	// A long line is cut, a missing file is said to be missing.
	e2, err := w.svc.StartExecution(task.ID, w.id("worker-frontend-01"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e2.LogFilePath, []byte(strings.Repeat("x", 3*teams.MaxLogLine)+"\nlast"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, chunk, err := w.svc.ReadLog(w.id("worker-frontend-01"), e2.ID, nil, nil)
	if err != nil || len(chunk.Lines) != 2 || !strings.HasSuffix(chunk.Lines[0], fsutil.LineCutMarker) || len(chunk.Lines[0]) > teams.MaxLogLine+len(fsutil.LineCutMarker) || chunk.Lines[1] != "last" {
		t.Errorf("a long line: %d lines, first %d bytes, %v", len(chunk.Lines), len(chunk.Lines[0]), err)
	}
	os.Remove(e2.LogFilePath)
	if _, _, err := w.svc.ReadLog(w.id("worker-frontend-01"), e2.ID, nil, nil); core.ErrorCode(err) != teams.ECodeLogUnavailable {
		t.Errorf("a deleted log file: %v", err)
	}
	// History, newest first, filtered.
	list, total, err := w.svc.Executions(teams.ExecutionFilter{AgentID: w.id("worker-frontend-01"), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range list {
		ids = append(ids, x.ID)
	}
	if diff := cmp.Diff([]string{e2.ID, e.ID}, ids); diff != "" || total != 2 {
		t.Errorf("history (-want +got):\n%s (total %d)", diff, total)
	}
	running, _, _ := w.svc.Executions(teams.ExecutionFilter{AgentID: w.id("worker-frontend-01"), Status: teams.ExecRunning})
	if len(running) != 1 || running[0].ID != e2.ID {
		t.Errorf("running executions: %+v", running)
	}
	if _, err := w.svc.StartExecution(task.ID, w.id("outsider")); core.ErrorCode(err) != teams.ECodeNotAssigned {
		t.Errorf("an agent outside the project: %v", err)
	}
}
