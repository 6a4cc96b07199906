package runner_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// echoArgs is a fake agent CLI: it prints its arguments, the variables a
// run may or may not see, its folder and the run's MCP config.
const echoArgs = `for a in "$@"; do echo "arg=$a"; done
echo "AIRLOCK_TOKEN=${AIRLOCK_TOKEN:-unset}"
echo "AIRLOCK_DATA_DIR=${AIRLOCK_DATA_DIR:-unset}"
echo "AIRLOCK_RUN_ID=${AIRLOCK_RUN_ID:-unset}"
echo "GEMINI=${GEMINI_CLI_SYSTEM_SETTINGS_PATH:-unset}"
echo "K=${K:-unset}"
echo "pwd=$(pwd)"
echo "config=$(tr -d '\n' < "$AIRLOCK_MCP_CONFIG")"
echo "mode=$(stat -c %a "$AIRLOCK_MCP_CONFIG")"`

// Each built-in template launches its CLI with the arguments, environment
// and per-run MCP config it documents: the run's own token (never the
// owner's, which is in Airlock's environment), the model only when one is
// set, extra arguments where the template puts them.
func TestTemplatesLaunchAsDocumented(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	fake := f.script(t, "fake-cli", echoArgs)
	f.task("tsk_1", "ag_ann", "todo")
	for _, tc := range []struct {
		name     string
		profile  runner.Profile
		wantArgs []string
		wantEnv  map[string]string // variable → value ("" means the per-run value checked below)
		gemini   bool
	}{
		{
			name:    "claude code with a model",
			profile: runner.Profile{Template: runner.TemplateClaudeCode, Command: fake, Model: "opus", ExtraArgs: []string{"--verbose"}, Prompt: "do {{task_id}}: {{task_title}}"},
			wantArgs: []string{"-p", "do tsk_1: Fix the login page", "--mcp-config", "<CONFIG>", "--strict-mcp-config",
				"--allowedTools", "mcp__airlock", "--model", "opus", "--verbose"},
			wantEnv: map[string]string{"AIRLOCK_TOKEN": "unset", "GEMINI": "unset"},
		},
		{
			name:    "claude code without a model",
			profile: runner.Profile{Template: runner.TemplateClaudeCode, Command: fake, Prompt: "go"},
			wantArgs: []string{"-p", "go", "--mcp-config", "<CONFIG>", "--strict-mcp-config",
				"--allowedTools", "mcp__airlock"},
			wantEnv: map[string]string{"AIRLOCK_TOKEN": "unset"},
		},
		{
			name:    "codex",
			profile: runner.Profile{Template: runner.TemplateCodex, Command: fake, Model: "gpt-5", Prompt: "go {{project_id}}"},
			wantArgs: []string{"exec", "-c", `mcp_servers.airlock.url="http://127.0.0.1:1/mcp?project=prj_1&purpose=task"`,
				"-c", `mcp_servers.airlock.bearer_token_env_var="AIRLOCK_TOKEN"`, "--model", "gpt-5", "go prj_1"},
			wantEnv: map[string]string{"AIRLOCK_TOKEN": "<TOKEN>"},
		},
		{
			name:     "gemini",
			profile:  runner.Profile{Template: runner.TemplateGemini, Command: fake, Prompt: "go", Env: map[string]string{"K": "{{agent_name}}"}},
			wantArgs: []string{"-p", "go"},
			wantEnv:  map[string]string{"AIRLOCK_TOKEN": "unset", "GEMINI": "<CONFIG>", "K": "ann"},
			gemini:   true,
		},
		{
			name:    "scripted",
			profile: runner.Profile{Template: runner.TemplateScripted, Command: fake, ExtraArgs: []string{"/scripts/s.yaml"}},
			wantArgs: []string{"agent-script", "--mcp-config", "<CONFIG>", "--var", "task_id=tsk_1", "--var", "project_id=prj_1",
				"--var", "run_id=<RUN>", "--var", "agent_id=ag_ann", "/scripts/s.yaml"},
		},
		{
			name:     "custom",
			profile:  runner.Profile{Template: runner.TemplateCustom, Command: fake, Args: []string{"--cfg={{mcp_config}}", "{{workdir}}"}, ExtraArgs: []string{"x"}},
			wantArgs: []string{"--cfg=<CONFIG>", "<WORKDIR>", "x"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.profile
			p.AgentID = "ag_ann"
			f.profile(t, p)
			run, err := f.r.Start("tsk_1")
			if err != nil {
				t.Fatal(err)
			}
			run = f.ended(t, run.ID)
			if run.Status != runner.StatusCompleted || run.ExitCode == nil || *run.ExitCode != 0 {
				t.Fatalf("run = %+v, want completed with exit code 0\n%s", run, strings.Join(f.logLines(t, run.ID), "\n"))
			}
			issued, released := f.tokens.counts()
			token := f.tokens.issued[issued-1]
			if released != issued {
				t.Errorf("tokens issued %d, released %d: a run's token is released when it ends", issued, released)
			}
			var args []string
			vals := map[string]string{}
			for _, l := range f.logLines(t, run.ID) {
				if a, ok := strings.CutPrefix(l, "arg="); ok {
					args = append(args, a)
				} else if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "[airlock]") {
					vals[k] = v
				}
			}
			cfgPath := filepath.Join(f.runsDir, run.ID, "mcp.json")
			if tc.gemini {
				cfgPath = filepath.Join(f.runsDir, run.ID, "settings.json")
			}
			repl := strings.NewReplacer("<CONFIG>", cfgPath, "<RUN>", run.ID, "<WORKDIR>", f.root, "<TOKEN>", token)
			want := make([]string, len(tc.wantArgs))
			for i, a := range tc.wantArgs {
				want[i] = repl.Replace(a)
			}
			if diff := cmp.Diff(want, args); diff != "" {
				t.Errorf("arguments (-want +got):\n%s", diff)
			}
			for k, v := range tc.wantEnv {
				if got := vals[k]; got != repl.Replace(v) {
					t.Errorf("%s = %q, want %q", k, got, repl.Replace(v))
				}
			}
			if vals["AIRLOCK_DATA_DIR"] != "unset" || vals["AIRLOCK_RUN_ID"] != run.ID || vals["pwd"] != f.root {
				t.Errorf("environment and folder: %v", vals)
			}
			var cfg struct {
				MCPServers map[string]struct {
					Type, URL, HTTPURL string
					Headers            map[string]string
					Trust              bool
				}
			}
			if err := json.Unmarshal([]byte(vals["config"]), &cfg); err != nil {
				t.Fatalf("config %q: %v", vals["config"], err)
			}
			srv := cfg.MCPServers["airlock"]
			url := srv.URL
			if tc.gemini {
				url = srv.HTTPURL
				if !srv.Trust {
					t.Error("the Gemini settings do not trust Airlock (Gemini would ask as well)")
				}
			}
			if url != "http://127.0.0.1:1/mcp?project=prj_1&purpose=task" || srv.Headers["Authorization"] != "Bearer "+token {
				t.Errorf("the MCP config = %+v, want Airlock's URL and the run's token %s", srv, token)
			}
			if vals["mode"] != "600" {
				t.Errorf("the MCP config's mode is %s, want 600", vals["mode"])
			}
			if strings.Contains(strings.Join(f.logLines(t, run.ID), "\n"), ownerSecret) {
				t.Error("the owner's token reached the run")
			}
			if _, err := os.Stat(filepath.Join(f.runsDir, run.ID)); !os.IsNotExist(err) {
				t.Errorf("the run's folder (with its MCP config) is still there after the run: %v", err)
			}
		})
	}
}

// What is wrong is refused before anything is launched: no execution
// record, no process, no run folder, no token issued.
func TestRefusedBeforeLaunch(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	ok := f.script(t, "ok", "exit 0")
	outside := t.TempDir()
	link := filepath.Join(f.root, "escape")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(f.bin, "not-exec")
	os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644)
	f.task("tsk_ann", "ag_ann", "todo")
	f.task("tsk_pat", "ag_pat", "todo")
	f.task("tsk_sue", "ag_sue", "todo")
	f.task("tsk_tom", "ag_tom", "todo")
	f.task("tsk_nobody", "", "todo")
	for _, tc := range []struct {
		name    string
		task    string
		profile *runner.Profile // stored as is, past SetProfile's checks
		code    string
	}{
		{"unknown placeholder in the extra arguments", "tsk_ann", &runner.Profile{Template: runner.TemplateClaudeCode, Command: ok, ExtraArgs: []string{"{{secret}}"}}, runner.EUnknownPlaceholder},
		{"unknown placeholder in the prompt", "tsk_ann", &runner.Profile{Template: runner.TemplateClaudeCode, Command: ok, Prompt: "do {{task}}"}, runner.EUnknownPlaceholder},
		{"unknown placeholder in the environment", "tsk_ann", &runner.Profile{Template: runner.TemplateCodex, Command: ok, Env: map[string]string{"X": "{{token}}"}}, runner.EUnknownPlaceholder},
		{"unclosed placeholder", "tsk_ann", &runner.Profile{Template: runner.TemplateCustom, Command: ok, Args: []string{"{{task_id"}}, runner.EUnknownPlaceholder},
		{"list placeholder inside an argument", "tsk_ann", &runner.Profile{Template: runner.TemplateCustom, Command: ok, Args: []string{"-x{{extra_args}}"}}, runner.EUnknownPlaceholder},
		{"unknown template", "tsk_ann", &runner.Profile{Template: "aider", Command: ok}, runner.EUnknownTemplate},
		{"working directory outside the roots", "tsk_ann", &runner.Profile{Template: runner.TemplateCustom, Command: ok, WorkDir: outside}, runner.EWorkDirOutsideRoots},
		{"working directory escaping by a link", "tsk_ann", &runner.Profile{Template: runner.TemplateCustom, Command: ok, WorkDir: link}, runner.EWorkDirOutsideRoots},
		{"working directory missing", "tsk_ann", &runner.Profile{Template: runner.TemplateCustom, Command: ok, WorkDir: filepath.Join(f.root, "nope")}, core.EInvalid},
		{"relative working directory", "tsk_ann", &runner.Profile{Template: runner.TemplateCustom, Command: ok, WorkDir: "work"}, core.EInvalid},
		{"command not in PATH", "tsk_ann", &runner.Profile{Template: runner.TemplateClaudeCode, Command: "no-such-agent-cli"}, runner.ECommandNotFound},
		{"command path missing", "tsk_ann", &runner.Profile{Template: runner.TemplateCustom, Command: "/nonexistent/agent"}, runner.ECommandNotFound},
		{"command not executable", "tsk_ann", &runner.Profile{Template: runner.TemplateCustom, Command: notExec}, runner.ECommandNotFound},
		{"airlock binary unknown", "tsk_ann", &runner.Profile{Template: runner.TemplateScripted, ExtraArgs: []string{"s.yaml"}}, runner.ECommandNotFound},
		{"custom without a command", "tsk_ann", &runner.Profile{Template: runner.TemplateCustom}, core.EInvalid},
		{"arguments for a built-in", "tsk_ann", &runner.Profile{Template: runner.TemplateGemini, Command: ok, Args: []string{"x"}}, core.EInvalid},
		{"scripted without its script", "tsk_ann", &runner.Profile{Template: runner.TemplateScripted, Command: ok}, core.EInvalid},
		{"AIRLOCK_ variable in the profile", "tsk_ann", &runner.Profile{Template: runner.TemplateCustom, Command: ok, Env: map[string]string{"AIRLOCK_TOKEN": "x"}}, core.EInvalid},
		{"no profile", "tsk_ann", nil, runner.ENoProfile},
		{"agent without a token", "tsk_tom", &runner.Profile{Template: runner.TemplateCustom, Command: ok}, runner.ENoToken},
		{"a person", "tsk_pat", &runner.Profile{Template: runner.TemplateCustom, Command: ok}, core.EInvalid},
		{"a suspended agent", "tsk_sue", &runner.Profile{Template: runner.TemplateCustom, Command: ok}, core.EForbidden},
		{"an unassigned task", "tsk_nobody", nil, core.EInvalid},
		{"an unknown task", "tsk_none", nil, core.ENotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk, _ := f.board.Task(tc.task)
			f.st.DeleteProfile(tk.AssigneeID)
			if tc.profile != nil {
				p := *tc.profile
				p.AgentID = tk.AssigneeID
				if err := f.st.SaveProfile(p); err != nil {
					t.Fatal(err)
				}
			}
			issued, _ := f.tokens.counts()
			_, err := f.r.Start(tc.task)
			if got := core.ErrorCode(err); got != tc.code {
				t.Fatalf("Start = %v (code %q), want code %q", err, got, tc.code)
			}
			var ce *core.Error
			if e, ok := err.(*core.Error); !ok || e.Message == "" {
				t.Errorf("the refusal is not a *core.Error with a message: %#v", err)
			} else {
				ce = e
			}
			if execs, _ := f.board.TaskExecutions(tc.task); len(execs) != 0 {
				t.Errorf("an execution was recorded for a refused run: %+v (%v)", execs, ce)
			}
			if now, _ := f.tokens.counts(); now != issued {
				t.Error("a token was issued for a refused run")
			}
			if entries, _ := os.ReadDir(f.runsDir); len(entries) != 0 {
				t.Errorf("run folders were made: %v", entries)
			}
			// SetProfile refuses the same profiles up front.
			if tc.profile != nil && tc.code != runner.ENoToken && tc.code != runner.ECommandNotFound && tk.AssigneeID == "ag_ann" {
				p := *tc.profile
				if _, err := f.r.SetProfile("ag_ann", p); err == nil {
					t.Errorf("SetProfile accepted %+v", p)
				}
			}
		})
	}
}

// A profile whose program is missing is saved, and CheckCommand says why
// its runs will not start; the program is looked for as a run would, in
// the PATH of the run's environment (found by a new-user test: a profile
// for a CLI that was not installed was accepted without a word).
func TestCheckCommandWarnsOfAMissingProgram(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	missing := runner.Profile{AgentID: "ag_ann", Template: runner.TemplateClaudeCode, Command: "no-such-agent-cli"}
	if _, err := f.r.SetProfile("ag_ann", missing); err != nil {
		t.Fatalf("SetProfile refused a profile whose program is missing: %v; want it saved (a warning only)", err)
	}
	got, err := f.r.CheckCommand(missing)
	want := runner.CommandCheck{Warning: `the command "no-such-agent-cli" was not found in PATH`,
		Hint: "install it, or give its full path as the command of the agent's run profile"}
	if err != nil || got != want {
		t.Errorf("CheckCommand(missing) = %+v, %v; want %+v", got, err, want)
	}

	claude := f.script(t, "claude", "exit 0")
	found := runner.Profile{AgentID: "ag_ann", Template: runner.TemplateClaudeCode, Env: map[string]string{"PATH": f.bin}}
	if got, err := f.r.CheckCommand(found); err != nil || got != (runner.CommandCheck{Path: claude}) {
		t.Errorf("CheckCommand(claude in the profile's PATH) = %+v, %v; want path %s", got, err, claude)
	}

	if _, err := f.r.CheckCommand(runner.Profile{Template: runner.TemplateCustom}); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("CheckCommand(custom without a command) = %v, want the profile refused as invalid", err)
	}
}

// A run that ends with a failure status is failed with the status as its
// reason; one whose program cannot be executed fails at once with the
// reason in the error, the record and the log.
func TestFailedRuns(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	f.task("tsk_1", "ag_ann", "todo")

	f.profile(t, runner.Profile{AgentID: "ag_ann", Template: runner.TemplateCustom, Command: f.script(t, "fail", "echo about to fail >&2; exit 3")})
	run, err := f.r.Start("tsk_1")
	if err != nil {
		t.Fatal(err)
	}
	run = f.ended(t, run.ID)
	if run.Status != runner.StatusFailed || run.ExitCode == nil || *run.ExitCode != 3 || run.Reason != "exit status 3" {
		t.Errorf("run = %+v, want failed, exit code 3, reason 'exit status 3'", run)
	}
	if log := f.logLines(t, run.ID); !slices.Contains(log, "about to fail") {
		t.Errorf("stderr is not in the log: %q", log)
	}
	// The last line says how the run ended, once (it said "exit status 3"
	// twice; found by a new-user test).
	if log := f.logLines(t, run.ID); len(log) == 0 || !strings.HasSuffix(log[len(log)-1], "ended: failed (exit status 3)") {
		t.Errorf("the log's last line: %q", log)
	}

	garbage := filepath.Join(f.bin, "garbage")
	os.WriteFile(garbage, []byte{0, 1, 2, 3}, 0o755)
	f.profile(t, runner.Profile{AgentID: "ag_ann", Template: runner.TemplateCustom, Command: garbage})
	run, err = f.r.Start("tsk_1")
	if core.ErrorCode(err) != runner.ERunFailed || !strings.Contains(core.ErrorMessage(err), "exec format error") {
		t.Fatalf("Start of a program that cannot run = %v, want %s naming the cause", err, runner.ERunFailed)
	}
	if run.Status != runner.StatusFailed || !strings.Contains(run.Reason, "could not start") || run.ExitCode != nil {
		t.Errorf("run = %+v, want failed at once with its reason and no exit code", run)
	}
	if log := strings.Join(f.logLines(t, run.ID), "\n"); !strings.Contains(log, "exec format error") {
		t.Errorf("the log does not say why: %s", log)
	}
	if issued, released := f.tokens.counts(); issued != released {
		t.Errorf("tokens issued %d, released %d", issued, released)
	}
	if list, _ := f.r.List("tsk_1"); len(list) != 2 || list[0].ID != run.ID {
		t.Errorf("runs of the task = %+v, want both, newest first", list)
	}
}

// Stop ends the whole process group — SIGTERM, then SIGKILL for a program
// that ignores it — and the run is stopped, with its reason.
func TestStopEndsTheProcessGroup(t *testing.T) {
	s := runner.DefaultSettings()
	s.StopGraceSeconds = 1
	f := newFixture(t, fixtureOpts{settings: &s})
	f.task("tsk_1", "ag_ann", "in_progress")
	f.profile(t, runner.Profile{AgentID: "ag_ann", Template: runner.TemplateCustom,
		Command: f.script(t, "stubborn", `trap "" TERM; sleep 300 & echo "child=$!"; setsid sleep 301 & echo "away=$!"; wait; wait`)})
	run, err := f.r.Start("tsk_1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.r.Start("tsk_1"); core.ErrorCode(err) != core.EConflict {
		t.Errorf("a second run of a running task: %v, want conflict", err)
	}
	f.task("tsk_2", "ag_ann", "todo")
	if _, err := f.r.Start("tsk_2"); core.ErrorCode(err) != runner.EAgentBusy {
		t.Errorf("a second run of a busy agent: %v, want %s", err, runner.EAgentBusy)
	}
	// away left the process group (setsid): stopping the run ends it too
	// (found by a new-user test).
	child, away := 0, 0
	testutil.Eventually(t, 30*time.Second, func() bool {
		for _, l := range f.logLines(t, run.ID) {
			if v, ok := strings.CutPrefix(l, "child="); ok {
				child, _ = strconv.Atoi(v)
			}
			if v, ok := strings.CutPrefix(l, "away="); ok {
				away, _ = strconv.Atoi(v)
			}
		}
		return child > 0 && away > 0
	}, "the run never started its children")
	if live := f.r.Live(); len(live) != 1 || live[0].ID != run.ID || live[0].PID != run.PID {
		t.Errorf("live runs = %+v, want the one", live)
	}
	stopped, err := f.r.Stop(run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stopped.Status != runner.StatusStopped || stopped.Reason != "stopped by the user" || stopped.ExitCode == nil || *stopped.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("stopped run = %+v, want stopped by the user, killed (137) after ignoring SIGTERM", stopped)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return gone(run.PID) && gone(child) && gone(away) },
		"the run's processes are still there: leader %d gone %v, child %d gone %v, setsid child %d gone %v",
		run.PID, gone(run.PID), child, gone(child), away, gone(away))
	if _, err := f.r.Stop(run.ID); core.ErrorCode(err) != core.EConflict {
		t.Errorf("stopping an ended run: %v, want conflict", err)
	}
	if _, err := f.r.Stop("exec_none"); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("stopping an unknown run: %v, want not_found", err)
	}
	if len(f.r.Live()) != 0 {
		t.Error("the stopped run is still live")
	}
}

// Output reaches the log with timestamps and the UI in batches: with a
// long interval, every line of a run comes in one event, before the run's
// last status.
func TestOutputIsBatched(t *testing.T) {
	f := newFixture(t, fixtureOpts{interval: time.Hour})
	f.task("tsk_1", "ag_ann", "todo")
	f.profile(t, runner.Profile{AgentID: "ag_ann", Template: runner.TemplateCustom,
		Command: f.script(t, "chatty", `i=0; while [ $i -lt 200 ]; do echo "line $i"; i=$((i+1)); done; printf 'no newline'`)})
	run, err := f.r.Start("tsk_1")
	if err != nil {
		t.Fatal(err)
	}
	run = f.ended(t, run.ID)
	outs := f.events.Events(runner.EventRunOutput)
	if len(outs) != 1 {
		t.Fatalf("run:output events = %d, want 1 batch", len(outs))
	}
	batch := outs[0].Payload.(runner.RunOutput)
	var got []string
	for _, l := range batch.Lines {
		if !strings.HasPrefix(l, "[") || !strings.Contains(l, "Z] ") {
			t.Fatalf("line without a timestamp: %q", l)
		}
		if _, text, _ := strings.Cut(l, "Z] "); !strings.HasPrefix(text, "[airlock]") {
			got = append(got, text)
		}
	}
	if len(got) != 201 || got[0] != "line 0" || got[199] != "line 199" || got[200] != "no newline" {
		t.Errorf("the batch has %d lines of output (%q ... %q), want 201 ending with the unfinished one", len(got), got[0], got[len(got)-1])
	}
	if batch.RunID != run.ID || batch.TaskID != "tsk_1" {
		t.Errorf("batch = %s/%s, want %s/tsk_1", batch.RunID, batch.TaskID, run.ID)
	}
	names := eventsOf(f.events, runner.EventRunOutput, runner.EventRunStatus)
	if diff := cmp.Diff([]string{"run:status running", "run:output", "run:status completed"}, names); diff != "" {
		t.Errorf("events in order (-want +got):\n%s", diff)
	}

	// The log reads by tail and by offset.
	c, err := f.r.Log(run.ID, runner.LogQuery{Tail: ptr(2)})
	if err != nil || len(c.Lines) != 2 || !c.Truncated || c.Offset != c.TotalLines-2 || !strings.Contains(c.Lines[1], "ended: completed") {
		t.Errorf("tail 2 = %+v %v", c, err)
	}
	raw, _ := os.ReadFile(run.LogPath)
	all := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	c, err = f.r.Log(run.ID, runner.LogQuery{Offset: ptr(3)})
	if err != nil || c.Offset != 3 || c.TotalLines != len(all) || !c.Truncated || !cmp.Equal(c.Lines, all[3:3+runner.DefaultLogLines]) {
		t.Errorf("offset 3 = %d lines from %d of %d, %v; want lines 3 to %d of the file's %d", len(c.Lines), c.Offset, c.TotalLines, err, 3+runner.DefaultLogLines, len(all))
	}
	for _, q := range []runner.LogQuery{{Tail: ptr(0)}, {Tail: ptr(1), Offset: ptr(1)}, {Offset: ptr(-1)}} {
		if _, err := f.r.Log(run.ID, q); core.ErrorCode(err) != core.EInvalid {
			t.Errorf("Log(%+v) = %v, want invalid", q, err)
		}
	}
}

// Each batch says where its lines are in the log file: a view that read
// the file while the batch was on its way skips what it has. A line is in
// the file at once and in an event only later (found by a new-user test:
// the live view showed Airlock's first lines twice).
func TestOutputBatchesSayWhereTheirLinesAreInTheLog(t *testing.T) {
	f := newFixture(t, fixtureOpts{interval: time.Millisecond})
	f.task("tsk_1", "ag_ann", "todo")
	f.profile(t, runner.Profile{AgentID: "ag_ann", Template: runner.TemplateCustom,
		Command: f.script(t, "chatty", `i=0; while [ $i -lt 300 ]; do echo "line $i"; i=$((i+1)); done`)})
	run, err := f.r.Start("tsk_1")
	if err != nil {
		t.Fatal(err)
	}
	run = f.ended(t, run.ID)
	raw, err := os.ReadFile(run.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	file := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	next := 0
	for _, e := range f.events.Events(runner.EventRunOutput) {
		b := e.Payload.(runner.RunOutput)
		if b.First != next+b.Dropped {
			t.Errorf("a batch starts at line %d after %d dropped, want %d (the line after the last batch's)", b.First, b.Dropped, next+b.Dropped)
		}
		for i, l := range b.Lines {
			if at := b.First + i; at >= len(file) || file[at] != l {
				t.Fatalf("line %d of the batch from %d is %q, not line %d of the log file", i, b.First, l, at)
			}
		}
		next = b.First + len(b.Lines)
	}
	if next != len(file) {
		t.Errorf("the batches end at line %d, the log file has %d", next, len(file))
	}
}

// eventsOf lists the recorded events of the given names in order, a
// status with its run's status.
func eventsOf(rec *recorder, names ...string) []string {
	var out []string
	for _, e := range rec.all() {
		if !slices.Contains(names, e.Name) {
			continue
		}
		if r, ok := e.Payload.(runner.Run); ok {
			out = append(out, e.Name+" "+r.Status)
		} else {
			out = append(out, e.Name)
		}
	}
	return out
}

// With auto-run on, a task moved to in progress gets a run; a failing one
// is retried with backoff up to MaxAttempts and then left, with the reason
// on the last run; a new stay in progress starts over; a completed run is
// not repeated.
func TestAutoRunRetriesAreCapped(t *testing.T) {
	s := runner.DefaultSettings()
	s.AutoRun, s.MaxAttempts, s.RetryBackoffSeconds = true, 2, 0
	f := newFixture(t, fixtureOpts{settings: &s})
	f.profile(t, runner.Profile{AgentID: "ag_ann", Template: runner.TemplateCustom, Command: f.script(t, "fail", "exit 1")})
	f.task("tsk_1", "ag_ann", "todo")
	f.r.Reconcile()
	if execs, _ := f.board.TaskExecutions("tsk_1"); len(execs) != 0 {
		t.Fatalf("auto-run ran a task that is not in progress: %+v", execs)
	}
	f.board.SetStatus("tsk_1", runner.TaskInProgress)
	settled := func(n int) func() bool {
		return func() bool {
			execs, _ := f.board.TaskExecutions("tsk_1")
			if len(execs) != n || len(f.r.Live()) != 0 {
				return false
			}
			for _, e := range execs {
				if e.Status == runner.StatusRunning {
					return false
				}
			}
			return true
		}
	}
	testutil.Eventually(t, 30*time.Second, settled(2), "auto-run did not make 2 attempts")
	f.r.Reconcile() // nothing more may start, however often it is asked
	f.r.Reconcile()
	runs, _ := f.r.List("tsk_1")
	if len(runs) != 2 {
		t.Fatalf("runs = %d after the cap, want 2", len(runs))
	}
	if got := f.r.AutoStates().Tasks; len(got) != 1 || got[0].TaskID != "tsk_1" || got[0].State != runner.AutoGaveUp || got[0].Failures != 2 {
		t.Errorf("auto states after the cap = %+v, want tsk_1 given up after 2", got)
	}
	if runs[0].Attempt != 2 || runs[1].Attempt != 1 || runs[0].Trigger != runner.TriggerAuto {
		t.Errorf("attempts = %d, %d (%s), want 2, 1 (auto)", runs[0].Attempt, runs[1].Attempt, runs[0].Trigger)
	}
	if !strings.Contains(runs[0].Reason, "auto-run gave up after 2 failed attempts") || !strings.Contains(runs[1].Reason, "tries again") {
		t.Errorf("reasons = %q, %q; want the retry, then giving up", runs[1].Reason, runs[0].Reason)
	}

	// A new stay in progress, with a command that works: one run, kept.
	f.profile(t, runner.Profile{AgentID: "ag_ann", Template: runner.TemplateCustom, Command: f.script(t, "ok", "exit 0")})
	f.board.SetStatus("tsk_1", "blocked")
	f.board.SetStatus("tsk_1", runner.TaskInProgress)
	testutil.Eventually(t, 30*time.Second, settled(3), "auto-run did not start over in a new stay in progress")
	f.r.Reconcile()
	f.r.Reconcile()
	if execs, _ := f.board.TaskExecutions("tsk_1"); len(execs) != 3 || execs[0].Status != runner.StatusCompleted {
		t.Errorf("executions = %+v, want a third that completed and no more", execs)
	}
	if got := f.r.AutoStates().Tasks; len(got) != 0 {
		t.Errorf("auto states after a run completed = %+v, want none", got)
	}
}

// What auto-run holds back is told, with an event when it changes: a task
// waiting for a free place or for its agent, one whose retry comes later,
// one given up on (found by a new-user test: such a task looked like any
// task in progress on the Board).
func TestAutoRunSaysWhatItHoldsBack(t *testing.T) {
	s := runner.DefaultSettings()
	s.AutoRun, s.MaxConcurrent, s.MaxAttempts, s.RetryBackoffSeconds, s.StopGraceSeconds = true, 2, 2, 3600, 1
	f := newFixture(t, fixtureOpts{settings: &s})
	wait := f.script(t, "wait", "while [ ! -e \"$1\" ]; do sleep 0.05; done")
	release := filepath.Join(t.TempDir(), "release")
	f.profile(t, runner.Profile{AgentID: "ag_ann", Template: runner.TemplateCustom, Command: wait, Args: []string{release}})
	f.profile(t, runner.Profile{AgentID: "ag_ben", Template: runner.TemplateCustom, Command: f.script(t, "fail", "exit 1")})
	f.task("tsk_a1", "ag_ann", runner.TaskInProgress)
	f.task("tsk_a2", "ag_ann", runner.TaskInProgress)
	f.task("tsk_b", "ag_ben", runner.TaskInProgress)
	state := func(id string) runner.AutoState {
		for _, a := range f.r.AutoStates().Tasks {
			if a.TaskID == id {
				return a
			}
		}
		return runner.AutoState{}
	}
	testutil.Eventually(t, 30*time.Second, func() bool {
		f.r.Reconcile()
		return state("tsk_b").State == runner.AutoRetry && state("tsk_a2").State == runner.AutoAgentBusy
	}, "auto-run does not say that tsk_b retries later and tsk_a2 waits for ann: %+v", f.r.AutoStates())
	if b := state("tsk_b"); b.Failures != 1 || b.MaxAttempts != 2 || b.At == nil || b.At.Before(time.Now().Add(50*time.Minute)) {
		t.Errorf("retry state = %+v, want 1 of 2 failed and the next attempt in about an hour", b)
	}
	if a := state("tsk_a1"); a.State != "" {
		t.Errorf("the running task is held back: %+v", a)
	}
	if len(f.events.Events(runner.EventRunAuto)) == 0 {
		t.Error("no run:auto event told the UI")
	}

	// A full runner: the next task waits for a free place.
	s.MaxConcurrent = 1
	if _, err := f.r.SetSettings(s); err != nil {
		t.Fatal(err)
	}
	f.profile(t, runner.Profile{AgentID: "ag_ben", Template: runner.TemplateCustom, Command: wait, Args: []string{release}})
	f.task("tsk_c", "ag_ben", runner.TaskInProgress)
	testutil.Eventually(t, 30*time.Second, func() bool {
		f.r.Reconcile()
		c := state("tsk_c")
		return c.State == runner.AutoWaiting && c.MaxConcurrent == 1
	}, "tsk_c does not wait for a free place: %+v", f.r.AutoStates())

	// Auto-run off: it holds nothing back.
	s.AutoRun = false
	if _, err := f.r.SetSettings(s); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, func() bool { return len(f.r.AutoStates().Tasks) == 0 }, "auto-run is off but still holds tasks: %+v", f.r.AutoStates())
	os.WriteFile(release, nil, 0o600)
}

// Auto-run keeps to MaxConcurrent, never runs people, records a refusal
// (here: no token) as a failed attempt with its reason, and starts the
// next task when a run ends.
func TestAutoRunConcurrencyAndRefusals(t *testing.T) {
	s := runner.DefaultSettings()
	s.AutoRun, s.MaxConcurrent, s.MaxAttempts, s.RetryBackoffSeconds, s.StopGraceSeconds = true, 1, 1, 0, 1
	f := newFixture(t, fixtureOpts{settings: &s})
	wait := f.script(t, "wait", "while [ ! -e \"$1\" ]; do sleep 0.05; done")
	release := filepath.Join(t.TempDir(), "release")
	for _, ag := range []string{"ag_ann", "ag_ben", "ag_tom"} {
		f.profile(t, runner.Profile{AgentID: ag, Template: runner.TemplateCustom, Command: wait, Args: []string{release}})
	}
	f.task("tsk_a", "ag_ann", runner.TaskInProgress)
	f.task("tsk_b", "ag_ben", runner.TaskInProgress)
	f.task("tsk_p", "ag_pat", runner.TaskInProgress)
	testutil.Eventually(t, 30*time.Second, func() bool { return len(f.r.Live()) == 1 }, "no auto run started")
	f.r.Reconcile()
	if live := f.r.Live(); len(live) != 1 {
		t.Fatalf("live runs = %d, want MaxConcurrent 1", len(live))
	}
	os.WriteFile(release, nil, 0o600)
	testutil.Eventually(t, 30*time.Second, func() bool {
		a, _ := f.board.TaskExecutions("tsk_a")
		b, _ := f.board.TaskExecutions("tsk_b")
		return len(a) == 1 && len(b) == 1 && a[0].Status == runner.StatusCompleted && b[0].Status == runner.StatusCompleted
	}, "both tasks should have run, one after the other")
	if p, _ := f.board.TaskExecutions("tsk_p"); len(p) != 0 {
		t.Errorf("a person's task was run: %+v", p)
	}

	f.task("tsk_t", "ag_tom", runner.TaskInProgress)
	testutil.Eventually(t, 30*time.Second, func() bool {
		runs, _ := f.r.List("tsk_t")
		return len(runs) == 1
	}, "the refused auto run was not recorded")
	runs, _ := f.r.List("tsk_t")
	if runs[0].Status != runner.StatusFailed || !strings.Contains(runs[0].Reason, "has no connection token") || !strings.Contains(runs[0].Reason, "gave up after 1") {
		t.Errorf("refused run = %+v, want failed with the reason and the end of retries", runs[0])
	}
	if log := strings.Join(f.logLines(t, runs[0].ID), "\n"); !strings.Contains(log, "has no connection token") {
		t.Errorf("the refused run's log does not say why: %s", log)
	}
	f.r.Reconcile()
	if runs, _ := f.r.List("tsk_t"); len(runs) != 1 {
		t.Errorf("the refused task was tried again past the cap: %d runs", len(runs))
	}
}

// A run an earlier Airlock left alive (it was killed) is ended as failed
// when the runner starts, and its process group killed, but only when the
// pid is still that run's process.
func TestLeftoverRunsAreEnded(t *testing.T) {
	dbFix := newFixture(t, fixtureOpts{})
	f := dbFix
	f.task("tsk_1", "ag_ann", "todo")
	exec1, _ := f.board.StartExecution("tsk_1", "ag_ann")
	exec2, _ := f.board.StartExecution("tsk_1", "ag_ann")
	ours := startSleeper(t, "AIRLOCK_RUN_ID="+exec1.ID)
	stranger := startSleeper(t, "AIRLOCK_RUN_ID=someone-else")
	for _, r := range []runner.Record{
		{ID: exec1.ID, TaskID: "tsk_1", AgentID: "ag_ann", Trigger: runner.TriggerManual, PID: ours.Process.Pid, Active: true, CreatedAt: time.Now()},
		{ID: exec2.ID, TaskID: "tsk_1", AgentID: "ag_ann", Trigger: runner.TriggerManual, PID: stranger.Process.Pid, Active: true, CreatedAt: time.Now()},
	} {
		if err := f.st.CreateRun(r); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(f.runsDir, exec1.ID), 0o700)
	os.WriteFile(filepath.Join(f.runsDir, exec1.ID, "mcp.json"), []byte("token"), 0o600)

	r2, err := runner.New(runner.Options{Store: f.st, Executions: f.board, Tasks: f.board, Agents: f.agents, Tokens: f.tokens, RunsDir: f.runsDir})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	ours.Wait()
	if stranger.ProcessState != nil {
		t.Error("a process that is not the run's was killed")
	}
	for _, id := range []string{exec1.ID, exec2.ID} {
		run, _ := r2.Get(id)
		if run.Status != runner.StatusFailed || !strings.Contains(run.Reason, "Airlock stopped") || run.PID != 0 {
			t.Errorf("leftover run %s = %+v, want failed because Airlock stopped", id, run)
		}
	}
	if _, err := os.Stat(filepath.Join(f.runsDir, exec1.ID)); !os.IsNotExist(err) {
		t.Errorf("a leftover run folder (with a token) is still there: %v", err)
	}
}

func startSleeper(t *testing.T, env string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "sleep 300")
	cmd.Env = []string{"PATH=/usr/bin:/bin", env}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	return cmd
}

// The agent's latest call through Airlock shows on its live run; Close
// stops live runs and records who stopped them.
func TestLastToolAndClose(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	f.task("tsk_1", "ag_ann", "todo")
	f.profile(t, runner.Profile{AgentID: "ag_ann", Template: runner.TemplateCustom, Command: f.script(t, "long", "sleep 300")})
	run, err := f.r.Start("tsk_1")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 2, 6, 9, 0, 0, 0, time.UTC)
	f.r.NoteToolCall("ag_ben", sessionOf(f.tokens.last()), "mcp-1", runner.ToolCall{Server: "x", Tool: "other", At: at})
	f.r.NoteToolCall("ag_ann", sessionOf(f.tokens.last()), "mcp-2", runner.ToolCall{Server: "everything", Tool: "echo", Status: "ok", At: at})
	// The agent's calls over other connections are not the run's.
	f.r.NoteToolCall("ag_ann", "", "mcp-3", runner.ToolCall{Server: "x", Tool: "own-token", At: at})
	f.r.NoteToolCall("ag_ann", "sess_elsewhere", "mcp-4", runner.ToolCall{Server: "x", Tool: "other-session", At: at})
	got, _ := f.r.Get(run.ID)
	if got.LastTool == nil || got.LastTool.Tool != "echo" {
		t.Errorf("last tool = %+v, want echo", got.LastTool)
	}
	if !slices.Equal(got.Sessions, []string{"mcp-2"}) {
		t.Errorf("sessions = %v, want the run's own MCP session mcp-2", got.Sessions)
	}
	f.r.Close()
	got, _ = f.r.Get(run.ID)
	if got.Status != runner.StatusStopped || !strings.Contains(got.Reason, "Airlock") || !gone(run.PID) {
		t.Errorf("after Close: %+v (process gone %v), want stopped by Airlock", got, gone(run.PID))
	}
	if _, err := f.r.Start("tsk_1"); core.ErrorCode(err) != core.EUnavailable {
		t.Errorf("Start after Close = %v, want unavailable", err)
	}
}

// Work auto-run started that Airlock cut off as it stopped is taken up
// again by the next Airlock (found by a new-user test: a clean stop ended
// it for good, a crash did not); a run a person stopped stays stopped.
func TestAutoRunResumesWorkCutOffByAStop(t *testing.T) {
	s := runner.DefaultSettings()
	s.AutoRun, s.RetryBackoffSeconds, s.StopGraceSeconds = true, 0, 1
	f := newFixture(t, fixtureOpts{settings: &s})
	f.profile(t, runner.Profile{AgentID: "ag_ann", Template: runner.TemplateCustom, Command: f.script(t, "long", "sleep 300")})
	f.profile(t, runner.Profile{AgentID: "ag_ben", Template: runner.TemplateCustom, Command: f.script(t, "long2", "sleep 300")})
	f.task("tsk_cut", "ag_ann", runner.TaskInProgress)
	f.task("tsk_called_off", "ag_ben", runner.TaskInProgress)
	testutil.Eventually(t, 30*time.Second, func() bool { return len(f.r.Live()) == 2 }, "auto-run did not start both tasks")
	byPerson, _ := f.r.List("tsk_called_off")
	if _, err := f.r.Stop(byPerson[0].ID); err != nil {
		t.Fatal(err)
	}
	f.r.Close()

	r2, err := runner.New(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	f.board.OnChange(func(string) { r2.Kick() })
	r2.Reconcile()
	testutil.Eventually(t, 30*time.Second, func() bool {
		runs, _ := r2.List("tsk_cut")
		return len(runs) == 2 && runs[0].Status == runner.StatusRunning
	}, "the work Airlock's stop cut off was not taken up again")
	r2.Reconcile()
	if runs, _ := r2.List("tsk_called_off"); len(runs) != 1 || runs[0].Status != runner.StatusStopped {
		t.Errorf("runs of the task a person stopped = %+v, want only the stopped one", runs)
	}
}

func TestSettingsAreChecked(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	if got := f.r.Settings(); got != runner.DefaultSettings() {
		t.Errorf("settings of a new store = %+v, want the defaults", got)
	}
	for _, bad := range []runner.Settings{
		{MaxConcurrent: 0, MaxAttempts: 3, StopGraceSeconds: 5},
		{MaxConcurrent: 1, MaxAttempts: 0, StopGraceSeconds: 5},
		{MaxConcurrent: 1, MaxAttempts: 3, RetryBackoffSeconds: -1, StopGraceSeconds: 5},
		{MaxConcurrent: 1, MaxAttempts: 3, StopGraceSeconds: 0},
	} {
		if _, err := f.r.SetSettings(bad); core.ErrorCode(err) != core.EInvalid {
			t.Errorf("SetSettings(%+v) = %v, want invalid", bad, err)
		}
	}
	good := runner.Settings{AutoRun: true, MaxConcurrent: 4, MaxAttempts: 1, RetryBackoffSeconds: 60, StopGraceSeconds: 2}
	if _, err := f.r.SetSettings(good); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := f.st.RunSettings(); !ok || got != good || f.r.Settings() != good {
		t.Errorf("stored %+v (%v), in force %+v; want %+v", got, ok, f.r.Settings(), good)
	}
}

// refusingBoard is a board that refuses to record executions (an agent
// not in the task's project, for teams).
type refusingBoard struct {
	*runner.MemoryBoard
	mu    sync.Mutex
	calls int
}

func (b *refusingBoard) StartExecution(taskID, agentID string) (runner.Execution, error) {
	b.mu.Lock()
	b.calls++
	b.mu.Unlock()
	return runner.Execution{}, core.Errorf("agent_not_assigned_to_project", "Agent %s is not assigned to the task's project", agentID)
}

func (b *refusingBoard) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

// When the board cannot even record an automatic attempt, auto-run still
// backs off and stops at MaxAttempts: no loop.
func TestAutoRunStopsWhenTheBoardRefuses(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	board := &refusingBoard{MemoryBoard: f.board}
	r, err := runner.New(runner.Options{Store: f.st, Executions: board, Tasks: board, Agents: f.agents, Tokens: f.tokens,
		Roots: func() []string { return []string{f.root} }, RunsDir: filepath.Join(t.TempDir(), "runs")})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f.profile(t, runner.Profile{AgentID: "ag_ann", Template: runner.TemplateCustom, Command: f.script(t, "ok", "exit 0")})
	f.task("tsk_1", "ag_ann", runner.TaskInProgress)
	if _, err := r.SetSettings(runner.Settings{AutoRun: true, MaxConcurrent: 1, MaxAttempts: 2, RetryBackoffSeconds: 0, StopGraceSeconds: 1}); err != nil {
		t.Fatal(err)
	}
	// Each attempt asks the board twice: to run, then to record the refusal.
	testutil.Eventually(t, 30*time.Second, func() bool { return board.count() >= 4 }, "auto-run did not try twice")
	r.Reconcile()
	r.Reconcile()
	if n := board.count(); n != 4 {
		t.Errorf("the board was asked %d times, want 4 (2 attempts): auto-run loops", n)
	}
	if issued, _ := f.tokens.counts(); issued != 0 {
		t.Errorf("tokens were issued for runs the board refused: %d", issued)
	}
}
