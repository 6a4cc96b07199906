package airlock_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/cli"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/teams"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// runs is a real Airlock with the test server "everything", a project, an
// AI worker granted "everything", a folder allowed for agents, and its task
// board; Airlock's own tools run unasked (the default rule), everything
// else asks.
type runs struct {
	in      *airlock.Instance
	worker  authz.CreatedAgent
	project authz.Project
	work    string
	dataDir string
}

func newRuns(t *testing.T) *runs {
	t.Helper()
	rs := &runs{work: t.TempDir(), dataDir: t.TempDir()}
	var err error
	rs.in, err = airlock.Start(context.Background(), airlock.Options{DataDir: rs.dataDir, Addr: "127.0.0.1:0",
		InProcess: map[string]*mcp.Server{"everything": testutil.NewTestServer().Server}, ApprovalTimeout: 30 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rs.in.Close)
	if _, err := rs.in.API.Builtin.AllowPath(rs.work); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.in.API.Rules.Create(hitl.RuleInput{ServerID: sp("everything"), ToolName: sp("whoami"), AutoApprove: true, Priority: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.in.API.Agents.CreateRole(authz.RoleInput{Name: "builders", Servers: []string{"everything"}}); err != nil {
		t.Fatal(err)
	}
	if rs.project, err = rs.in.API.Agents.CreateProject("apollo", ""); err != nil {
		t.Fatal(err)
	}
	if rs.worker, err = rs.in.API.Agents.Create(authz.AgentInput{Name: "builder", Kind: authz.KindWorker, Role: "builders", Projects: []string{"apollo"}}); err != nil {
		t.Fatal(err)
	}
	return rs
}

func (rs *runs) script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(rs.work, "agent.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// task puts a task for the worker on the board, as the owner would, and
// returns its id.
func (rs *runs) task(t *testing.T, status string) string {
	t.Helper()
	card, err := rs.in.API.Board.Create(rs.project.ID, teams.TaskInput{Title: "Say hello", Status: teams.StatusTodo, AssigneeID: rs.worker.Agent.ID})
	if err != nil {
		t.Fatal(err)
	}
	if status != teams.StatusTodo {
		if card, err = rs.in.API.Board.Move(card.ID, status, ""); err != nil {
			t.Fatal(err)
		}
	}
	return card.ID
}

// executions are the board's execution records of a task.
func (rs *runs) executions(t *testing.T, taskID string) []teams.Execution {
	t.Helper()
	d, err := rs.in.API.Board.Detail(taskID)
	if err != nil {
		t.Fatal(err)
	}
	return d.Executions
}

// The scripted agent, launched by Airlock for a task on the board,
// connects with a credential of its own agent (never the owner's or the
// agent's own connection token, which keeps working), asks get_next_action,
// starts the task, waits on a call that needs approval — approved here
// through the API the UI uses — and reports completion: the task is done,
// the run completed with exit code 0, its log readable through
// get_execution_log, its MCP config gone and its credential revoked.
func TestScriptedAgentRunsATask(t *testing.T) {
	rs := newRuns(t)
	script := rs.script(t, `
name: say hello
steps:
  - list_tools: {present: [help, get_next_action, everything__echo, everything__whoami]}
  - call: everything__whoami
    expect: {contains: "caller: ${agent_id}"}
  - call: get_next_action
    expect: {contains: "${task_id}"}
  - call: update_task_status
    args: {task_id: "${task_id}", status: in_progress}
    expect: {contains: in_progress}
  - call: everything__echo
    args: {message: "hello from ${task_id}"}
    expect: {contains: "Echo: hello from ${task_id}"}
  - call: report_completed
    args: {task_id: "${task_id}", result: success, summary: said hello}
    expect: {contains: done}
  - call: get_execution_log
    args: {execution_id: "${run_id}"}
    expect: {contains: "Echo: hello from ${task_id}"}
  - print: "done with ${task_id} in run ${run_id}"
`)
	if _, err := rs.in.API.Runs.SetProfile(rs.worker.Agent.ID, runner.Profile{Template: runner.TemplateScripted, ExtraArgs: []string{script}, WorkDir: rs.work}); err != nil {
		t.Fatal(err)
	}
	// A run asked for a task in the backlog moves it to to-do first: the
	// agent's get_next_action offers to-do tasks (found by a new-user test:
	// the run found nothing to do).
	taskID := rs.task(t, teams.StatusBacklog)
	// With no run live and no UI open nothing follows the activity, so
	// proxied calls do not queue their records for anyone.
	if rs.in.Hub.Wants(core.EventActivity) {
		t.Error("activity is followed with no run live and no UI open")
	}
	run, err := rs.in.API.Runs.Start(taskID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != runner.StatusRunning || run.PID == 0 || run.AgentID != rs.worker.Agent.ID {
		t.Fatalf("started run = %+v", run)
	}
	if d, err := rs.in.API.Board.Detail(taskID); err != nil || !slices.ContainsFunc(d.History, func(e teams.TaskEvent) bool {
		return e.FromStatus == teams.StatusBacklog && e.ToStatus == teams.StatusTodo && e.AgentID == authz.OwnerID
	}) {
		t.Errorf("the backlog task was not moved to to-do when its run was asked for: %v %+v", err, d.History)
	}
	testutil.Eventually(t, 30*time.Second, func() bool { return rs.in.Hub.Wants(core.EventActivity) },
		"the runner does not follow the activity while a run is live")

	// The echo needs a person: the dialog shows the run's agent.
	var pending []hitl.Approval
	testutil.Eventually(t, 60*time.Second, func() bool {
		pending, _ = rs.in.API.Approvals.Pending()
		return len(pending) == 1
	}, "the agent's echo never asked for approval")
	if p := pending[0]; p.AgentID != rs.worker.Agent.ID || p.Tool != "echo" || p.Purpose != core.PurposeTask {
		t.Errorf("approval = %+v, want builder's echo in a task session", p)
	}
	// The dialog names the task the agent is working on.
	if p := pending[0]; p.Task == nil || p.Task.ID != taskID || p.Task.Title != "Say hello" || p.Task.ProjectID != rs.project.ID {
		t.Errorf("approval's task = %+v, want %s (Say hello)", p.Task, taskID)
	}
	// Meanwhile the run's MCP config is there, the user's alone, with a
	// credential of the run's own.
	cfgPath := filepath.Join(rs.dataDir, "runs", run.ID, "mcp.json")
	fi, err := os.Stat(cfgPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the run's MCP config: %v, mode %v; want 0600", err, fi)
	}
	cfg, _ := os.ReadFile(cfgPath)
	for _, secret := range []string{rs.in.Info.AgentToken, rs.worker.Token, rs.in.UIToken} {
		if bytes.Contains(cfg, []byte(secret)) {
			t.Errorf("the run's MCP config holds a token that is not the run's: %s", cfg)
		}
	}
	if !bytes.Contains(cfg, []byte("Bearer "+authz.SessionPrefix)) {
		t.Errorf("the run's MCP config has no session credential: %s", cfg)
	}
	runToken := string(cfg[bytes.Index(cfg, []byte(authz.SessionPrefix)):])
	runToken = runToken[:strings.IndexByte(runToken, '"')]
	live, _ := rs.in.API.Runs.Live()
	if len(live) != 1 || live[0].LastTool == nil || live[0].LastTool.Tool == "" {
		t.Errorf("live runs = %+v, want the run with the agent's latest call", live)
	}

	if err := rs.in.API.Approvals.Approve(pending[0].ID); err != nil {
		t.Fatal(err)
	}
	run = waitRun(t, rs, run.ID)
	if run.Status != runner.StatusCompleted || run.ExitCode == nil || *run.ExitCode != 0 {
		t.Fatalf("run = %+v, want completed with exit code 0\n%s", run, logText(t, rs, run.ID))
	}
	testutil.Eventually(t, 30*time.Second, func() bool { return !rs.in.Hub.Wants(core.EventActivity) },
		"the runner still follows the activity after its last run ended")
	log := logText(t, rs, run.ID)
	for _, want := range []string{"Echo: hello from " + taskID, "done with " + taskID + " in run " + run.ID, "all 8 steps passed", "ended: completed"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if _, err := os.Stat(filepath.Dir(cfgPath)); !os.IsNotExist(err) {
		t.Errorf("the run's folder (MCP config) is still there: %v", err)
	}
	if code := mcpStatus(t, rs.in, runToken); code != http.StatusUnauthorized {
		t.Errorf("the run's credential after the run: HTTP %d, want 401 (revoked)", code)
	}
	if code := mcpStatus(t, rs.in, rs.worker.Token); code == http.StatusUnauthorized {
		t.Error("the agent's own connection token stopped working")
	}
	execs := rs.executions(t, taskID)
	if len(execs) != 1 || execs[0].ID != run.ID || execs[0].Status != runner.StatusCompleted {
		t.Errorf("the board's execution records = %+v, want the completed run", execs)
	}
	if d, _ := rs.in.API.Board.Detail(taskID); d.Task.Status != teams.StatusDone {
		t.Errorf("task after the run = %+v, want done", d.Task)
	}
}

// Stopping a run ends its process group at once, the run is stopped; a
// command that does not exist, a template with an unknown placeholder and
// a folder outside the allowed ones are refused before anything starts.
func TestRunStopAndRefusals(t *testing.T) {
	rs := newRuns(t)
	script := rs.script(t, `
steps:
  - poll: {call: help, until: {contains: never-there}, every: 50ms, timeout: 10m}
`)
	if _, err := rs.in.API.Runs.SetProfile(rs.worker.Agent.ID, runner.Profile{Template: runner.TemplateScripted, ExtraArgs: []string{script}}); err != nil {
		t.Fatal(err)
	}
	run, err := rs.in.API.Runs.Start(rs.task(t, teams.StatusInProgress))
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 60*time.Second, func() bool { return strings.Contains(logText(t, rs, run.ID), "connected to") },
		"the scripted agent never connected")
	stopped, err := rs.in.API.Runs.Stop(run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stopped.Status != runner.StatusStopped || stopped.Reason != "stopped by the user" {
		t.Errorf("stopped run = %+v", stopped)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return syscall.Kill(run.PID, 0) == syscall.ESRCH },
		"the run's process %d is still there", run.PID)

	for _, tc := range []struct {
		name    string
		profile runner.Profile
		code    string
	}{
		{"unknown placeholder", runner.Profile{Template: runner.TemplateClaudeCode, ExtraArgs: []string{"--x={{secret}}"}}, runner.EUnknownPlaceholder},
		{"folder outside the allowed ones", runner.Profile{Template: runner.TemplateScripted, ExtraArgs: []string{script}, WorkDir: t.TempDir()}, runner.EWorkDirOutsideRoots},
	} {
		if _, err := rs.in.API.Runs.SetProfile(rs.worker.Agent.ID, tc.profile); core.ErrorCode(err) != tc.code {
			t.Errorf("%s: SetProfile = %v, want %s", tc.name, err, tc.code)
		}
	}
	if _, err := rs.in.API.Runs.SetProfile(rs.worker.Agent.ID, runner.Profile{Template: runner.TemplateCustom, Command: "/nonexistent/agent-cli"}); err != nil {
		t.Fatal(err)
	}
	tsk2 := rs.task(t, teams.StatusInProgress)
	_, err = rs.in.API.Runs.Start(tsk2)
	if core.ErrorCode(err) != runner.ECommandNotFound || !strings.Contains(core.ErrorMessage(err), "/nonexistent/agent-cli") {
		t.Errorf("a run of a missing command = %v, want %s naming it", err, runner.ECommandNotFound)
	}
	if execs := rs.executions(t, tsk2); len(execs) != 0 {
		t.Errorf("a refused run was recorded: %+v", execs)
	}
}

// Closing Airlock while a run waits for an approval stops the run first:
// its call ends with it, and Close does not wait for the approval's
// timeout (30 minutes here).
func TestCloseEndsRunsWaitingForApproval(t *testing.T) {
	rs := newRuns(t)
	script := rs.script(t, "steps:\n  - call: everything__echo\n    args: {message: x}\n")
	if _, err := rs.in.API.Runs.SetProfile(rs.worker.Agent.ID, runner.Profile{Template: runner.TemplateScripted, ExtraArgs: []string{script}}); err != nil {
		t.Fatal(err)
	}
	taskID := rs.task(t, teams.StatusInProgress)
	run, err := rs.in.API.Runs.Start(taskID)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 60*time.Second, func() bool {
		pending, _ := rs.in.API.Approvals.Pending()
		return len(pending) == 1
	}, "the run's call never asked for approval")
	closed := make(chan struct{})
	go func() { rs.in.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(2 * time.Minute):
		t.Fatal("Close is waiting for the approval of a run's call")
	}
	// The record survives: an Airlock started again shows the run stopped.
	rs.in = startWith(t, airlock.Options{DataDir: rs.dataDir})
	execs := rs.executions(t, taskID)
	if len(execs) != 1 || execs[0].Status != runner.StatusStopped || syscall.Kill(run.PID, 0) != syscall.ESRCH {
		t.Errorf("after Close: executions %+v, process %d gone %v; want the run stopped", execs, run.PID, syscall.Kill(run.PID, 0) == syscall.ESRCH)
	}
}

// `airlock runs` reaches the runs of the running Airlock through its
// instance endpoint; with none running it says so.
func TestRunsCLI(t *testing.T) {
	rs := newRuns(t)
	script := rs.script(t, "steps:\n  - call: help\n")
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := cli.RunRuns(context.Background(), rs.dataDir, args, &out, &errOut)
		return out.String(), err
	}
	var errOut bytes.Buffer
	if err := cli.RunRuns(context.Background(), rs.dataDir, []string{"set-profile", "builder", "--template", "scripted", "--extra-arg", script}, io.Discard, &errOut); err != nil || errOut.Len() > 0 {
		t.Fatalf("set-profile: %v\n%s", err, errOut.String())
	}
	taskID := rs.task(t, teams.StatusInProgress)
	out, err := run("start", taskID, "--json")
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	id := between(out, `"id": "`, `"`)
	testutil.Eventually(t, 60*time.Second, func() bool {
		out, _ := run("list", taskID)
		return strings.Contains(out, id) && strings.Contains(out, "completed")
	}, "the run did not complete")
	// The table names the agent; the ids are in --json.
	if out, _ := run("list", taskID); !strings.Contains(out, " builder ") || strings.Contains(out, rs.worker.Agent.ID) {
		t.Errorf("list names the agent by id, not name:\n%s", out)
	}
	if out, _ := run("profile", "builder"); !strings.Contains(out, "agent: builder ("+rs.worker.Agent.ID+")") {
		t.Errorf("profile:\n%s", out)
	}
	out, err = run("log", id, "--tail", "3")
	if err != nil || !strings.Contains(out, "ended: completed") {
		t.Errorf("log: %v\n%s", err, out)
	}
	if _, err := run("stop", id); core.ErrorCode(err) != core.EConflict {
		t.Errorf("stop of an ended run: %v, want conflict", err)
	}
	if _, err := run("start", "tsk_none"); core.ErrorCode(err) != teams.ECodeTaskNotFound || !strings.Contains(err.Error(), "airlock tasks list") {
		t.Errorf("start of an unknown task: %v, want %s with a hint for a person", err, teams.ECodeTaskNotFound)
	}
	// settings: a value out of range is refused, not ignored (0 was).
	for _, arg := range []string{"--max-concurrent=0", "--max-attempts=0", "--backoff=-5", "--grace=0"} {
		if _, err := run("settings", arg); core.ErrorCode(err) != core.EInvalid {
			t.Errorf("settings %s: %v, want invalid", arg, err)
		}
	}
	if out, err := run("settings", "--max-attempts", "2", "--backoff", "0"); err != nil || !strings.Contains(out, "max attempts: 2") || !strings.Contains(out, "retry backoff: 0s") {
		t.Errorf("settings --max-attempts 2 --backoff 0: %v\n%s", err, out)
	}
	if out, err := run("templates"); err != nil || !strings.Contains(out, "claude-code") {
		t.Errorf("templates: %v\n%s", err, out)
	}
	// A program not installed: saved, with a warning (as on the profile
	// screen).
	errOut.Reset()
	if err := cli.RunRuns(context.Background(), rs.dataDir, []string{"set-profile", "builder", "--template", "custom", "--command", "no-such-agent-cli"}, io.Discard, &errOut); err != nil ||
		!strings.Contains(errOut.String(), "warning: ") || !strings.Contains(errOut.String(), "no-such-agent-cli") {
		t.Errorf("set-profile of a program not installed: %v, stderr %q; want it saved with a warning naming the program", err, errOut.String())
	}
	if out, err := run("profile", "builder"); err != nil || !strings.Contains(out, "no-such-agent-cli") {
		t.Errorf("the profile of a program not installed was not saved: %v\n%s", err, out)
	}
	var out2 bytes.Buffer
	if err := cli.RunRuns(context.Background(), t.TempDir(), []string{"list", taskID}, &out2, &errOut); core.ErrorCode(err) != core.EUnavailable {
		t.Errorf("runs without a running Airlock: %v, want unavailable", err)
	}
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i+len(from):]
	return s[:strings.Index(s, to)]
}

// waitRun waits for a run to end and returns it.
func waitRun(t *testing.T, rs *runs, id string) runner.Run {
	t.Helper()
	var run runner.Run
	testutil.Eventually(t, 60*time.Second, func() bool {
		var err error
		run, err = rs.in.API.Runs.Get(id)
		return err == nil && run.Status != runner.StatusRunning
	}, "run %s did not end", id)
	return run
}

func logText(t *testing.T, rs *runs, id string) string {
	t.Helper()
	c, err := rs.in.API.Runs.Log(id, runner.LogQuery{Tail: ptrInt(1000)})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(c.Lines, "\n")
}

func ptrInt(n int) *int { return &n }

// mcpStatus is the HTTP status of an MCP initialize with token.
func mcpStatus(t *testing.T, in *airlock.Instance, token string) int {
	t.Helper()
	return mcpInitialize(t, in.Info.MCPURL, token).StatusCode
}

// mcpInitialize sends an MCP initialize with token to url and returns the
// response (its body closed).
func mcpInitialize(t *testing.T, url, token string) *http.Response {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// With auto-run on, moving a task of an AI agent with a profile to in
// progress on the board starts its run, unattended: the scripted agent
// reports completion and the task ends done.
func TestAutoRunFinishesATaskUnattended(t *testing.T) {
	rs := newRuns(t)
	script := rs.script(t, `
steps:
  - call: report_completed
    args: {task_id: "${task_id}", result: success, summary: done unattended}
    expect: {contains: done}
`)
	if _, err := rs.in.API.Runs.SetProfile(rs.worker.Agent.ID, runner.Profile{Template: runner.TemplateScripted, ExtraArgs: []string{script}}); err != nil {
		t.Fatal(err)
	}
	set, err := rs.in.API.Runs.Settings()
	if err != nil {
		t.Fatal(err)
	}
	set.AutoRun = true
	if _, err := rs.in.API.Runs.SetSettings(set); err != nil {
		t.Fatal(err)
	}
	taskID := rs.task(t, teams.StatusTodo)
	if execs := rs.executions(t, taskID); len(execs) != 0 {
		t.Fatalf("a task in todo was run: %+v", execs)
	}
	if _, err := rs.in.API.Board.Move(taskID, teams.StatusInProgress, ""); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 60*time.Second, func() bool {
		d, err := rs.in.API.Board.Detail(taskID)
		return err == nil && d.Task.Status == teams.StatusDone
	}, "the task did not end done by itself")
	// The agent reported before its process exited: wait for the run's end.
	var execs []teams.Execution
	testutil.Eventually(t, 60*time.Second, func() bool {
		execs = rs.executions(t, taskID)
		return len(execs) == 1 && execs[0].Status != runner.StatusRunning
	}, "the run did not end")
	if execs[0].Status != runner.StatusCompleted {
		t.Errorf("executions = %+v, want one completed run", execs)
	}
}

// A start that is refused leaves the task where it was, and a done or
// cancelled task is refused at once, not run into a failure (found by a
// new-user test: a refused start moved the task to to-do, and a done
// task's run failed on invalid_status_transition).
func TestRefusedStartLeavesTheTask(t *testing.T) {
	rs := newRuns(t)
	backlog := rs.task(t, teams.StatusBacklog)
	if _, err := rs.in.API.Runs.Start(backlog); core.ErrorCode(err) != runner.ENoProfile {
		t.Fatalf("start without a run profile: %v, want %s", err, runner.ENoProfile)
	}
	if d, err := rs.in.API.Board.Detail(backlog); err != nil || d.Task.Status != teams.StatusBacklog {
		t.Errorf("a refused start moved the task: %v %s", err, d.Task.Status)
	}
	if _, err := rs.in.API.Runs.SetProfile(rs.worker.Agent.ID, runner.Profile{Template: runner.TemplateScripted, ExtraArgs: []string{rs.script(t, "steps: []\n")}, WorkDir: rs.work}); err != nil {
		t.Fatal(err)
	}
	for _, path := range [][]string{{teams.StatusInProgress, teams.StatusDone}, {teams.StatusCancelled}} {
		id := rs.task(t, teams.StatusTodo)
		for _, st := range path {
			if _, err := rs.in.API.Board.Move(id, st, ""); err != nil {
				t.Fatal(err)
			}
		}
		status := path[len(path)-1]
		if _, err := rs.in.API.Runs.Start(id); core.ErrorCode(err) != core.EInvalid || !strings.Contains(core.ErrorMessage(err), "a run works on an open task") {
			t.Errorf("start of a %s task: %v, want it refused", status, err)
		}
		if runs, _ := rs.in.API.Runs.List(id); len(runs) != 0 {
			t.Errorf("a %s task got runs: %+v", status, runs)
		}
	}
}

// A task that cannot start gets no run: one that is blocked, and one that
// waits on an open task (found by a new-user test: both started runs).
func TestNoRunForATaskThatCannotStart(t *testing.T) {
	rs := newRuns(t)
	if _, err := rs.in.API.Runs.SetProfile(rs.worker.Agent.ID, runner.Profile{Template: runner.TemplateScripted, ExtraArgs: []string{rs.script(t, "steps: []\n")}, WorkDir: rs.work}); err != nil {
		t.Fatal(err)
	}
	first := rs.task(t, teams.StatusTodo)
	waiting := rs.task(t, teams.StatusTodo)
	deps := []string{first}
	if _, err := rs.in.API.Board.Update(waiting, teams.TaskUpdate{DependsOn: &deps}); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.in.API.Runs.Start(waiting); core.ErrorCode(err) != core.EInvalid || !strings.Contains(core.ErrorMessage(err), "waits on 1 open task(s): "+first) {
		t.Errorf("start of a task waiting on an open one: %v, want it refused naming the task", err)
	}
	blocked := rs.task(t, teams.StatusInProgress)
	if _, err := rs.in.API.Board.Move(blocked, teams.StatusBlocked, "waiting for the API key"); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.in.API.Runs.Start(blocked); core.ErrorCode(err) != core.EInvalid || !strings.Contains(core.ErrorMessage(err), "is blocked: waiting for the API key") {
		t.Errorf("start of a blocked task: %v, want it refused with its reason", err)
	}
	for _, id := range []string{waiting, blocked} {
		if runs, _ := rs.in.API.Runs.List(id); len(runs) != 0 {
			t.Errorf("task %s got runs: %+v", id, runs)
		}
	}
}

// Suspending or deleting an agent, or taking it off the run's project,
// ends its live runs, saying why (found by a new-user test: their processes
// ran on, a deleted agent's under a bare id).
func TestRunsEndWithTheirAgent(t *testing.T) {
	rs := newRuns(t)
	// An agent that works until it is stopped, with no call that a
	// suspension could end first.
	if _, err := rs.in.API.Runs.SetProfile(rs.worker.Agent.ID, runner.Profile{Template: runner.TemplateCustom, Command: "/bin/sleep", Args: []string{"300"}, WorkDir: rs.work}); err != nil {
		t.Fatal(err)
	}
	start := func() runner.Run {
		run, err := rs.in.API.Runs.Start(rs.task(t, teams.StatusInProgress))
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	run := start()
	if _, err := rs.in.API.Agents.Suspend(rs.worker.Agent.ID); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, func() bool {
		got, err := rs.in.API.Runs.Get(run.ID)
		return err == nil && got.Status == runner.StatusStopped
	}, "the suspended agent's run did not end")
	got, _ := rs.in.API.Runs.Get(run.ID)
	if got.Reason != "stopped by Airlock, as its agent was suspended" || !gone(run.PID) {
		t.Errorf("run after its agent was suspended = %+v (process gone %v)", got, gone(run.PID))
	}

	if _, err := rs.in.API.Agents.Resume(rs.worker.Agent.ID); err != nil {
		t.Fatal(err)
	}
	// Taken off the run's project: its task is nobody's now, and the run
	// ends.
	run = start()
	if _, err := rs.in.API.Agents.Unassign(rs.worker.Agent.ID, rs.project.ID); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, func() bool {
		got, err := rs.in.API.Runs.Get(run.ID)
		return err == nil && got.Status == runner.StatusStopped
	}, "the run of the agent taken off its project did not end")
	if got, _ := rs.in.API.Runs.Get(run.ID); got.Reason != "stopped by Airlock, as its agent was taken off the project" || !gone(run.PID) {
		t.Errorf("run after its agent left the project = %+v (process gone %v)", got, gone(run.PID))
	}
	if _, err := rs.in.API.Agents.Assign(rs.worker.Agent.ID, rs.project.ID); err != nil {
		t.Fatal(err)
	}

	// Its task cancelled on the board: the run ends (found by a new-user
	// test: it worked on, and failed when it reported).
	run = start()
	if _, err := rs.in.API.Board.Move(run.TaskID, "cancelled", "not needed"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, func() bool {
		got, err := rs.in.API.Runs.Get(run.ID)
		return err == nil && got.Status == runner.StatusStopped
	}, "the run of the cancelled task did not end")
	if got, _ := rs.in.API.Runs.Get(run.ID); got.Reason != "stopped by Airlock, as its task was cancelled" || !gone(run.PID) {
		t.Errorf("run after its task was cancelled = %+v (process gone %v)", got, gone(run.PID))
	}

	run = start()
	// A deletion refused (an agent under it) leaves its runs alone (found
	// by a code review: they were stopped, and auto-run took them as
	// settled).
	manager := authz.KindManager
	if _, err := rs.in.API.Agents.Update(rs.worker.Agent.ID, authz.AgentUpdate{Kind: &manager}); err != nil {
		t.Fatal(err)
	}
	child, err := rs.in.API.Agents.Create(authz.AgentInput{Name: "apprentice", Parent: rs.worker.Agent.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.in.API.Agents.Delete(rs.worker.Agent.ID); core.ErrorCode(err) != core.EConflict {
		t.Fatalf("delete of an agent with one under it: %v, want conflict", err)
	}
	if got, _ := rs.in.API.Runs.Get(run.ID); got.Status != runner.StatusRunning || gone(run.PID) {
		t.Fatalf("run after a refused deletion = %+v (process gone %v)", got, gone(run.PID))
	}
	if err := rs.in.API.Agents.Delete(child.Agent.ID); err != nil {
		t.Fatal(err)
	}
	if err := rs.in.API.Agents.Delete(rs.worker.Agent.ID); err != nil {
		t.Fatal(err)
	}
	if !gone(run.PID) {
		t.Error("the deleted agent's run is still running")
	}
	if live, _ := rs.in.API.Runs.Live(); len(live) != 0 {
		t.Errorf("live runs after the agent's deletion: %+v", live)
	}
	// Its runs stay in the task's history, this one stopped.
	testutil.Eventually(t, 30*time.Second, func() bool {
		got, err := rs.in.API.Runs.Get(run.ID)
		return err == nil && got.Status == runner.StatusStopped
	}, "the deleted agent's run is not in the history, stopped")
	if execs := rs.executions(t, run.TaskID); !slices.ContainsFunc(execs, func(e teams.Execution) bool { return e.ID == run.ID && e.AgentID == rs.worker.Agent.ID }) {
		t.Errorf("the task's executions after its agent was deleted: %+v, want %s kept", execs, run.ID)
	}
}

// gone reports whether process pid has ended (signal 0 finds nothing).
func gone(pid int) bool { return pid == 0 || syscall.Kill(pid, 0) != nil }
