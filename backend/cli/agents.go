package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/teams"
)

const agentsUsage = `usage: airlock agents <command> [flags]

Manage the agents that call tools through Airlock: their place in the
hierarchy (owner → coordinators, managers → workers), status, role,
projects and secrets. Changes are written to the database; a running
Airlock picks them up at once.

every command takes:
  --data-dir DIR    the data directory (default $AIRLOCK_DATA_DIR, else
                    ~/.config/airlock); a running Airlock on it applies changes at once

commands:
  list    [--json]                       every agent
  add     NAME [--kind K] [--role R] [--parent P] [--project X]... [--human] [--compact] [--json]
                                         add an agent; prints its id, token and passkey
                                         (shown this once: only their hashes are kept)
  update  NAME [--name N] [--kind K] [--role R] [--parent P] [--project X]... [--human=B]
               [--compact=B] [--disable-tool S/T]... [--enable-tool S/T]... [--json]
  rm      NAME...                        delete agents (not one with child agents)
  suspend NAME...                        refuse everything the agents ask, at once
  resume  NAME...                        make the agents active again
  token   NAME [--rotate] [--json]       show the agent's tokens; --rotate replaces them
                                         with a new one, printed this once
  passkey NAME [--json]                  give the agent a new passkey, printed this once

NAME is an agent's name or id. Kinds: coordinator, manager, worker.
`

// RunAgents runs `airlock agents ...` against db. knownServers lists the
// server ids a tool switch may name (see KnownServers).
func RunAgents(ctx context.Context, db *store.DB, knownServers func() []string, args []string, stdout, stderr io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, agentsUsage)
		return core.Errorf(core.EInvalid, "missing agents command").WithHint("see 'airlock agents -h'")
	}
	cmd, rest := args[0], args[1:]
	var run func(*authz.Service, []string, io.Writer) error
	switch cmd {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, agentsUsage)
		return nil
	case "list", "ls":
		run = agentsList
	case "add":
		run = agentsAdd
	case "update":
		run = func(s *authz.Service, a []string, w io.Writer) error {
			release := func(agentID string) ([]teams.Released, error) {
				t, err := teams.New(store.NewTeams(db), s, teams.Options{})
				if err != nil {
					return nil, err
				}
				return t.ReleaseTasksOutside(agentID)
			}
			return agentsUpdate(s, toolChecker(db, knownServers), release, a, w)
		}
	case "rm", "remove", "delete":
		run = func(s *authz.Service, a []string, w io.Writer) error {
			return agentsRemove(s, store.NewTeams(db), a, w)
		}
	case "suspend":
		run = func(s *authz.Service, a []string, w io.Writer) error {
			return agentsStatus(s, a, w, authz.StatusSuspended)
		}
	case "resume":
		run = func(s *authz.Service, a []string, w io.Writer) error {
			return agentsStatus(s, a, w, authz.StatusActive)
		}
	case "token":
		run = agentsToken
	case "passkey":
		run = agentsPasskey
	default:
		return core.Errorf(core.EInvalid, "unknown agents command %q", cmd).WithHint("see 'airlock agents -h'")
	}
	svc, err := authz.New(store.NewAgents(db), authz.Options{})
	if err != nil {
		return err
	}
	return done(run(svc, rest, stdout))
}

// flagSet returns a quiet flag set for `airlock agents|roles NAME`.
func flagSet(name, usage string) (command, *flag.FlagSet) {
	c := command{name: name, usage: usage}
	var unused string // --data-dir was taken out by main; accept it anyway
	return c, c.newFlags(&unused)
}

var agentsListCmd = command{name: "agents list", usage: "agents list [--json]\n\nList every agent."}

func agentsList(svc *authz.Service, args []string, stdout io.Writer) error {
	c, fs := flagSet(agentsListCmd.name, agentsListCmd.usage)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return c.usageError("unexpected argument %q", pos[0])
	}
	agents, err := svc.Agents()
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, agents)
	}
	names := map[string]string{}
	for _, a := range agents {
		names[a.ID] = a.Name
	}
	projects, err := svc.Projects()
	if err != nil {
		return err
	}
	pnames := map[string]string{}
	for _, p := range projects {
		pnames[p.ID] = p.Name
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tID\tKIND\tPARENT\tSTATUS\tROLE\tPROJECTS\tNOTES")
	for _, a := range agents {
		var ps []string
		for _, id := range a.Projects {
			ps = append(ps, pnames[id])
		}
		var notes []string
		if a.Human {
			notes = append(notes, "human")
		}
		if a.Compact {
			notes = append(notes, "compact")
		}
		for _, t := range a.DisabledTools {
			notes = append(notes, "off: "+t.Server+"/"+t.Tool)
		}
		parent := names[a.ParentID]
		if parent == "" {
			parent = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Name, a.ID, a.Kind, parent, a.Status, a.Role,
			orDash(strings.Join(ps, ",")), strings.Join(notes, "; "))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// repeated is a repeatable string flag.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

var agentsAddCmd = command{name: "agents add", usage: `agents add NAME [flags]

Add an agent and print its id, its token (for "Authorization: Bearer") and
its passkey (for authenticate). Both are shown this once.`}

func agentsAdd(svc *authz.Service, args []string, stdout io.Writer) error {
	c, fs := flagSet(agentsAddCmd.name, agentsAddCmd.usage)
	kind := fs.String("kind", authz.KindWorker, "coordinator, manager or worker")
	role := fs.String("role", "", "permission role (default: the role marked default)")
	parent := fs.String("parent", "", "the agent above this one (default: the owner)")
	var projects repeated
	fs.Var(&projects, "project", "a project to assign the agent to (repeatable)")
	human := fs.Bool("human", false, "the agent is a person")
	compact := fs.Bool("compact", false, "compact mode: get_module_schema, call and batch instead of every tool")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("want exactly one NAME")
	}
	created, err := svc.CreateAgent(authz.AgentInput{Name: pos[0], Kind: *kind, Human: *human, Parent: *parent, Role: *role,
		Projects: projects, Compact: *compact})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, created)
	}
	fmt.Fprintf(stdout, "id: %s\ntoken: %s\npasskey: %s\n", created.Agent.ID, created.Token, created.Passkey)
	fmt.Fprintf(stdout, "The token and passkey are shown only now; Airlock keeps their hashes. Connect with \"Authorization: Bearer %s\".\n", created.Token)
	return nil
}

var agentsUpdateCmd = command{name: "agents update", usage: `agents update NAME [flags]

Change the given fields of an agent. --project replaces the agent's
projects (give it once per project; --project "" clears them); the open
tasks it held in a project it leaves become unassigned (each is listed),
and one in progress goes back to todo.`}

func agentsUpdate(svc *authz.Service, checkTool func(server, tool string) error, release func(agentID string) ([]teams.Released, error), args []string, stdout io.Writer) error {
	c, fs := flagSet(agentsUpdateCmd.name, agentsUpdateCmd.usage)
	name := fs.String("name", "", "new name")
	kind := fs.String("kind", "", "coordinator, manager or worker")
	role := fs.String("role", "", "permission role")
	parent := fs.String("parent", "", "the agent above this one")
	var projects, disable, enable repeated
	fs.Var(&projects, "project", "project (repeatable; replaces the agent's projects)")
	fs.Var(&disable, "disable-tool", "switch SERVER/TOOL off for this agent (repeatable)")
	fs.Var(&enable, "enable-tool", "switch SERVER/TOOL on again (repeatable)")
	// Bare --compact is true, as in agents add (found by a new-user test:
	// it wanted =true); --compact=false turns it off.
	human := fs.Bool("human", false, "a person (--human=false: an AI)")
	compact := fs.Bool("compact", false, "compact mode (--compact=false: every tool)")
	asJSON := fs.Bool("json", false, "print the agent as JSON")
	pos, _, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("want exactly one NAME")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var up authz.AgentUpdate
	if set["name"] {
		up.Name = name
	}
	if set["kind"] {
		up.Kind = kind
	}
	if set["role"] {
		up.Role = role
	}
	if set["parent"] {
		up.Parent = parent
	}
	if set["project"] {
		ps := []string{}
		for _, p := range projects {
			if p != "" {
				ps = append(ps, p)
			}
		}
		up.Projects = &ps
	}
	if set["human"] {
		up.Human = human
	}
	if set["compact"] {
		up.Compact = compact
	}
	toggles := map[bool][]authz.ToolRef{}
	for on, list := range map[bool]repeated{false: disable, true: enable} {
		for _, st := range list {
			srv, tool, ok := strings.Cut(st, "/")
			if !ok {
				// The name agents see, server__tool, names it too.
				srv, tool, ok = core.SplitExposed(st)
			}
			if !ok || srv == "" || tool == "" {
				return c.usageError("%q: want SERVER/TOOL (or SERVER__TOOL, as agents see it)", st)
			}
			if !on {
				// Switching on is always allowed: it clears a stale switch.
				if err := checkTool(srv, tool); err != nil {
					return err
				}
			}
			toggles[on] = append(toggles[on], authz.ToolRef{Server: srv, Tool: tool})
		}
	}
	a, err := svc.Agent(pos[0])
	if err != nil {
		return err
	}
	if up != (authz.AgentUpdate{}) {
		if a, err = svc.UpdateAgent(a.ID, up); err != nil {
			return err
		}
	}
	for _, on := range []bool{false, true} {
		for _, t := range toggles[on] {
			if a, err = svc.SetToolEnabled(a.ID, t.Server, t.Tool, on); err != nil {
				return err
			}
		}
	}
	var released []teams.Released
	if up.Projects != nil {
		if released, err = release(a.ID); err != nil {
			return fmt.Errorf("updated %s, but its tasks in the projects it left are still assigned to it: %w", a.Name, err)
		}
	}
	if *asJSON {
		return writeJSON(stdout, a)
	}
	fmt.Fprintf(stdout, "updated %s (%s)\n", a.Name, a.ID)
	if len(released) > 0 {
		fmt.Fprintf(stdout, "  %d open task(s) it held in projects it left are unassigned now:\n", len(released))
		for _, r := range released {
			st := r.Task.Status
			if r.WasInProgress {
				st = "in_progress → todo"
			}
			fmt.Fprintf(stdout, "    %s  %-18s  %s\n", r.Task.ID, st, r.Task.Title)
		}
	}
	return nil
}

var agentsRemoveCmd = command{name: "agents rm", usage: `agents rm NAME...

Delete agents with their tokens and sessions. Their audit records stay;
the tasks assigned to them stay on the board, unassigned (each is listed).
Their runs and run logs are deleted, and their finished tasks no longer
name them (as assignee or in the history). To keep all of that, suspend
the agent instead: airlock agents suspend NAME.`}

func agentsRemove(svc *authz.Service, tasks *store.Teams, args []string, stdout io.Writer) error {
	c, fs := flagSet(agentsRemoveCmd.name, agentsRemoveCmd.usage)
	pos, _, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return c.usageError("missing agent NAME")
	}
	// Check every name first, so a typo in the last one deletes nothing,
	// nor one that cannot be deleted (agents under it; found by a
	// regression test: the first went, the second was refused). One
	// listed after the agents under it can go with them.
	var ids []authz.Agent
	going := map[string]bool{}
	for _, ref := range pos {
		a, err := svc.Agent(ref)
		if err != nil {
			return err
		}
		if !going[a.ID] { // a name given twice goes once
			ids = append(ids, a)
		}
		going[a.ID] = true
	}
	all, err := svc.Agents()
	if err != nil {
		return err
	}
	for _, a := range ids {
		if a.ID == authz.OwnerID {
			return core.Errorf(core.EInvalid, "the owner cannot be deleted")
		}
		for _, c := range all {
			if c.ParentID == a.ID && !going[c.ID] {
				return core.Errorf(core.EConflict, "agent '%s' has agents under it ('%s', not in this list); move or delete them first", a.Name, c.Name)
			}
		}
	}
	// The deepest go first, so that each goes before the agent above it
	// (a regression test found a partial delete when the order left a
	// parent before its child).
	slices.SortStableFunc(ids, func(x, y authz.Agent) int { return depth(all, y.ID) - depth(all, x.ID) })
	for _, a := range ids {
		open, err := openTasksOf(tasks, a.ID)
		if err != nil {
			return err
		}
		if err := svc.DeleteAgent(a.ID); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %s (%s)\n", a.Name, a.ID)
		if a.ID == authz.DefaultAgentID {
			fmt.Fprintln(stdout, "  the shared agent token ('airlock token', the Connect panel) was this agent's: it works for nobody now; give each client an agent of its own")
		}
		if len(open) > 0 {
			fmt.Fprintf(stdout, "  %d open task(s) it was assigned are unassigned now:\n", len(open))
			for _, t := range open {
				fmt.Fprintf(stdout, "    %s  %-11s  %s\n", t.ID, t.Status, t.Title)
			}
		}
	}
	return nil
}

// depth is how many agents are above agent id.
func depth(all []authz.Agent, id string) int {
	parent := map[string]string{}
	for _, a := range all {
		parent[a.ID] = a.ParentID
	}
	n := 0
	for cur := parent[id]; cur != "" && n < len(all); cur = parent[cur] {
		n++
	}
	return n
}

// openTasksOf lists the tasks assigned to agentID that are not done or
// cancelled.
func openTasksOf(tasks *store.Teams, agentID string) ([]teams.Task, error) {
	list, _, err := tasks.ListTasks(teams.TaskFilter{AssigneeID: agentID, Statuses: teams.OpenStatuses()})
	return list, err
}

func agentsStatus(svc *authz.Service, args []string, stdout io.Writer, status string) error {
	verb := map[string]string{authz.StatusSuspended: "suspend", authz.StatusActive: "resume"}[status]
	c, fs := flagSet("agents "+verb, "agents "+verb+" NAME...")
	pos, _, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return c.usageError("missing agent NAME")
	}
	for _, ref := range pos {
		if _, err := svc.Agent(ref); err != nil {
			return err
		}
	}
	for _, ref := range pos {
		a, err := svc.SetStatus(ref, status)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s is %s\n", a.Name, a.Status)
	}
	return nil
}

var agentsTokenCmd = command{name: "agents token", usage: `agents token NAME [--rotate] [--json]

Without --rotate, list the agent's tokens (their first characters; Airlock
cannot show a token again). --rotate replaces them with a new token, printed
this once; agents using the old one are refused from their next request.`}

func agentsToken(svc *authz.Service, args []string, stdout io.Writer) error {
	c, fs := flagSet(agentsTokenCmd.name, agentsTokenCmd.usage)
	rotate := fs.Bool("rotate", false, "replace the agent's tokens with a new one")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("want exactly one NAME")
	}
	if *rotate {
		a, err := svc.Agent(pos[0])
		if err != nil {
			return err
		}
		tok, err := svc.RotateToken(a.ID)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(stdout, map[string]string{"agentId": a.ID, "token": tok})
		}
		fmt.Fprintln(stdout, tok)
		return nil
	}
	toks, err := svc.Tokens(pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, toks)
	}
	if len(toks) == 0 {
		fmt.Fprintln(stdout, "no tokens; make one with --rotate")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOKEN\tCREATED\tNOTES")
	for _, t := range toks {
		note := ""
		if t.Legacy {
			note = "the agent-token file ('airlock token')"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Prefix, t.CreatedAt.Format("2006-01-02 15:04:05Z07:00"), note)
	}
	return tw.Flush()
}

var agentsPasskeyCmd = command{name: "agents passkey", usage: `agents passkey NAME [--json]

Give the agent a new passkey (for authenticate), printed this once. Sessions
opened with the old one stay open until they end.`}

func agentsPasskey(svc *authz.Service, args []string, stdout io.Writer) error {
	c, fs := flagSet(agentsPasskeyCmd.name, agentsPasskeyCmd.usage)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("want exactly one NAME")
	}
	a, err := svc.Agent(pos[0])
	if err != nil {
		return err
	}
	pk, err := svc.RotatePasskey(a.ID)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, map[string]string{"agentId": a.ID, "passkey": pk})
	}
	fmt.Fprintln(stdout, pk)
	return nil
}

// toolChecker returns the check of --disable-tool SERVER/TOOL: the server
// must be configured (or be a built-in one), and the tool one it has
// listed. A configured server that never listed its tools (Airlock has not
// run it yet) takes any tool name: there is nothing to check it against.
func toolChecker(db *store.DB, knownServers func() []string) func(server, tool string) error {
	return func(server, tool string) error {
		if server == authz.Server {
			return core.Errorf(core.EInvalid, "Airlock's own tools cannot be switched off per agent; they follow the agent's kind and role").
				WithHint("change the agent's role or kind ('airlock agents update NAME --role R')")
		}
		var known []string
		if knownServers != nil {
			for _, id := range knownServers() {
				if id != authz.Server {
					known = append(known, id)
				}
			}
		}
		if !slices.Contains(known, server) {
			return core.Errorf(core.ENotFound, "no server %q (servers: %s)", server, strings.Join(known, ", ")).
				WithHint("add it first ('airlock servers add'), or check the spelling")
		}
		tools := map[string][]string{
			builtin.ServerFileRead:  {builtin.ToolFileRead},
			builtin.ServerFileWrite: {builtin.ToolFileWrite},
			builtin.ServerShellExec: {builtin.ToolShellExec},
		}[server]
		if tools == nil {
			pinned, err := store.NewPins(db).All()
			if err != nil {
				return err
			}
			for _, p := range pinned {
				if p.ServerID == server && p.ToolName != "" {
					tools = append(tools, p.ToolName)
				}
			}
		}
		if len(tools) == 0 || slices.Contains(tools, tool) {
			return nil
		}
		slices.Sort(tools)
		return core.Errorf(core.ENotFound, "server %q has no tool %q (its tools: %s)", server, tool, strings.Join(tools, ", "))
	}
}
