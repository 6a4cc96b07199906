package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/proc"
)

// Options are what a Runner works with. Store, Executions, Tasks, Agents
// and Tokens are required.
type Options struct {
	Store      Store
	Executions Executions
	Tasks      Tasks
	Agents     Agents
	Tokens     TokenIssuer
	// Roots returns the folders agents may work in (the built-in tools'
	// folders), read at every launch.
	Roots func() []string
	// Protected are folders no run may work in, even inside a root:
	// Airlock's data directory (its tokens, its rules).
	Protected []string
	// MCPURL is Airlock's MCP endpoint.
	MCPURL string
	// Airlock is the path of the airlock program ({{airlock}}).
	Airlock string
	// RunsDir holds one folder per live run (its MCP config), mode 0700.
	RunsDir string
	// Events receives run:status and run:output; nil drops them.
	Events core.EventSink
	// Environ is the environment runs inherit (without AIRLOCK_*); nil
	// means os.Environ.
	Environ func() []string
	Logger  *slog.Logger
	Now     func() time.Time
	// OutputInterval is the least time between two run:output events of
	// one run (default 300ms).
	OutputInterval time.Duration
}

// Runner starts, supervises and stops agent runs. It is safe for
// concurrent use.
type Runner struct {
	o   Options
	log *slog.Logger

	mu       sync.Mutex
	settings Settings
	live     map[string]*liveRun // by run id
	starting map[string]bool     // task and agent ids being started ("task:", "agent:")
	holds    map[string]hold     // task id → failed auto starts not recorded on the board
	auto     []AutoState         // what the last auto-run pass held back
	closed   bool
	wake     *time.Timer
	wakeAt   time.Time

	reconcileMu sync.Mutex // one auto-run pass at a time
	kick        chan struct{}
	done        chan struct{}
	wg          sync.WaitGroup
}

type liveRun struct {
	rec      Record
	exec     Execution
	proc     *proc.Process
	out      *output
	stopping string   // who asked it to stop ("" while nobody did)
	token    string   // the run's credential
	session  string   // the agent session token is
	title    string   // the task's title as the run started
	sessions []string // the MCP sessions its credential made calls on
	lastTool *ToolCall
	ended    chan struct{}
	final    Run
}

// New returns a runner. Runs a previous process left marked alive (Airlock
// was killed) are ended as failed, and their processes stopped when they
// are still there.
func New(o Options) (*Runner, error) {
	if o.Store == nil || o.Executions == nil || o.Tasks == nil || o.Agents == nil || o.Tokens == nil {
		return nil, errors.New("runner: Store, Executions, Tasks, Agents and Tokens are required")
	}
	if o.Roots == nil {
		o.Roots = func() []string { return nil }
	}
	if o.Events == nil {
		o.Events = core.Discard
	}
	if o.Environ == nil {
		o.Environ = os.Environ
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.OutputInterval <= 0 {
		o.OutputInterval = 300 * time.Millisecond
	}
	if o.RunsDir == "" {
		return nil, errors.New("runner: RunsDir is required")
	}
	r := &Runner{o: o, log: o.Logger, live: map[string]*liveRun{}, starting: map[string]bool{}, holds: map[string]hold{},
		kick: make(chan struct{}, 1), done: make(chan struct{})}
	s, ok, err := o.Store.RunSettings()
	if err != nil {
		return nil, err
	}
	if !ok {
		s = DefaultSettings()
	}
	r.settings = s
	if err := r.recover(); err != nil {
		return nil, err
	}
	r.wg.Add(1)
	go r.loop()
	r.Kick()
	return r, nil
}

// recover ends the runs a previous process left alive.
func (r *Runner) recover() error {
	recs, err := r.o.Store.ActiveRuns()
	if err != nil {
		return err
	}
	for _, rec := range recs {
		stopLeftover(rec.PID, rec.ID)
		reason := "Airlock stopped while the run was alive"
		// Its log ends as every run's does, with how it ended (found by a
		// new-user test: it stopped at the run's last output, as if the
		// run went on).
		if e, err := r.o.Executions.Execution(rec.ID); err == nil && e.LogPath != "" {
			if f, err := os.OpenFile(e.LogPath, os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
				fmt.Fprintf(f, "[%s] %s ended: %s (%s)\n", r.o.Now().UTC().Format(time.RFC3339), airlockMark, StatusFailed, reason)
				f.Close()
			}
		}
		if err := r.o.Executions.FinishExecution(rec.ID, StatusFailed, nil); err != nil && !isCode(err, core.EConflict, core.ENotFound) {
			r.log.Warn("finish a run left alive", "run", rec.ID, "err", err)
		}
		rec.Active, rec.Reason = false, reason
		if err := r.o.Store.UpdateRun(rec); err != nil {
			return err
		}
	}
	// Nothing runs yet: every run folder is a leftover (and may hold a
	// token in its MCP config).
	entries, _ := os.ReadDir(r.o.RunsDir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(r.o.RunsDir, e.Name()))
	}
	return nil
}

func isCode(err error, codes ...string) bool {
	c := core.ErrorCode(err)
	for _, want := range codes {
		if c == want {
			return true
		}
	}
	return false
}

// Templates returns the launcher templates.
func (r *Runner) Templates() []Template { return Templates() }

// Profile returns agent id's launcher profile.
func (r *Runner) Profile(agentID string) (Profile, error) {
	a, err := r.o.Agents.Agent(agentID)
	if err != nil {
		return Profile{}, err
	}
	p, err := r.o.Store.Profile(a.ID)
	if core.ErrorCode(err) == core.ENotFound {
		return Profile{}, core.Errorf(ENoProfile, "agent %s has no run profile", a.Name).
			WithHint(fmt.Sprintf("choose its launcher (Claude Code, Codex CLI, Gemini CLI, the scripted agent or a command) in Agents → %s → Run profile (#/agents/%s?tab=run)", a.Name, a.ID))
	}
	return p, err
}

// Profiles returns every stored profile.
func (r *Runner) Profiles() ([]Profile, error) { return r.o.Store.Profiles() }

// SetProfile checks and stores agent id's profile: the template, its
// placeholders, the command and the working directory are refused here
// already (and checked again at each launch).
func (r *Runner) SetProfile(agentID string, p Profile) (Profile, error) {
	a, err := r.o.Agents.Agent(agentID)
	if err != nil {
		return Profile{}, err
	}
	// A suspended agent may be given a profile (it runs once resumed); a
	// person never runs.
	if a.Human || a.Kind == authz.KindOwner {
		return Profile{}, runnable(a)
	}
	p.AgentID = a.ID
	if _, err := CheckProfile(p); err != nil {
		return Profile{}, err
	}
	if p.WorkDir != "" {
		if _, err := workDir(p.WorkDir, r.o.Roots(), r.o.Protected); err != nil {
			return Profile{}, err
		}
	}
	if p.Args == nil {
		p.Args = []string{}
	}
	if p.ExtraArgs == nil {
		p.ExtraArgs = []string{}
	}
	if p.Env == nil {
		p.Env = map[string]string{}
	}
	p.UpdatedAt = r.o.Now().UTC()
	if err := r.o.Store.SaveProfile(p); err != nil {
		return Profile{}, err
	}
	r.Kick()
	return p, nil
}

// CheckCommand looks for the program profile p launches, as a run would
// (in the PATH of the run's environment). A program not found is a
// warning, not a refusal: SetProfile saves such a profile, and the
// profile screen and the CLI say its runs will not start (found by a
// new-user test: a profile for a CLI that was not installed was accepted
// without a word). An invalid profile is CheckProfile's refusal.
func (r *Runner) CheckCommand(p Profile) (CommandCheck, error) {
	t, err := CheckProfile(p)
	if err != nil {
		return CommandCheck{}, err
	}
	path, err := program(t, p, r.o.Airlock, r.env(t, p))
	if e := (*core.Error)(nil); errors.As(err, &e) && e.Code == ECommandNotFound {
		return CommandCheck{Warning: e.Message, Hint: e.Hint}, nil
	}
	if err != nil {
		return CommandCheck{}, err
	}
	return CommandCheck{Path: path}, nil
}

// DeleteProfile removes agent id's profile: it is not run any more.
func (r *Runner) DeleteProfile(agentID string) error {
	a, err := r.o.Agents.Agent(agentID)
	if err != nil {
		return err
	}
	return r.o.Store.DeleteProfile(a.ID)
}

// Settings returns the settings in force.
func (r *Runner) Settings() Settings {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.settings
}

// SetSettings checks and stores s; auto-run applies them at once.
func (r *Runner) SetSettings(s Settings) (Settings, error) {
	switch {
	case s.MaxConcurrent < 1 || s.MaxConcurrent > 32:
		return Settings{}, core.Errorf(core.EInvalid, "maxConcurrent must be between 1 and 32")
	case s.MaxAttempts < 1 || s.MaxAttempts > 10:
		return Settings{}, core.Errorf(core.EInvalid, "maxAttempts must be between 1 and 10")
	case s.RetryBackoffSeconds < 0 || s.RetryBackoffSeconds > 3600:
		return Settings{}, core.Errorf(core.EInvalid, "retryBackoffSeconds must be between 0 and 3600")
	case s.StopGraceSeconds < 1 || s.StopGraceSeconds > 120:
		return Settings{}, core.Errorf(core.EInvalid, "stopGraceSeconds must be between 1 and 120")
	}
	if err := r.o.Store.SaveRunSettings(s); err != nil {
		return Settings{}, err
	}
	r.mu.Lock()
	r.settings = s
	r.mu.Unlock()
	r.Kick()
	return s, nil
}

// runnable refuses agents Airlock does not launch: people (the owner among
// them) and agents that are not active.
func runnable(a authz.Agent) error {
	if a.Human || a.Kind == authz.KindOwner {
		return core.Errorf(core.EInvalid, "%s is a person: Airlock runs only AI agents", a.Name).
			WithHint("assign the task to an AI agent")
	}
	if a.Status != authz.StatusActive {
		return core.Errorf(core.EForbidden, "agent %s is %s", a.Name, a.Status).
			WithHint("resume the agent on the Agents screen first")
	}
	return nil
}

// Start starts a run of the agent the task is assigned to. Everything that
// can be checked is checked before anything is launched; a process that
// cannot be started is a failed run (recorded, with its reason) and an
// ERunFailed error.
func (r *Runner) Start(taskID string) (Run, error) {
	return r.start(taskID, TriggerManual, 0)
}

// Check makes every check Start makes, and starts nothing.
func (r *Runner) Check(taskID string) error {
	_, release, err := r.prepare(taskID)
	release()
	return err
}

func (r *Runner) start(taskID, trigger string, attempt int) (Run, error) {
	pl, release, err := r.prepare(taskID)
	if err != nil {
		return Run{}, err
	}
	defer release()
	return r.launch(pl, trigger, attempt)
}

// prepare checks a launch for the task and reserves its task and agent;
// release gives them back.
func (r *Runner) prepare(taskID string) (plan, func(), error) {
	none := func() {}
	t, err := r.o.Tasks.Task(taskID)
	if err != nil {
		return plan{}, none, err
	}
	if t.Status == "done" || t.Status == "cancelled" {
		// Its agent could not take it in progress: refused now, not as a
		// failed run (found by a new-user test).
		return plan{}, none, core.Errorf(core.EInvalid, "task %s is %s; a run works on an open task", t.ID, t.Status).
			WithHint("move it back to to-do on the board first, if there is work left")
	}
	// A task that cannot start is refused now, not run to find out (found
	// by a new-user test: runs started on blocked tasks and on tasks
	// waiting for others).
	if t.Status == "blocked" {
		return plan{}, none, core.Errorf(core.EInvalid, "task %s is blocked: %s", t.ID, t.BlockedReason).
			WithHint("unblock it on the board first (move it to to-do)")
	}
	if len(t.WaitsOn) > 0 {
		return plan{}, none, core.Errorf(core.EInvalid, "task %s waits on %d open task(s): %s", t.ID, len(t.WaitsOn), strings.Join(t.WaitsOn, "; ")).
			WithHint("those must be done (or cancelled) first")
	}
	if t.AssigneeID == "" {
		return plan{}, none, core.Errorf(core.EInvalid, "task %s is not assigned to anyone", t.ID).
			WithHint("assign it to an AI agent first")
	}
	a, err := r.o.Agents.Agent(t.AssigneeID)
	if err != nil {
		return plan{}, none, err
	}
	if err := runnable(a); err != nil {
		return plan{}, none, err
	}
	release, err := r.reserve(t.ID, a)
	if err != nil {
		return plan{}, none, err
	}
	pl, err := r.check(t, a)
	if err != nil {
		release()
		return plan{}, none, err
	}
	return pl, release, nil
}

// reserve marks the task and the agent as starting. One agent runs one
// task at a time: its runs share its identity (and the token a run gets
// may replace the agent's previous one).
func (r *Runner) reserve(taskID string, a authz.Agent) (func(), error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, core.Errorf(core.EUnavailable, "Airlock is stopping")
	}
	for _, l := range r.live {
		if l.rec.TaskID == taskID {
			return nil, core.Errorf(core.EConflict, "task %s is running already (run %s)", taskID, l.rec.ID).
				WithHint("stop that run first")
		}
		if l.rec.AgentID == a.ID {
			return nil, core.Errorf(EAgentBusy, "agent %s is running task %s (run %s)", a.Name, l.rec.TaskID, l.rec.ID).
				WithHint("an agent works on one task at a time: wait for that run or stop it")
		}
	}
	if r.starting["task:"+taskID] {
		return nil, core.Errorf(core.EConflict, "task %s is being started already", taskID)
	}
	if r.starting["agent:"+a.ID] {
		return nil, core.Errorf(EAgentBusy, "agent %s is being started for another task", a.Name)
	}
	r.starting["task:"+taskID], r.starting["agent:"+a.ID] = true, true
	// A start in progress keeps Close waiting until its run is supervised
	// (or refused).
	r.wg.Add(1)
	return func() {
		r.mu.Lock()
		delete(r.starting, "task:"+taskID)
		delete(r.starting, "agent:"+a.ID)
		r.mu.Unlock()
		r.wg.Done()
	}, nil
}

// check builds the launch of agent a for task t, refusing what is wrong.
func (r *Runner) check(t Task, a authz.Agent) (plan, error) {
	p, err := r.o.Store.Profile(a.ID)
	if core.ErrorCode(err) == core.ENotFound {
		return plan{}, core.Errorf(ENoProfile, "agent %s has no run profile", a.Name).
			WithHint(fmt.Sprintf("choose its launcher in Agents → %s → Run profile (#/agents/%s?tab=run) before running it", a.Name, a.ID))
	}
	if err != nil {
		return plan{}, err
	}
	tmpl, err := CheckProfile(p)
	if err != nil {
		return plan{}, err
	}
	dir, err := workDir(p.WorkDir, r.o.Roots(), r.o.Protected)
	if err != nil {
		return plan{}, err
	}
	env := r.env(tmpl, p)
	prog, err := program(tmpl, p, r.o.Airlock, env)
	if err != nil {
		return plan{}, err
	}
	ok, err := r.o.Tokens.HasToken(a.ID)
	if err != nil {
		return plan{}, err
	}
	if !ok {
		return plan{}, core.Errorf(ENoToken, "agent %s has no connection token", a.Name).
			WithHint("give it one on the Agents screen (or 'airlock agents token NAME --rotate'): a run connects as the agent, never as you")
	}
	args := withExtraArgs(argsOf(tmpl, p))
	shown := tmpl.Command
	if p.Command != "" {
		shown = p.Command
	}
	display := commandLine(shown, expandLists(args, tmpl, p))
	return plan{template: tmpl, profile: p, program: prog, args: args, dir: dir, display: display, task: t, agent: a}, nil
}

// expandLists shows the list placeholders filled in, the rest as written.
func expandLists(args []string, t Template, p Profile) []string {
	var out []string
	for _, a := range args {
		if name, ok := listPlaceholder(a); ok {
			if name == phExtraArgs {
				out = append(out, p.ExtraArgs...)
			} else if p.Model != "" {
				out = append(out, t.ModelArgs...)
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// env is a run's environment without the per-run values.
func (r *Runner) env(t Template, p Profile) []string {
	env := baseEnv(r.o.Environ())
	for _, k := range sortedKeys(p.Env) {
		env = setEnv(env, k, p.Env[k])
	}
	return env
}

// launch creates the execution record and starts the process.
func (r *Runner) launch(pl plan, trigger string, attempt int) (Run, error) {
	exec, err := r.o.Executions.StartExecution(pl.task.ID, pl.agent.ID)
	if err != nil {
		return Run{}, err
	}
	rec := Record{ID: exec.ID, TaskID: pl.task.ID, AgentID: pl.agent.ID, Trigger: trigger, Attempt: attempt,
		Template: pl.template.ID, Command: pl.display, WorkDir: pl.dir, Active: true, CreatedAt: r.o.Now().UTC()}
	if err := r.o.Store.CreateRun(rec); err != nil {
		r.o.Executions.FinishExecution(exec.ID, StatusFailed, nil)
		return Run{}, err
	}
	logf, err := os.OpenFile(exec.LogPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return r.failStart(nil, rec, exec, nil, "", fmt.Errorf("open the run's log: %w", err))
	}
	l := &liveRun{rec: rec, exec: exec, title: pl.task.Title, ended: make(chan struct{})}
	l.out = newOutput(logf, r.o.Now, r.o.OutputInterval, func(b batch) {
		r.o.Events.Emit(EventRunOutput, RunOutput{RunID: rec.ID, TaskID: rec.TaskID, Lines: b.lines, First: b.first, Dropped: b.dropped})
	})
	l.out.note("run %s of task %s by agent %s (%s)", rec.ID, rec.TaskID, pl.agent.Name, trigger)
	l.out.note("command: %s", pl.display)
	l.out.note("working directory: %s", pl.dir)

	runDir := filepath.Join(r.o.RunsDir, rec.ID)
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return r.failStart(l, rec, exec, nil, "", fmt.Errorf("create the run's folder: %w", err))
	}
	cred, err := r.o.Tokens.RunToken(pl.agent.ID, pl.task.ProjectID)
	if err != nil {
		return r.failStart(l, rec, exec, nil, runDir, fmt.Errorf("get a token for agent %s: %w", pl.agent.Name, err))
	}
	token, releaseToken := cred.Token, cred.Release
	r.mu.Lock()
	l.token, l.session = token, cred.Session
	r.mu.Unlock()
	mcpURL := runURL(r.o.MCPURL, pl.task.ProjectID)
	cfgPath := filepath.Join(runDir, configFile(pl.template.ConfigFormat))
	if err := writeConfig(cfgPath, pl.template.ConfigFormat, mcpURL, token); err != nil {
		return r.failStart(l, rec, exec, releaseToken, runDir, err)
	}
	vals := map[string]string{
		"mcp_config": cfgPath, "mcp_url": mcpURL, "task_id": pl.task.ID, "task_title": pl.task.Title,
		"task_description": pl.task.Description, "project_id": pl.task.ProjectID, "agent_id": pl.agent.ID,
		"agent_name": pl.agent.Name, "run_id": rec.ID, "run_dir": runDir, "workdir": pl.dir, "model": pl.profile.Model,
		"airlock": r.o.Airlock,
	}
	// Every string was checked by CheckProfile: expanding cannot fail on a
	// placeholder any more.
	prompt, err := expand(promptOf(pl.profile), "the prompt", vals)
	if err != nil {
		return r.failStart(l, rec, exec, releaseToken, runDir, err)
	}
	vals["prompt"] = prompt
	lists := map[string][]string{phExtraArgs: pl.profile.ExtraArgs}
	if pl.profile.Model != "" {
		lists[phModelArgs] = pl.template.ModelArgs
	}
	args, err := expandArgs(pl.args, "the launcher's", vals, lists)
	if err != nil {
		return r.failStart(l, rec, exec, releaseToken, runDir, err)
	}
	env := r.env(pl.template, pl.profile)
	for _, k := range sortedKeys(pl.template.Env) {
		v, err := expand(pl.template.Env[k], "environment variable "+k, vals)
		if err != nil {
			return r.failStart(l, rec, exec, releaseToken, runDir, err)
		}
		env = setEnv(env, k, v)
	}
	for _, k := range sortedKeys(pl.profile.Env) {
		v, err := expand(pl.profile.Env[k], "environment variable "+k, vals)
		if err != nil {
			return r.failStart(l, rec, exec, releaseToken, runDir, err)
		}
		env = setEnv(env, k, v)
	}
	env = setEnv(env, "AIRLOCK_URL", mcpURL)
	env = setEnv(env, "AIRLOCK_MCP_CONFIG", cfgPath)
	env = setEnv(env, "AIRLOCK_RUN_ID", rec.ID)
	env = setEnv(env, "AIRLOCK_TASK_ID", pl.task.ID)
	if pl.template.TokenEnv {
		env = setEnv(env, "AIRLOCK_TOKEN", token)
	}

	r.mu.Lock()
	grace := time.Duration(r.settings.StopGraceSeconds) * time.Second
	r.mu.Unlock()
	// The process outlives the request that started it: Stop and Close end
	// it, not a context.
	p, err := proc.Start(context.Background(), proc.Spec{Path: pl.program, Args: args, Dir: pl.dir, Env: env,
		Stdout: l.out.stream(0), Stderr: l.out.stream(1), KillGrace: grace})
	if err != nil {
		return r.failStart(l, rec, exec, releaseToken, runDir, err)
	}
	l.proc = p
	l.rec.PID = p.PID()
	l.out.note("started, process %d", p.PID())
	if err := r.o.Store.UpdateRun(l.rec); err != nil {
		r.log.Warn("record a run's process", "run", rec.ID, "err", err)
	}
	r.mu.Lock()
	r.live[rec.ID] = l
	closing := r.closed
	r.wg.Add(1) // the reservation holds the group open: Close waits for it
	r.mu.Unlock()
	run := r.view(l.rec, exec, nil)
	r.o.Events.Emit(EventRunStatus, run)
	go r.supervise(l, releaseToken, runDir)
	if closing {
		// Close began while this run was starting and did not see it.
		go r.stop(rec.ID, shutdownStopper)
	}
	return run, nil
}

// failStart ends a run whose process could not be started: the reason is
// in its log, its record and the error.
func (r *Runner) failStart(l *liveRun, rec Record, exec Execution, releaseToken func(), runDir string, cause error) (Run, error) {
	reason := "the run could not start: " + core.ErrorMessage(cause)
	if l != nil {
		l.out.note("%s", reason)
		l.out.close()
	}
	if runDir != "" {
		os.RemoveAll(runDir)
	}
	if releaseToken != nil {
		releaseToken()
	}
	if err := r.o.Executions.FinishExecution(exec.ID, StatusFailed, nil); err != nil {
		r.log.Warn("finish a run that did not start", "run", rec.ID, "err", err)
	}
	rec.Active, rec.Reason = false, reason
	if err := r.o.Store.UpdateRun(rec); err != nil {
		r.log.Warn("record a run that did not start", "run", rec.ID, "err", err)
	}
	run := r.get(rec)
	r.o.Events.Emit(EventRunStatus, run)
	r.Kick()
	return run, core.Errorf(ERunFailed, "%s", reason).WithHint("the run " + rec.ID + " is recorded as failed; see its log")
}

// supervise waits for a run's process and records how it ended.
func (r *Runner) supervise(l *liveRun, releaseToken func(), runDir string) {
	defer r.wg.Done()
	ex := l.proc.Wait()
	// What the run left behind goes with it, as a Stop ends it: what it
	// detached from its process group (setsid) too (found by a new-user
	// test: a detached child ran on after the run completed by itself).
	killRunProcesses(l.rec.ID)
	r.mu.Lock()
	stopper := l.stopping
	s := r.settings
	r.mu.Unlock()

	code := ex.ShellCode()
	status, reason := StatusCompleted, ""
	switch {
	case ex.Stopped || stopper != "":
		status = StatusStopped
		reason = "stopped by " + stopper
		if stopper == "" {
			reason = "stopped"
		}
	case ex.Err != nil:
		status, reason = StatusFailed, "the run's output could not be read: "+ex.Err.Error()
	case ex.Code != 0 || ex.Signal != 0:
		status, reason = StatusFailed, ex.String()
	}
	if status == StatusFailed && l.rec.Trigger == TriggerAuto && s.AutoRun {
		if l.rec.Attempt >= s.MaxAttempts {
			reason += fmt.Sprintf("; auto-run gave up after %d failed attempts", l.rec.Attempt)
		} else {
			reason += fmt.Sprintf("; auto-run tries again in %s (attempt %d of %d)", backoff(s, l.rec.Attempt), l.rec.Attempt+1, s.MaxAttempts)
		}
	}
	l.out.endStreams()
	// The reason may begin with the exit status already (a failed run's
	// does): say it once.
	l.out.note("ended: %s (%s)%s", status, ex.String(), prefixed("; ", strings.TrimPrefix(strings.TrimPrefix(reason, ex.String()), "; ")))
	l.out.close()
	os.RemoveAll(runDir)
	if releaseToken != nil {
		releaseToken()
	}
	// l.rec is read by others while the run is live: the end is recorded
	// on a copy.
	rec := l.rec
	if err := r.o.Executions.FinishExecution(rec.ID, status, &code); err != nil {
		r.log.Warn("finish a run", "run", rec.ID, "err", err)
	}
	rec.Active, rec.Reason = false, reason
	if err := r.o.Store.UpdateRun(rec); err != nil {
		r.log.Warn("record the end of a run", "run", rec.ID, "err", err)
	}
	r.mu.Lock()
	last := l.lastTool
	delete(r.live, rec.ID)
	r.mu.Unlock()
	run := r.get(rec)
	run.LastTool = last
	l.final = run
	close(l.ended)
	r.o.Events.Emit(EventRunStatus, run)
	r.Kick()
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// Stop stops a live run: SIGTERM to its process group, SIGKILL after the
// grace period. It returns the ended run.
func (r *Runner) Stop(runID string) (Run, error) {
	return r.stop(runID, "the user")
}

func (r *Runner) stop(runID, who string) (Run, error) {
	r.mu.Lock()
	l, ok := r.live[runID]
	exited := false
	if ok {
		// supervise reads stopping under mu once the process is done: a
		// stop asked after the process ended by itself changes nothing.
		select {
		case <-l.proc.Done():
			exited = true
		default:
			if l.stopping == "" {
				l.stopping = who
			}
		}
	}
	grace := time.Duration(r.settings.StopGraceSeconds) * time.Second
	r.mu.Unlock()
	if exited {
		<-l.ended
		return l.final, core.Errorf(core.EConflict, "run %s is not running (%s)", runID, l.final.Status)
	}
	if !ok {
		rec, err := r.o.Store.Run(runID)
		if err != nil {
			return Run{}, err
		}
		run := r.get(rec)
		return run, core.Errorf(core.EConflict, "run %s is not running (%s)", runID, run.Status)
	}
	l.proc.Stop(grace)
	// What left the process group (setsid) is stopped with the run too.
	killRunProcesses(runID)
	<-l.ended
	return l.final, nil
}

// Revalidate stops the live runs whose agent may no longer run: deleted,
// suspended or disabled, or taken off the run's project (found by a new-user test: their processes ran on,
// a deleted agent's under a bare id). It returns at once; the runs end as
// a stop ends them.
func (r *Runner) Revalidate() {
	r.mu.Lock()
	runs := map[string][3]string{} // run → agent, project, token
	for id, l := range r.live {
		runs[id] = [3]string{l.rec.AgentID, l.exec.ProjectID, l.token}
	}
	r.mu.Unlock()
	alive, _ := r.o.Tokens.(TokenChecker)
	for runID, run := range runs {
		a, err := r.o.Agents.Agent(run[0])
		var who string
		switch {
		case core.ErrorCode(err) == core.ENotFound:
			who = "Airlock, as its agent was deleted"
		case err != nil:
			continue
		case a.Status != authz.StatusActive:
			who = "Airlock, as its agent was " + a.Status
		case run[1] != "" && a.Kind != authz.KindOwner && !slices.Contains(a.Projects, run[1]):
			// Its task is nobody's now (teams.ReleaseTasksOutside), and
			// its session for the project has ended.
			who = "Airlock, as its agent was taken off the project"
		case alive != nil && run[2] != "" && !alive.TokenAlive(run[2]):
			// Nothing it asks can be done any more (found by a new-user
			// test: a new passkey ended the credential, and the run went
			// on, refused at every call).
			who = "Airlock, as its credential was ended (a new passkey for its agent, or its session ended)"
		default:
			continue
		}
		go r.stop(runID, who)
	}
}

// StopCancelled stops the live runs whose task is no longer theirs to work
// on: cancelled (found by a new-user test: a run went on working on a task
// cancelled on the board, and failed when it reported), or given to another
// agent (found by a later one: the run worked on, refused at every change,
// and the new assignee could not be run, "running already"). It returns at
// once; the runs end as a stop ends them.
func (r *Runner) StopCancelled() {
	r.mu.Lock()
	runs := map[string]Record{}
	for id, l := range r.live {
		if l.rec.TaskID != "" {
			runs[id] = l.rec
		}
	}
	r.mu.Unlock()
	for runID, rec := range runs {
		t, err := r.o.Tasks.Task(rec.TaskID)
		switch {
		case err != nil:
		case t.Status == "cancelled":
			go r.stop(runID, "Airlock, as its task was cancelled")
		case t.AssigneeID != rec.AgentID:
			go r.stop(runID, "Airlock, as its task was given to another agent")
		}
	}
}

// StopAgentRuns stops agentID's live runs and returns when they ended.
func (r *Runner) StopAgentRuns(agentID, who string) {
	r.mu.Lock()
	var ids []string
	for id, l := range r.live {
		if l.rec.AgentID == agentID {
			ids = append(ids, id)
		}
	}
	r.mu.Unlock()
	for _, id := range ids {
		r.stop(id, who)
	}
}

// shutdownStopper is who stops the runs still live when Airlock stops.
const shutdownStopper = "Airlock, which was stopping"

// Close stops every live run (they are recorded as stopped by Airlock) and
// the auto-run loop.
func (r *Runner) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	var ids []string
	for id := range r.live {
		ids = append(ids, id)
	}
	if r.wake != nil {
		r.wake.Stop()
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.stop(id, shutdownStopper)
		}()
	}
	wg.Wait()
	close(r.done)
	r.wg.Wait()
}

// Get returns run id.
func (r *Runner) Get(runID string) (Run, error) {
	rec, err := r.o.Store.Run(runID)
	if err != nil {
		return Run{}, err
	}
	return r.get(rec), nil
}

// List returns the runs of a task, newest first.
func (r *Runner) List(taskID string) ([]Run, error) {
	recs, err := r.o.Store.TaskRuns(taskID)
	if err != nil {
		return nil, err
	}
	execs, err := r.o.Executions.TaskExecutions(taskID)
	if err != nil {
		return nil, err
	}
	byID := map[string]Execution{}
	for _, e := range execs {
		byID[e.ID] = e
	}
	out := make([]Run, 0, len(recs))
	for _, rec := range recs {
		e, ok := byID[rec.ID]
		var ep *Execution
		if ok {
			ep = &e
		}
		out = append(out, r.view(rec, Execution{}, ep))
	}
	return out, nil
}

// Live returns the runs alive now, oldest first.
func (r *Runner) Live() []Run {
	r.mu.Lock()
	recs := make([]Record, 0, len(r.live))
	for _, l := range r.live {
		recs = append(recs, l.rec)
	}
	r.mu.Unlock()
	sort.Slice(recs, func(i, j int) bool { return recs[i].CreatedAt.Before(recs[j].CreatedAt) })
	out := make([]Run, 0, len(recs))
	for _, rec := range recs {
		out = append(out, r.get(rec))
	}
	return out
}

// LiveCount is the number of runs whose process is running.
func (r *Runner) LiveCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.live)
}

// Log reads part of a run's log file.
func (r *Runner) Log(runID string, q LogQuery) (LogChunk, error) {
	from, n, err := checkQuery(q)
	if err != nil {
		return LogChunk{}, err
	}
	e, err := r.o.Executions.Execution(runID)
	if err != nil {
		return LogChunk{}, err
	}
	c, err := readLog(e.LogPath, from, n)
	if err != nil {
		return LogChunk{}, err
	}
	c.RunID, c.Status = runID, e.Status
	return c, nil
}

// maxRunSessions bounds the MCP sessions a run's view lists (a client
// that reconnects for every call must not grow it without end).
const maxRunSessions = 64

// NoteToolCall records the latest call made through Airlock with agent
// session authSession of agentID, for the live run whose credential that
// session is (the audit events feed it). A call the agent made over another
// connection (the person's own Claude Code, say) is not the run's: before,
// it showed as the run's latest call (found by a new-user test).
func (r *Runner) NoteToolCall(agentID, authSession, mcpSession string, call ToolCall) {
	if authSession == "" {
		return // the agent's own token: never a run's credential
	}
	r.mu.Lock()
	var hits []Record
	for _, l := range r.live {
		if l.rec.AgentID == agentID && l.session == authSession {
			if mcpSession != "" && !slices.Contains(l.sessions, mcpSession) && len(l.sessions) < maxRunSessions {
				l.sessions = append(l.sessions, mcpSession)
			}
			c := call
			l.lastTool = &c
			hits = append(hits, l.rec)
		}
	}
	r.mu.Unlock()
	for _, rec := range hits {
		r.o.Events.Emit(EventRunStatus, r.get(rec))
	}
}

// get is the view of a stored run, with its execution record.
func (r *Runner) get(rec Record) Run {
	e, err := r.o.Executions.Execution(rec.ID)
	if err != nil {
		return r.view(rec, Execution{}, nil)
	}
	return r.view(rec, e, &e)
}

// view joins a run's record with its execution record (exec, or *ep when
// ep is given; neither when the board lost it).
func (r *Runner) view(rec Record, exec Execution, ep *Execution) Run {
	if ep != nil {
		exec = *ep
	}
	run := Run{ID: rec.ID, TaskID: rec.TaskID, AgentID: rec.AgentID, ProjectID: exec.ProjectID, Status: exec.Status,
		Trigger: rec.Trigger, Attempt: rec.Attempt, Template: rec.Template, Command: rec.Command, WorkDir: rec.WorkDir,
		PID: rec.PID, ExitCode: exec.ExitCode, Reason: rec.Reason, StartedAt: exec.StartedAt, EndedAt: exec.CompletedAt,
		LogPath: exec.LogPath}
	if run.Status == "" {
		run.Status, run.StartedAt = StatusFailed, rec.CreatedAt
		if rec.Active {
			run.Status = StatusRunning
		}
	}
	if !rec.Active {
		run.PID = 0
	}
	r.mu.Lock()
	if l, ok := r.live[rec.ID]; ok {
		if l.lastTool != nil {
			c := *l.lastTool
			run.LastTool = &c
		}
		run.TaskTitle = l.title
		run.Sessions = slices.Clone(l.sessions)
		// Still supervised: its end is being recorded, the execution
		// first and then the run with its reason. Until both are, it
		// runs (found by CI: a stopped run was seen without its reason,
		// its process id still set).
		run.Status = StatusRunning
	}
	r.mu.Unlock()
	return run
}
