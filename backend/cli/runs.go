package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/instance"
	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/store"
)

const runsUsage = `usage: airlock runs <command> [flags]

Agent runs: Airlock launches the CLI of the AI agent a task is assigned to,
connected to Airlock as that agent, and records the run's output. Runs live
in the running Airlock, so these commands ask the Airlock running on the
data directory (start one with 'airlock serve'); templates works without.

commands:
  templates [--json]                  the launchers and what each relies on
  profile AGENT [--json]              an agent's launcher profile
  set-profile AGENT --template T [--command C] [--arg A]... [--extra-arg A]...
              [--workdir DIR] [--model M] [--env K=V]... [--prompt P] [--json]
                                      set it (checked: placeholders, folder)
  settings [--auto=on|off] [--max-concurrent N] [--max-attempts N]
           [--backoff SECONDS] [--grace SECONDS] [--json]
                                      show or change auto-run
  start TASK [--json]                 run the task's agent for it
  stop RUN [--json]                   stop a run (SIGTERM, then SIGKILL)
  list TASK [--json]                  the runs of a task, newest first
  live [--json]                       the runs alive now
  log RUN [--tail N | --offset N] [--json]
                                      read a run's log

AGENT is an agent's name or id. Templates: claude-code, codex, gemini,
scripted (airlock agent-script), custom. Placeholders such as {{prompt}},
{{mcp_config}} and {{task_id}} are listed by 'airlock runs templates'.
`

// callTimeout bounds one call to the running Airlock (a stop waits for the
// grace period).
const callTimeout = 5 * time.Minute

// RunRuns runs `airlock runs ...` against the Airlock running on dataDir.
func RunRuns(ctx context.Context, dataDir string, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, runsUsage)
		return core.Errorf(core.EInvalid, "missing runs command").WithHint("see 'airlock runs -h'")
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	call := func(method string, out any, args ...any) error {
		err := instance.Call(ctx, dataDir, "Runs."+method, args, out)
		switch core.ErrorCode(err) {
		case core.EUnavailable:
			return core.Errorf(core.EUnavailable, "%s", core.ErrorMessage(err)).
				WithHint("runs live in the running Airlock: start it with 'airlock serve' (or the desktop app) on this data directory")
		case "task_not_found":
			// The hint the team tools give an agent (get_my_tasks) is not
			// the person's.
			return core.Errorf("task_not_found", "%s", core.ErrorMessage(err)).
				WithHint("see the task ids with 'airlock tasks list --project P'")
		}
		return err
	}
	// Runs and profiles carry agent ids; tables show names.
	name := func(id string) string { return id }
	named := func() {
		// Read from the database, as 'airlock agents list' does: the
		// instance endpoint's token is kept to runs on purpose.
		path := filepath.Join(dataDir, store.FileName)
		if _, err := os.Stat(path); err != nil {
			return // no database yet: the ids will do
		}
		db, err := store.Open(path)
		if err != nil {
			return
		}
		defer db.Close()
		agents, err := store.NewAgents(db).ListAgents()
		if err != nil {
			return
		}
		byID := map[string]string{}
		for _, a := range agents {
			byID[a.ID] = a.Name
		}
		name = func(id string) string {
			if n, ok := byID[id]; ok {
				return n
			}
			return id
		}
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, runsUsage)
		return nil
	case "templates":
		return done(runsTemplates(rest, stdout))
	case "profile":
		named()
		return done(runsProfile(call, name, rest, stdout))
	case "set-profile":
		named()
		return done(runsSetProfile(call, name, rest, stdout, stderr))
	case "settings":
		return done(runsSettings(call, rest, stdout))
	case "start", "stop":
		named()
		return done(runsStartStop(call, name, cmd, rest, stdout))
	case "list", "live":
		named()
		return done(runsList(call, name, cmd, rest, stdout))
	case "log":
		return done(runsLog(call, rest, stdout))
	}
	fmt.Fprint(stderr, runsUsage)
	return core.Errorf(core.EInvalid, "unknown runs command %q", cmd).WithHint("see 'airlock runs -h'")
}

type caller func(method string, out any, args ...any) error

// positional parses fs and wants exactly n positional arguments.
func positional(c command, fs *flag.FlagSet, args []string, stdout io.Writer, n int) ([]string, error) {
	pos, _, err := c.parse(fs, args, stdout)
	if err != nil {
		return nil, err
	}
	if len(pos) != n {
		// Say what is missing, as the command's usage names it.
		synopsis := strings.SplitN(c.usage, "\n", 2)[0]
		return nil, c.usageError("want %d argument(s), got %d (usage: airlock %s)", n, len(pos), synopsis)
	}
	return pos, nil
}

func runsTemplates(args []string, stdout io.Writer) error {
	c, fs := flagSet("runs templates", "runs templates [--json]\n\nThe launchers, and the placeholders they may use.")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := positional(c, fs, args, stdout, 0); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, map[string]any{"templates": runner.Templates(), "placeholders": runner.Placeholders})
	}
	for _, t := range runner.Templates() {
		cmdline := "(your command and arguments)"
		if !t.Custom {
			cmdline = strings.Join(append([]string{t.Command}, t.Args...), " ")
		}
		fmt.Fprintf(stdout, "%s — %s\n  %s\n  %s\n\n", t.ID, t.Name, cmdline, t.Notes)
	}
	fmt.Fprintln(stdout, "placeholders:")
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, k := range sortedMapKeys(runner.Placeholders) {
		fmt.Fprintf(tw, "  {{%s}}\t%s\n", k, runner.Placeholders[k])
	}
	return tw.Flush()
}

func sortedMapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func runsProfile(call caller, name func(id string) string, args []string, stdout io.Writer) error {
	c, fs := flagSet("runs profile", "runs profile AGENT [--json]\n\nShow an agent's launcher profile.")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := positional(c, fs, args, stdout, 1)
	if err != nil {
		return err
	}
	var p runner.Profile
	if err := call("Profile", &p, pos[0]); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, p)
	}
	printProfile(stdout, name, p)
	return nil
}

func printProfile(w io.Writer, name func(id string) string, p runner.Profile) {
	fmt.Fprintf(w, "agent: %s\ntemplate: %s\n", agentLabel(name, p.AgentID), p.Template)
	if p.Command != "" {
		fmt.Fprintf(w, "command: %s\n", p.Command)
	}
	if len(p.Args) > 0 {
		fmt.Fprintf(w, "args: %s\n", strings.Join(p.Args, " "))
	}
	if len(p.ExtraArgs) > 0 {
		fmt.Fprintf(w, "extra args: %s\n", strings.Join(p.ExtraArgs, " "))
	}
	if p.WorkDir != "" {
		fmt.Fprintf(w, "working directory: %s\n", p.WorkDir)
	}
	if p.Model != "" {
		fmt.Fprintf(w, "model: %s\n", p.Model)
	}
	for _, k := range sortedMapKeys(p.Env) {
		fmt.Fprintf(w, "env: %s=%s\n", k, p.Env[k])
	}
	if p.Prompt != "" {
		fmt.Fprintf(w, "prompt: %s\n", p.Prompt)
	}
}

func runsSetProfile(call caller, name func(id string) string, args []string, stdout, stderr io.Writer) error {
	c, fs := flagSet("runs set-profile", "runs set-profile AGENT --template T [flags]\n\nSet an agent's launcher profile. It is checked by the running Airlock: an unknown\nplaceholder or a folder outside the ones allowed for agents is refused.")
	tmpl := fs.String("template", "", "claude-code, codex, gemini, scripted or custom")
	command := fs.String("command", "", "the program (custom; or a full path replacing a built-in's)")
	var argsF, extra repeated
	fs.Var(&argsF, "arg", "an argument of the custom command (repeatable; placeholders allowed)")
	fs.Var(&extra, "extra-arg", "an extra argument (repeatable; the scripted agent's script file)")
	workdir := fs.String("workdir", "", "the working directory (inside a folder allowed for agents)")
	model := fs.String("model", "", "the model, passed by the template's model flag")
	env := keyValues{}
	fs.Var(env, "env", "K=V added to the run's environment (repeatable)")
	prompt := fs.String("prompt", "", "the prompt template (default: Airlock's)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := positional(c, fs, args, stdout, 1)
	if err != nil {
		return err
	}
	if *tmpl == "" {
		return c.usageError("--template is required")
	}
	p := runner.Profile{Template: *tmpl, Command: *command, Args: argsF, ExtraArgs: extra, WorkDir: *workdir, Model: *model,
		Env: map[string]string(env), Prompt: *prompt}
	var saved runner.Profile
	if err := call("SetProfile", &saved, pos[0], p); err != nil {
		return err
	}
	// Saved all the same, as on the profile screen: the program may be
	// installed later (found by a new-user test: the CLI said nothing).
	var check runner.CommandCheck
	if call("CheckCommand", &check, saved) == nil && check.Warning != "" {
		fmt.Fprintf(stderr, "warning: %s: the profile is saved, but its runs cannot start until the program is found\n", check.Warning)
		if check.Hint != "" {
			fmt.Fprintf(stderr, "hint: %s\n", check.Hint)
		}
	}
	if *asJSON {
		return writeJSON(stdout, saved)
	}
	printProfile(stdout, name, saved)
	return nil
}

// switchFlag is a flag taking on/off (or true/false).
type switchFlag struct {
	set bool
	on  bool
}

func (o *switchFlag) String() string { return fmt.Sprint(o.on) }
func (o *switchFlag) Set(v string) error {
	switch strings.ToLower(v) {
	case "on", "true", "yes", "1":
		o.set, o.on = true, true
	case "off", "false", "no", "0":
		o.set, o.on = true, false
	default:
		return fmt.Errorf("%q is not on or off", v)
	}
	return nil
}

func runsSettings(call caller, args []string, stdout io.Writer) error {
	c, fs := flagSet("runs settings", "runs settings [flags]\n\nShow or change auto-run: runs started for tasks in progress assigned to AI agents.")
	var auto switchFlag
	fs.Var(&auto, "auto", "auto-run on or off")
	maxConc := fs.Int("max-concurrent", 0, "runs auto-run keeps alive at most")
	maxAtt := fs.Int("max-attempts", 0, "failed automatic runs of one task before auto-run leaves it")
	backoff := fs.Int("backoff", 0, "seconds before the second automatic attempt (doubling after)")
	grace := fs.Int("grace", 0, "seconds between SIGTERM and SIGKILL when a run is stopped")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := positional(c, fs, args, stdout, 0); err != nil {
		return err
	}
	var s runner.Settings
	if err := call("Settings", &s); err != nil {
		return err
	}
	// A flag given is a change, whatever its value: 0 or -5 goes to the
	// running Airlock, which says what the range is (they were ignored).
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if auto.set {
		s.AutoRun = auto.on
	}
	if set["max-concurrent"] {
		s.MaxConcurrent = *maxConc
	}
	if set["max-attempts"] {
		s.MaxAttempts = *maxAtt
	}
	if set["backoff"] {
		s.RetryBackoffSeconds = *backoff
	}
	if set["grace"] {
		s.StopGraceSeconds = *grace
	}
	if len(set) > 0 && !(len(set) == 1 && set["json"]) {
		if err := call("SetSettings", &s, s); err != nil {
			return err
		}
	}
	if *asJSON {
		return writeJSON(stdout, s)
	}
	fmt.Fprintf(stdout, "auto-run: %s\nmax concurrent: %d\nmax attempts: %d\nretry backoff: %ds (doubling)\nstop grace: %ds\n",
		onOff(s.AutoRun), s.MaxConcurrent, s.MaxAttempts, s.RetryBackoffSeconds, s.StopGraceSeconds)
	return nil
}

func runsStartStop(call caller, name func(id string) string, cmd string, args []string, stdout io.Writer) error {
	what := "TASK"
	if cmd == "stop" {
		what = "RUN"
	}
	c, fs := flagSet("runs "+cmd, "runs "+cmd+" "+what+" [--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := positional(c, fs, args, stdout, 1)
	if err != nil {
		return err
	}
	var run runner.Run
	method := "Start"
	if cmd == "stop" {
		method = "Stop"
	}
	if err := call(method, &run, pos[0]); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, run)
	}
	printRuns(stdout, name, []runner.Run{run})
	return nil
}

func runsList(call caller, name func(id string) string, cmd string, args []string, stdout io.Writer) error {
	n, usage := 1, "runs list TASK [--json]\n\nThe runs of a task, newest first."
	if cmd == "live" {
		n, usage = 0, "runs live [--json]\n\nThe runs alive now."
	}
	c, fs := flagSet("runs "+cmd, usage)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := positional(c, fs, args, stdout, n)
	if err != nil {
		return err
	}
	var list []runner.Run
	if cmd == "live" {
		err = call("Live", &list)
	} else {
		err = call("List", &list, pos[0])
	}
	if err != nil {
		return err
	}
	if *asJSON {
		if list == nil {
			list = []runner.Run{}
		}
		return writeJSON(stdout, list)
	}
	printRuns(stdout, name, list)
	return nil
}

func printRuns(w io.Writer, name func(id string) string, list []runner.Run) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tTASK\tAGENT\tSTATUS\tEXIT\tSTARTED\tTRIGGER\tREASON")
	for _, r := range list {
		exit := "-"
		if r.ExitCode != nil {
			exit = fmt.Sprint(*r.ExitCode)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.TaskID, name(r.AgentID), r.Status, exit,
			r.StartedAt.Local().Format(time.DateTime), r.Trigger, r.Reason)
	}
	tw.Flush()
}

func runsLog(call caller, args []string, stdout io.Writer) error {
	c, fs := flagSet("runs log", "runs log RUN [--tail N | --offset N] [--json]\n\nRead a run's log: its last lines (100 unless told), or the lines from an offset.")
	tail := fs.Int("tail", 0, "the last N lines")
	offset := fs.Int("offset", -1, "the lines from line N on (the first is 0)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := positional(c, fs, args, stdout, 1)
	if err != nil {
		return err
	}
	var q runner.LogQuery
	if *tail != 0 {
		q.Tail = tail
	}
	if *offset >= 0 {
		q.Offset = offset
	}
	var chunk runner.LogChunk
	if err := call("Log", &chunk, pos[0], q); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, chunk)
	}
	for _, l := range chunk.Lines {
		fmt.Fprintln(stdout, l)
	}
	return nil
}

// agentLabel is "name (id)", or the id when no name is known.
func agentLabel(name func(id string) string, id string) string {
	if n := name(id); n != id {
		return n + " (" + id + ")"
	}
	return id
}
