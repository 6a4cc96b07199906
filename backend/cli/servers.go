package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/airlock-dev/airlock/backend/config"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/instance"
	"github.com/airlock-dev/airlock/backend/store"
)

const serversUsage = `usage: airlock servers <command> [flags]

Manage the downstream MCP servers in servers.json in the data directory (the
mcpServers format of Claude Desktop and Cursor). A running Airlock applies
changes at once.

every command takes:
  --data-dir DIR    the data directory (default $AIRLOCK_DATA_DIR, else
                    ~/.config/airlock); a running Airlock on it applies changes at once

commands:
  list     list the servers (--json for JSON)
  add      add a server: a command to run, or a URL
  update   change a server's timeouts, --disabled or --no-prefix
  rm       remove a server
  restart  restart a server now (a failed one too); needs the running Airlock
  changes  list changed and new tools and changed instructions that wait
           for you to accept them; needs the running Airlock
  accept   accept a changed or new tool, or changed instructions
  import   import servers from a Claude Desktop, Cursor, Claude Code or VS Code config
  export   print the servers as an mcpServers file

Run 'airlock servers <command> -h' for a command's flags.
`

// Servers runs `airlock servers <command>`: list, add, rm, import, export.
// dataDir is the data directory resolved by main; --data-dir after the
// command overrides it.
func Servers(ctx context.Context, dataDir string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, serversUsage)
		return core.Errorf(core.EInvalid, "missing servers command").WithHint("see 'airlock servers -h'")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, serversUsage)
		return nil
	case "list", "ls":
		return done(serversList(dataDir, args[1:], stdout, stderr))
	case "add":
		return done(serversAdd(dataDir, args[1:], stdout))
	case "update", "set":
		return done(serversUpdate(dataDir, args[1:], stdout))
	case "rm", "remove":
		return done(serversRemove(dataDir, args[1:], stdout))
	case "restart":
		return done(serversRestart(ctx, dataDir, args[1:], stdout))
	case "changes":
		return done(serversChanges(ctx, dataDir, args[1:], stdout))
	case "accept":
		return done(serversAccept(ctx, dataDir, args[1:], stdout))
	case "import":
		return done(serversImport(dataDir, args[1:], stdin, stdout))
	case "export":
		return done(serversExport(dataDir, args[1:], stdout))
	}
	return core.Errorf(core.EInvalid, "unknown servers command %q", args[0]).WithHint("see 'airlock servers -h'")
}

// openServers opens the servers file of dataDir. Strict callers (those that
// show the servers) fail when the file on disk is invalid, since what they
// would show is not what the file says; changes fail in the store anyway.
func openServers(dataDir string, strict bool) (*config.Store, error) {
	if dataDir == "" {
		return nil, core.Errorf(core.EInvalid, "no data directory").WithHint("pass --data-dir or set $" + config.DataDirEnv)
	}
	s, err := config.New(config.Path(dataDir), core.Discard)
	if err != nil {
		return nil, err
	}
	if st := s.State(); strict && st.Error != "" {
		return nil, core.Errorf(core.EInvalid, "%s", st.Error).WithHint("fix or remove the file")
	}
	return s, nil
}

var listCmd = command{name: "servers list", usage: `servers list [--json]

List the configured servers, sorted by id.`}

func serversList(dataDir string, args []string, stdout, stderr io.Writer) error {
	fs := listCmd.newFlags(&dataDir)
	asJSON := fs.Bool("json", false, "print JSON: an array of server configs, each with its status when Airlock runs")
	pos, _, err := listCmd.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return listCmd.usageError("unexpected argument %q", pos[0])
	}
	s, err := openServers(dataDir, true)
	if err != nil {
		return err
	}
	list := s.List()
	// The live state comes from the running Airlock, when there is one.
	var statuses []core.ServerStatus
	live := map[string]core.ServerStatus{}
	running := instance.Status(dataDir, instance.StatusServers, &statuses) == nil
	for _, st := range statuses {
		live[st.ID] = st
	}
	if *asJSON {
		// Each config as it is, plus "status" (what the table shows) when
		// a running Airlock knows it.
		out := make([]map[string]any, 0, len(list))
		for _, c := range list {
			var m map[string]any
			raw, err := json.Marshal(c)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(raw, &m); err != nil {
				return err
			}
			if st, ok := live[c.ID]; ok {
				m["status"] = map[string]any{"state": st.State, "tools": len(st.Tools), "restarts": st.Restarts,
					"lastError": st.LastError, "warnings": st.Warnings}
			}
			out = append(out, m)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(list) == 0 {
		fmt.Fprintln(stdout, "no servers yet: add one with 'airlock servers add' or 'airlock servers import'")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tTOOLS\tTRANSPORT\tCOMMAND/URL\tNOTE")
	for _, c := range list {
		target := c.URL
		if c.Command != "" {
			target = commandLine(c.Command, c.Args)
		}
		state, tools, note := "-", "-", ""
		switch st, ok := live[c.ID]; {
		case c.Disabled:
			state = "disabled"
		case !running:
			state = "(not running)"
		case ok:
			state, tools = st.State, fmt.Sprint(len(st.Tools))
			note = st.LastError
			if w := waiting(st); w != "" {
				note = strings.TrimPrefix(note+"; "+w, "; ")
			}
			if len(st.Warnings) > 0 {
				note = strings.Join(append([]string{note}, st.Warnings...), "; ")
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, state, tools, c.Transport(), target, strings.TrimPrefix(note, "; "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !running {
		fmt.Fprintln(stderr, "Airlock is not running on this data directory: no live state (start it with 'airlock' or 'airlock serve')")
	}
	return nil
}

// waiting says what of st waits for the user's accept ("" for nothing),
// pointing at the command that shows it.
func waiting(st core.ServerStatus) string {
	changed, added := 0, 0
	for _, t := range st.Tools {
		switch {
		case t.Changed == nil:
		case t.Changed.New:
			added++
		default:
			changed++
		}
	}
	var parts []string
	if changed > 0 {
		parts = append(parts, plural(changed, "tool changed", "tools changed"))
	}
	if added > 0 {
		parts = append(parts, plural(added, "new tool", "new tools"))
	}
	if st.InstructionsChanged != nil {
		parts = append(parts, "instructions changed")
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + ": see 'airlock servers changes " + st.ID + "'"
}

// commandLine renders a command and its arguments, quoting those a shell
// would split or expand, so that the line can be read unambiguously.
func commandLine(cmd string, args []string) string {
	parts := make([]string, 0, len(args)+1)
	for _, a := range append([]string{cmd}, args...) {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`*?[]{}()<>|&;#~") {
			a = strconv.Quote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

var addCmd = command{name: "servers add", usage: `servers add <id> [flags] -- <command> [args...]
       airlock servers add <id> --url URL [--type http|sse] [--header K=V ...]

Add a server: either a command to run over stdio (after --) or a URL.
The id names the server; its tools are exposed as <id>__<tool> (with
--no-prefix, under their own names).`}

func serversAdd(dataDir string, args []string, stdout io.Writer) error {
	fs := addCmd.newFlags(&dataDir)
	cfg := core.ServerConfig{Env: map[string]string{}, Headers: map[string]string{}}
	fs.StringVar(&cfg.URL, "url", "", "the server's URL (Streamable HTTP or SSE) instead of a command")
	fs.StringVar(&cfg.Type, "type", "", "transport: stdio, http, streamable-http or sse (default: stdio for a command, http for a URL)")
	fs.Var(keyValues(cfg.Env), "env", "an environment variable `K=V` for the command (repeatable)")
	fs.Var(keyValues(cfg.Headers), "header", "an HTTP header `K=V` sent to the URL (repeatable)")
	fs.BoolVar(&cfg.Disabled, "disabled", false, "add the server disabled")
	fs.BoolVar(&cfg.NoPrefix, "no-prefix", false, "expose its tools, prompts and resources under their own names, not <id>__<name> (a name another server already uses stays hidden, and the Servers screen says so)")
	fs.BoolVar(&cfg.TrustNewTools, "trust-new-tools", false, "accept tools the server adds later without asking (otherwise each new tool asks until you accept it)")
	fs.BoolVar(&cfg.Sandbox, "sandbox", false, "run the command in the kernel sandbox that keeps it out of Airlock's data directory (Linux with Landlock; it cannot create files directly in ~ or ~/.config)")
	fs.Var(seconds{&cfg.StartTimeout}, "start-timeout", "how long it may take to start and list its tools, e.g. `2m` (default 30s; a first 'npx -y' downloads its package)")
	fs.Var(seconds{&cfg.CallTimeout}, "call-timeout", "how long one call may go without an answer, e.g. `30m` (default 10m; each progress notification starts it again)")
	pos, command, err := addCmd.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return addCmd.usageError("missing server id")
	case len(pos) > 1:
		return addCmd.usageError("unexpected argument %q", pos[1]).WithHint("put the command after --, e.g. 'airlock servers add fs -- npx -y @modelcontextprotocol/server-filesystem /tmp'")
	case command != nil && len(command) == 0:
		return addCmd.usageError("no command after --")
	}
	cfg.ID = pos[0]
	if len(command) > 0 {
		cfg.Command, cfg.Args = command[0], command[1:]
	}
	if len(cfg.Env) == 0 {
		cfg.Env = nil
	}
	if len(cfg.Headers) == 0 {
		cfg.Headers = nil
	}
	if cfg.Command == "" && cfg.URL == "" {
		return addCmd.usageError("give a command after -- or a --url")
	}
	s, err := openServers(dataDir, false)
	if err != nil {
		return err
	}
	if err := s.Add(cfg); err != nil {
		return err
	}
	recordOrder(dataDir, cfg.ID)
	fmt.Fprintf(stdout, "added server %s (%s)\n", cfg.ID, cfg.Transport())
	return nil
}

// recordOrder places a server just added after the others, for the name a
// second --no-prefix server would expose too; the running Airlock (or the
// next one) reads it. A database that cannot be opened leaves the order
// to the next Airlock (by id among those added meanwhile).
func recordOrder(dataDir, id string) {
	db, err := store.Open(filepath.Join(dataDir, store.FileName))
	if err != nil {
		return
	}
	defer db.Close()
	_ = db.AddServerOrder(id)
}

// forgetOrder forgets a removed server's place, as the running Airlock
// does: added again, it comes after the others (found by a code review:
// with no Airlock running it took its old place back, and a name a second
// --no-prefix server exposes with it).
func forgetOrder(dataDir, id string) {
	path := filepath.Join(dataDir, store.FileName)
	if _, err := os.Stat(path); err != nil {
		return // no Airlock ran here: no order
	}
	db, err := store.Open(path)
	if err != nil {
		return
	}
	defer db.Close()
	_ = db.ForgetServerOrder(id)
}

var updateCmd = command{name: "servers update", usage: `servers update <id> [--start-timeout D] [--call-timeout D] [--disabled=B] [--no-prefix=B] [--trust-new-tools=B]

Change the given settings of a server; the rest stays as it is. A change of
the timeouts alone applies to the next call without restarting the server.
To change its command, URL, environment or headers, edit servers.json or
use Edit on the Servers screen.`}

func serversUpdate(dataDir string, args []string, stdout io.Writer) error {
	fs := updateCmd.newFlags(&dataDir)
	var start, call int
	fs.Var(seconds{&start}, "start-timeout", "how long it may take to start and list its tools, e.g. `2m`")
	fs.Var(seconds{&call}, "call-timeout", "how long one call may go without an answer, e.g. `30m`")
	// Bare --disabled means true, as on servers add (found by a
	// regression test); --disabled=false turns it back on.
	disabled := fs.Bool("disabled", false, "keep it but do not run it (--disabled=false: run it)")
	noPrefix := fs.Bool("no-prefix", false, "expose its tools under their own names (--no-prefix=false: as <id>__<tool>)")
	trust := fs.Bool("trust-new-tools", false, "accept tools it adds later without asking")
	sandboxed := fs.Bool("sandbox", false, "run it in the kernel sandbox that keeps it out of Airlock's data directory (--sandbox=false: not)")
	pos, rest, err := updateCmd.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return updateCmd.usageError("give exactly one server id")
	}
	if rest != nil {
		// Found by an interop test: "nothing to change" did not say why.
		return updateCmd.usageError("servers update does not change a server's command").
			WithHint("edit its command in servers.json or with Edit on the Servers screen, or remove it and add it again with 'airlock servers add " + pos[0] + " -- COMMAND'")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if len(set) == 0 {
		return updateCmd.usageError("nothing to change").WithHint("give --start-timeout, --call-timeout, --disabled, --no-prefix, --trust-new-tools or --sandbox")
	}
	s, err := openServers(dataDir, false)
	if err != nil {
		return err
	}
	cfg, err := s.Get(pos[0])
	if err != nil {
		return err
	}
	if set["start-timeout"] {
		cfg.StartTimeout = start
	}
	if set["call-timeout"] {
		cfg.CallTimeout = call
	}
	for name, v := range map[string]*bool{"disabled": disabled, "no-prefix": noPrefix, "trust-new-tools": trust, "sandbox": sandboxed} {
		if set[name] {
			*map[string]*bool{"disabled": &cfg.Disabled, "no-prefix": &cfg.NoPrefix, "trust-new-tools": &cfg.TrustNewTools, "sandbox": &cfg.Sandbox}[name] = *v
		}
	}
	if err := s.Update(cfg); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "updated server %s\n", cfg.ID)
	return nil
}

var rmCmd = command{name: "servers rm", usage: `servers rm <id>...

Remove servers. Rules that name it stay (each is listed): they would
apply to a server added later under the same id; remove them with
airlock rules rm ID.`}

func serversRemove(dataDir string, args []string, stdout io.Writer) error {
	fs := rmCmd.newFlags(&dataDir)
	pos, _, err := rmCmd.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return rmCmd.usageError("give at least one server id")
	}
	pos = slices.Compact(slices.Sorted(slices.Values(pos)))
	s, err := openServers(dataDir, false)
	if err != nil {
		return err
	}
	// Every id first, so that a typo in the last removes nothing (a
	// broken file refuses every change anyway, saying why).
	for _, id := range pos {
		if _, err := s.Get(id); err != nil && s.State().Error == "" {
			if len(pos) > 1 {
				return core.Errorf(core.ErrorCode(err), "%s; nothing was removed", core.ErrorMessage(err))
			}
			return err
		}
	}
	for _, id := range pos {
		if err := s.Remove(id); err != nil {
			return err
		}
		forgetOrder(dataDir, id)
		fmt.Fprintf(stdout, "removed server %s\n", id)
		// The rules that name it outlive it: a server added later under
		// the same id would get them (found by a new-user test: an
		// auto-approve rule applied to another program added as "slow").
		if left := rulesNaming(dataDir, id); len(left) > 0 {
			fmt.Fprintf(stdout, "  %d rule(s) still name server %s and would apply to a server added later under that id:\n", len(left), id)
			ids := make([]string, 0, len(left))
			for _, r := range left {
				what := "asks"
				if r.AutoApprove {
					what = "auto-approves"
				}
				fmt.Fprintf(stdout, "    %s  %s: %s\n", r.ID, what, r.Describe())
				ids = append(ids, r.ID)
			}
			fmt.Fprintf(stdout, "  remove them with: airlock rules rm %s\n", strings.Join(ids, " "))
		}
	}
	return nil
}

// rulesNaming lists the rules of dataDir that name server id; none when
// the database cannot be read (the server is removed either way).
func rulesNaming(dataDir, id string) []hitl.Rule {
	path := filepath.Join(dataDir, store.FileName)
	if _, err := os.Stat(path); err != nil {
		return nil // no Airlock ran here: no rules
	}
	db, err := store.Open(path)
	if err != nil {
		return nil
	}
	defer db.Close()
	all, err := store.NewRules(db).ListRules()
	if err != nil {
		return nil
	}
	var out []hitl.Rule
	for _, r := range all {
		if r.ServerID != nil && *r.ServerID == id {
			out = append(out, r)
		}
	}
	return out
}

var restartCmd = command{name: "servers restart", usage: `servers restart ID

Stop the server and start it again now, clearing a failed state (Airlock
gives up on a server after 5 failed starts in a row). Asks the Airlock
running on the data directory.`}

func serversRestart(ctx context.Context, dataDir string, args []string, stdout io.Writer) error {
	fs := restartCmd.newFlags(&dataDir)
	pos, _, err := restartCmd.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return restartCmd.usageError("give exactly one server id")
	}
	if err := instance.Call(ctx, dataDir, "Servers.Restart", []any{pos[0]}, nil); err != nil {
		if core.ErrorCode(err) == core.EUnavailable {
			return core.Errorf(core.EUnavailable, "%s", core.ErrorMessage(err)).
				WithHint("servers run in the running Airlock: start it with 'airlock serve' (or the desktop app) on this data directory")
		}
		return err
	}
	fmt.Fprintf(stdout, "restarted server %s ('airlock servers list' shows its state)\n", pos[0])
	return nil
}

var importCmd = command{name: "servers import", usage: `servers import [--json] FILE|-
       airlock servers import --from claude|cursor|claude-code|vscode

Import servers from an MCP client's config: a Claude Desktop or Claude Code
config, a Cursor mcp.json or a VS Code mcp.json; - reads standard input.
Each entry's key becomes the server id; every field of an entry is kept.
Entries whose id is taken or that are invalid are skipped with a reason.`}

func serversImport(dataDir string, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := importCmd.newFlags(&dataDir)
	from := fs.String("from", "", "import from this client's config on this machine: claude, cursor, claude-code or vscode")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	pos, _, err := importCmd.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	var name string
	var data []byte
	switch {
	case len(pos) > 1:
		return importCmd.usageError("give one file")
	case len(pos) == 1 && *from != "":
		return importCmd.usageError("give a file or --from, not both")
	case len(pos) == 0 && *from == "":
		return importCmd.usageError("give a file, - for standard input, or --from claude|cursor|claude-code|vscode")
	case *from != "":
		home, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("find home directory: %w", err)
		}
		src, err := findSource(home, *from)
		if err != nil {
			return err
		}
		name = src.Path
		if data, err = os.ReadFile(src.Path); err != nil {
			return fmt.Errorf("read %s config: %w", src.Name, err)
		}
	case pos[0] == "-":
		name = "standard input"
		if data, err = io.ReadAll(stdin); err != nil {
			return fmt.Errorf("read standard input: %w", err)
		}
	default:
		name = pos[0]
		if data, err = os.ReadFile(pos[0]); err != nil {
			if os.IsNotExist(err) {
				return core.Errorf(core.ENotFound, "file %s not found", pos[0])
			}
			return fmt.Errorf("read %s: %w", pos[0], err)
		}
	}
	s, err := openServers(dataDir, false)
	if err != nil {
		return err
	}
	res, err := s.Import(data)
	if err != nil {
		return fmt.Errorf("import %s: %w", name, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	for _, id := range res.Added {
		fmt.Fprintf(stdout, "added    %s\n", id)
	}
	for _, sk := range res.Skipped {
		fmt.Fprintf(stdout, "skipped  %s: %s\n", sk.ID, sk.Reason)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stdout, "warning  %s\n", w)
	}
	fmt.Fprintf(stdout, "%d added, %d skipped from %s\n", len(res.Added), len(res.Skipped), name)
	return nil
}

// findSource returns the config of the client named id, if it exists.
func findSource(home, id string) (config.Source, error) {
	for _, s := range config.DiscoverImportSources(home) {
		if s.ID == id {
			return s, nil
		}
	}
	var known []string
	for _, s := range config.KnownImportSources(home, runtime.GOOS) {
		known = append(known, s.ID)
		if s.ID == id {
			return config.Source{}, core.Errorf(core.ENotFound, "no %s config found at %s", s.Name, s.Path)
		}
	}
	return config.Source{}, importCmd.usageError("unknown --from %q; use one of %s", id, strings.Join(known, ", "))
}

var exportCmd = command{name: "servers export", usage: `servers export

Print the servers as an mcpServers file (for Claude Desktop, Cursor or another
Airlock), with every field of every entry.`}

func serversExport(dataDir string, args []string, stdout io.Writer) error {
	fs := exportCmd.newFlags(&dataDir)
	pos, _, err := exportCmd.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return exportCmd.usageError("unexpected argument %q", pos[0])
	}
	s, err := openServers(dataDir, true)
	if err != nil {
		return err
	}
	data, err := s.Export()
	if err != nil {
		return err
	}
	_, err = stdout.Write(data)
	return err
}

// plural is "1 one" or "n many".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
