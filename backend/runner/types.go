package runner

import (
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
)

// Run statuses: those of the board's execution records.
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusStopped   = "stopped"
)

// What started a run.
const (
	TriggerManual = "manual" // the board's Run button, the CLI or the API
	TriggerAuto   = "auto"   // auto-run, for a task moved to in progress
)

// Error codes of the runner, besides core's. Each refusal happens before
// anything is launched.
const (
	ENoProfile           = "no_run_profile"        // the agent has no launcher profile
	EUnknownTemplate     = "unknown_template"      // the profile names no known template
	EUnknownPlaceholder  = "unknown_placeholder"   // a {{name}} the runner does not know
	EWorkDirOutsideRoots = "workdir_outside_roots" // the working directory is not in an allowed folder
	EWorkDirProtected    = "workdir_protected"     // the working directory is in Airlock's data directory
	ENoToken             = "agent_has_no_token"    // the agent has no connection token
	ECommandNotFound     = "command_not_found"     // the launcher's program does not exist
	ERunFailed           = "run_failed"            // the process could not be started
	EAgentBusy           = "agent_busy"            // the agent is already running a task
)

// Events the UI follows (`area:verb`, listed in api.EventPayloads).
const (
	// EventRunStatus: a run started, changed or ended. Payload Run.
	EventRunStatus = "run:status"
	// EventRunOutput: new lines of a run's output, batched (a few per
	// second per run at most). Payload RunOutput.
	EventRunOutput = "run:output"
	// EventRunAuto: what auto-run holds for the tasks it would run changed.
	// Payload AutoStates (all of them).
	EventRunAuto = "run:auto"
)

// What auto-run holds for a task in progress it would run but does not run
// now (AutoState.State).
const (
	// AutoWaiting: the most runs at a time are running; it starts when one
	// ends.
	AutoWaiting = "waiting"
	// AutoAgentBusy: its agent runs another task; it starts when that ends.
	AutoAgentBusy = "agent_busy"
	// AutoRetry: its last attempt failed; the next starts at At.
	AutoRetry = "retry"
	// AutoGaveUp: every attempt failed (MaxAttempts); auto-run tries no
	// more until the task leaves in progress and comes back, or a person
	// runs it.
	AutoGaveUp = "gave_up"
)

// AutoState is what auto-run holds for one task in progress.
type AutoState struct {
	TaskID string `json:"taskId"`
	State  string `json:"state"`
	// Failures is the number of failed attempts in the task's stay in
	// progress; MaxAttempts the setting they count against.
	Failures    int `json:"failures"`
	MaxAttempts int `json:"maxAttempts"`
	// MaxConcurrent is the most runs at a time (AutoWaiting).
	MaxConcurrent int `json:"maxConcurrent"`
	// At is when the next attempt starts (AutoRetry).
	At *time.Time `json:"at,omitempty"`
}

// AutoStates is the payload of EventRunAuto: every task auto-run holds.
type AutoStates struct {
	Tasks []AutoState `json:"tasks"`
}

// Template is a launcher: how to start one kind of agent CLI connected to
// Airlock. Arguments and environment values may hold placeholders
// ({{name}}, see Placeholders); "{{model_args}}" and "{{extra_args}}", each
// alone as an argument, stand for the model arguments (when the profile
// names a model) and the profile's extra arguments.
type Template struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Command is the program, a name looked up in PATH or "{{airlock}}".
	// Empty for the custom template, whose profile gives it.
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// ModelArgs replace "{{model_args}}" when the profile names a model.
	ModelArgs []string `json:"modelArgs"`
	// Env is set in the run's environment (values may hold placeholders).
	Env map[string]string `json:"env"`
	// ConfigFormat is how the per-run MCP config file is written:
	// ConfigMCPServers or ConfigGeminiSettings.
	ConfigFormat string `json:"configFormat"`
	// TokenEnv passes the run's token in AIRLOCK_TOKEN too, for a CLI that
	// reads a bearer token from the environment (Codex).
	TokenEnv bool `json:"tokenEnv"`
	// Custom templates take the command and the arguments from the
	// profile.
	Custom bool `json:"custom"`
	// NeedsExtraArgs says the profile's extra arguments are required (the
	// scripted agent's script file).
	NeedsExtraArgs string `json:"needsExtraArgs,omitempty"`
	// Notes say what the template relies on in the CLI, for the profile
	// screen.
	Notes string `json:"notes"`
}

// Per-run MCP config file formats.
const (
	// ConfigMCPServers is the mcpServers JSON of Claude Code's
	// --mcp-config (and most MCP clients): a server "airlock" of type http
	// with the URL and an Authorization header.
	ConfigMCPServers = "mcpServers"
	// ConfigGeminiSettings is a Gemini CLI settings.json with the server
	// "airlock" (httpUrl, headers, trust), read as the system settings file
	// through GEMINI_CLI_SYSTEM_SETTINGS_PATH.
	ConfigGeminiSettings = "geminiSettings"
)

// Profile is how an agent is launched: its template, and the parts the
// template leaves to the user.
type Profile struct {
	AgentID  string `json:"agentId"`
	Template string `json:"template"`
	// Command overrides the template's program (a full path, or a name in
	// PATH); the custom template requires it.
	Command string `json:"command"`
	// Args are the custom template's arguments (placeholders allowed).
	Args []string `json:"args"`
	// ExtraArgs are added where the template says "{{extra_args}}" (at the
	// end otherwise). Placeholders allowed.
	ExtraArgs []string `json:"extraArgs"`
	// WorkDir is where the agent runs; it must be inside a folder allowed
	// for the built-in tools. Empty means the first allowed folder.
	WorkDir string `json:"workDir"`
	// Model is passed through the template's model arguments.
	Model string `json:"model"`
	// Env is added to the run's environment (AIRLOCK_* is Airlock's).
	Env map[string]string `json:"env"`
	// Prompt is the prompt template (placeholders allowed); empty means
	// DefaultPrompt.
	Prompt    string    `json:"prompt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// CommandCheck says whether the program a profile launches is there now.
// A profile whose program is missing is saved all the same (it may be
// installed later, or be on the PATH of the machine's next login); the
// warning says its runs will not start until it is.
type CommandCheck struct {
	// Path is the program a run would start; empty when it is not found.
	Path string `json:"path"`
	// Warning says why the program cannot be started ("the command
	// \"claude\" was not found in PATH"), and Hint what to do.
	Warning string `json:"warning,omitempty"`
	Hint    string `json:"hint,omitempty"`
}

// Settings are the runner's settings.
type Settings struct {
	// AutoRun starts a run for every task in progress assigned to an AI
	// agent that has a profile.
	AutoRun bool `json:"autoRun"`
	// MaxConcurrent bounds the runs alive at once that auto-run starts
	// (runs started by hand count, but are never refused for it).
	MaxConcurrent int `json:"maxConcurrent"`
	// MaxAttempts bounds the automatic runs of one task while it stays in
	// progress, when they fail.
	MaxAttempts int `json:"maxAttempts"`
	// RetryBackoffSeconds is the delay before the second automatic
	// attempt; it doubles for each further one (up to an hour).
	RetryBackoffSeconds int `json:"retryBackoffSeconds"`
	// StopGraceSeconds is how long Stop waits after SIGTERM before
	// SIGKILL.
	StopGraceSeconds int `json:"stopGraceSeconds"`
}

// DefaultSettings are the settings of a new data directory: auto-run off.
func DefaultSettings() Settings {
	return Settings{AutoRun: false, MaxConcurrent: 2, MaxAttempts: 3, RetryBackoffSeconds: 30, StopGraceSeconds: 5}
}

// Run is one run as the UI shows it: the board's execution record joined
// with what the runner knows of it.
type Run struct {
	// ID is the execution record's id.
	ID        string `json:"id"`
	TaskID    string `json:"taskId"`
	AgentID   string `json:"agentId"`
	ProjectID string `json:"projectId"`
	// Status is StatusRunning, StatusCompleted, StatusFailed or
	// StatusStopped.
	Status  string `json:"status"`
	Trigger string `json:"trigger"`
	// Attempt counts the automatic runs of the task in this stay in
	// progress (1 for the first; 0 for a run started by hand).
	Attempt  int    `json:"attempt"`
	Template string `json:"template"`
	// Command is the command line before its placeholders are filled in
	// (the prompt and the token are never shown here).
	Command string `json:"command"`
	WorkDir string `json:"workDir"`
	PID     int    `json:"pid,omitempty"`
	// ExitCode is the process's exit status (128+N for signal N); null
	// while it runs or when it never started.
	ExitCode *int `json:"exitCode"`
	// Reason says why a run failed or was stopped, and what auto-run does
	// next.
	Reason    string     `json:"reason,omitempty"`
	StartedAt time.Time  `json:"startedAt"`
	EndedAt   *time.Time `json:"endedAt"`
	LogPath   string     `json:"logPath"`
	// LastTool is the run's latest call through Airlock (its own
	// credential's, not its agent's over other connections).
	LastTool *ToolCall `json:"lastTool,omitempty"`
	// Sessions are the MCP sessions the run's credential made calls on,
	// while it runs: its calls waiting for approval are those of these
	// sessions.
	Sessions []string `json:"sessions,omitempty"`
	// TaskTitle is the task's title as the run started, while it runs (the
	// Agents screen names the task an agent is running).
	TaskTitle string `json:"taskTitle,omitempty"`
}

// ToolCall is an agent's call as the audit saw it.
type ToolCall struct {
	Server string    `json:"server"`
	Tool   string    `json:"tool"`
	Status string    `json:"status"`
	At     time.Time `json:"at"`
}

// RunOutput is a batch of a run's output lines (EventRunOutput).
type RunOutput struct {
	RunID  string   `json:"runId"`
	TaskID string   `json:"taskId"`
	Lines  []string `json:"lines"`
	// First is the index of the first of Lines among the run's lines, the
	// first being 0; it is the line's index in the log file too (LogChunk:
	// Offset + i), except past the log's size cap, whose lines are not
	// kept. A view that read the log skips the lines of batches it has
	// already: each line is written to the file at once but sent a little
	// later, in the next batch.
	First int `json:"first"`
	// Dropped counts lines left out of the events because the run wrote
	// faster than the UI is sent; they are in the log file.
	Dropped int `json:"dropped,omitempty"`
}

// LogQuery selects part of a run's log: the last Tail lines (default 100),
// or, exclusive with it, up to 100 lines from line Offset (the first is 0).
type LogQuery struct {
	Offset *int `json:"offset"`
	Tail   *int `json:"tail"`
}

// LogChunk is part of a run's log.
type LogChunk struct {
	RunID      string   `json:"runId"`
	Status     string   `json:"status"`
	Lines      []string `json:"lines"`
	TotalLines int      `json:"totalLines"`
	// Offset is the index of the first line returned.
	Offset int `json:"offset"`
	// Truncated is set when the file has lines the chunk left out.
	Truncated bool `json:"truncated"`
}

// Record is what the runner stores of a run besides the execution record.
type Record struct {
	ID        string
	TaskID    string
	AgentID   string
	Trigger   string
	Attempt   int
	Template  string
	Command   string
	WorkDir   string
	PID       int
	Reason    string
	Active    bool // the process may be alive (cleared when it ended)
	CreatedAt time.Time
}

// Store keeps profiles, settings and run records. Errors for a missing row
// are *core.Error with core.ENotFound.
type Store interface {
	Profile(agentID string) (Profile, error)
	Profiles() ([]Profile, error)
	SaveProfile(p Profile) error
	DeleteProfile(agentID string) error
	// RunSettings returns the stored settings; ok is false when none were
	// stored yet.
	RunSettings() (s Settings, ok bool, err error)
	SaveRunSettings(s Settings) error
	CreateRun(r Record) error
	UpdateRun(r Record) error
	Run(id string) (Record, error)
	// TaskRuns returns the runs of a task, newest first.
	TaskRuns(taskID string) ([]Record, error)
	// ActiveRuns returns the runs whose process may still be alive.
	ActiveRuns() ([]Record, error)
}

// Execution is a record of the task board (seed 001's ExecutionLog).
type Execution struct {
	ID          string
	TaskID      string
	AgentID     string
	ProjectID   string
	Status      string
	StartedAt   time.Time
	CompletedAt *time.Time
	ExitCode    *int
	// LogPath is the log file, created (empty, 0600) by StartExecution.
	LogPath string
}

// Executions creates and finishes the board's execution records (package
// teams). Errors a user should see are *core.Error values.
type Executions interface {
	// StartExecution records that agentID starts running taskID and
	// creates its log file.
	StartExecution(taskID, agentID string) (Execution, error)
	// FinishExecution records how the execution ended: completed, failed
	// or stopped, with the exit code when the process exited.
	FinishExecution(id, status string, exitCode *int) error
	Execution(id string) (Execution, error)
	// TaskExecutions returns a task's executions, newest first.
	TaskExecutions(taskID string) ([]Execution, error)
}

// Task is a task of the board as the runner needs it.
type Task struct {
	ID          string
	ProjectID   string
	Title       string
	Description string
	Status      string
	AssigneeID  string
	// StatusChangedAt is when the task entered its status: auto-run counts
	// the attempts of one stay in progress from it.
	StatusChangedAt time.Time
	// BlockedReason is why a blocked task is blocked.
	BlockedReason string
	// WaitsOn are the open tasks it depends on ("id (title, status)"): it
	// cannot start while there are any.
	WaitsOn []string
}

// TaskInProgress is the status auto-run starts runs for.
const TaskInProgress = "in_progress"

// Tasks reads the task board (package teams).
type Tasks interface {
	Task(id string) (Task, error)
	// InProgress returns the tasks in progress in every project.
	InProgress() ([]Task, error)
}

// Board is the task board runs work for: its tasks and their execution
// records.
type Board interface {
	Tasks
	Executions
}

// Agents says who an agent is. authz.Service is one.
type Agents interface {
	Agent(ref string) (authz.Agent, error)
}

var _ Agents = (*authz.Service)(nil)

// TokenChecker, when a TokenIssuer is one too, says whether a run's
// credential still works: a run whose credential ended is stopped.
type TokenChecker interface {
	TokenAlive(token string) bool
}

// TokenIssuer gives a run a credential of its agent: the agent's own
// identity, never the owner's. The wiring uses an agent session per run
// (authz.Service.OpenRunSession, ended by release), so the agent's
// connection token is left alone.
type TokenIssuer interface {
	// HasToken reports whether the agent has a connection token at all:
	// the user made it connectable. A run of an agent without one is
	// refused.
	HasToken(agentID string) (bool, error)
	// RunToken returns a credential identifying agentID, for one run on a
	// task of projectID (task purpose).
	RunToken(agentID, projectID string) (RunCredential, error)
}

// RunCredential is one run's credential of its agent.
type RunCredential struct {
	// Token is the bearer token the run's MCP config carries.
	Token string
	// Session is the agent session the token is (the audit names it for
	// each call the run makes): the run's own calls are told apart from
	// calls its agent makes over other connections.
	Session string
	// Release ends the credential; the runner calls it once the run ended.
	Release func()
}
