package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/teams"
)

// The Board and Chat screens for scripts and headless machines: what they
// show (from the same teams code) and what the person does there, as the
// owner.

const projectsUsage = `usage: airlock projects <command> [flags]

The projects agents work in, with their tasks counted by status (the Board
screen's list).

commands:
  list  [--json]                          every project
  add   NAME [--description D] [--json]   add a project (assign agents with 'airlock agents update')
`

const tasksUsage = `usage: airlock tasks <command> [flags]

The tasks of a project, as the Board screen shows them. Changes are made as
the owner, the top of the hierarchy, and recorded as the owner's; the agents
concerned are notified as for a change on the board.

commands:
  list    --project P [--status S] [--assignee A] [--json]
  show    TASK [--json]                 the task with its history, chat-driven
                                        changes, conversations and runs
  add     TITLE --project P [--description D] [--priority P] [--status backlog|todo]
          [--assignee A] [--parent TASK] [--depends-on TASK]... [--json]
  move    TASK STATUS [--reason R] [--json]
  assign  TASK AGENT [--json]           AGENT "" takes the task away
  update  TASK [--title T] [--description D] [--priority P] [--depends-on TASK]... [--parent TASK] [--json]
  log     EXECUTION [--tail N] [--json] the end of a run's log

Statuses: backlog, todo, in_progress, blocked, done, cancelled.
Priorities: low, medium, high, urgent.
`

const chatUsage = `usage: airlock chat <command> [flags]

The conversations of agents, as the Chat screen shows them. The owner may
write into any conversation and start one with any agent.

commands:
  list   [--project P] [--json]         conversations, the most recent first
  show   CONVERSATION [--limit N] [--json]
  send   CONVERSATION MESSAGE [--json]  write as the owner
  start  MESSAGE --project P --with AGENT [--with AGENT]... [--topic T] [--json]
  end    CONVERSATION [--json]
`

// teamServices builds the services a team command works with.
func teamServices(db *store.DB) (*teams.Service, *authz.Service, error) {
	az, err := authz.New(store.NewAgents(db), authz.Options{})
	if err != nil {
		return nil, nil, err
	}
	svc, err := teams.New(store.NewTeams(db), az, teams.Options{})
	if err != nil {
		return nil, nil, err
	}
	return svc, az, nil
}

type teamCmd func(svc *teams.Service, az *authz.Service, args []string, w io.Writer) error

func runTeam(ctx context.Context, db *store.DB, area, usage string, cmds map[string]teamCmd, args []string, stdout, stderr io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return core.Errorf(core.EInvalid, "missing %s command", area).WithHint("see 'airlock " + area + " -h'")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	run, ok := cmds[args[0]]
	if !ok {
		return core.Errorf(core.EInvalid, "unknown %s command %q", area, args[0]).WithHint("see 'airlock " + area + " -h'")
	}
	svc, az, err := teamServices(db)
	if err != nil {
		return err
	}
	return done(run(svc, az, args[1:], stdout))
}

// RunProjects runs `airlock projects ...` against db.
func RunProjects(ctx context.Context, db *store.DB, args []string, stdout, stderr io.Writer) error {
	return runTeam(ctx, db, "projects", projectsUsage, map[string]teamCmd{
		"list": projectsList, "ls": projectsList, "add": projectsAdd,
	}, args, stdout, stderr)
}

// RunTasks runs `airlock tasks ...` against db.
func RunTasks(ctx context.Context, db *store.DB, args []string, stdout, stderr io.Writer) error {
	return runTeam(ctx, db, "tasks", tasksUsage, map[string]teamCmd{
		"list": tasksList, "ls": tasksList, "show": tasksShow, "add": tasksAdd, "move": tasksMove,
		"assign": tasksAssign, "update": tasksUpdate, "log": tasksLog,
	}, args, stdout, stderr)
}

// RunChat runs `airlock chat ...` against db.
func RunChat(ctx context.Context, db *store.DB, args []string, stdout, stderr io.Writer) error {
	return runTeam(ctx, db, "chat", chatUsage, map[string]teamCmd{
		"list": chatList, "ls": chatList, "show": chatShow, "send": chatSend, "start": chatStart, "end": chatEnd,
	}, args, stdout, stderr)
}

func projectsList(svc *teams.Service, _ *authz.Service, args []string, w io.Writer) error {
	c, fs := flagSet("projects list", "projects list [--json]\n\nList every project with its tasks counted by status.")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := noPositional(c, fs, args, w); err != nil {
		return err
	}
	list, err := svc.ProjectSummaries()
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(w, list)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tID\tAGENTS\tBACKLOG\tTODO\tIN PROGRESS\tBLOCKED\tDONE\tCANCELLED")
	for _, p := range list {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", p.Name, p.ID, len(p.Agents), p.Counts[teams.StatusBacklog], p.Counts[teams.StatusTodo],
			p.Counts[teams.StatusInProgress], p.Counts[teams.StatusBlocked], p.Counts[teams.StatusDone], p.Counts[teams.StatusCancelled])
	}
	return tw.Flush()
}

func noPositional(c command, fs *flag.FlagSet, args []string, w io.Writer) error {
	pos, _, err := c.parse(fs, args, w)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return c.usageError("unexpected argument %q", pos[0])
	}
	return nil
}

func projectsAdd(_ *teams.Service, az *authz.Service, args []string, w io.Writer) error {
	c, fs := flagSet("projects add", "projects add NAME [--description D] [--json]\n\nAdd a project.")
	desc := fs.String("description", "", "what the project is")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, w)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("want exactly one NAME")
	}
	p, err := az.CreateProject(pos[0], *desc)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(w, p)
	}
	fmt.Fprintf(w, "added project %s (%s)\n", p.Name, p.ID)
	return nil
}

func tasksList(svc *teams.Service, az *authz.Service, args []string, w io.Writer) error {
	c, fs := flagSet("tasks list", "tasks list --project P [--status S] [--assignee A] [--json]\n\nList a project's tasks, the most pressing first.")
	project := fs.String("project", "", "the project (name or id)")
	status := fs.String("status", "", "only tasks in this status")
	assignee := fs.String("assignee", "", "only tasks of this agent (name or id)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := noPositional(c, fs, args, w); err != nil {
		return err
	}
	if *project == "" {
		return c.usageError("--project is required")
	}
	p, err := svc.Project(*project)
	if err != nil {
		return err
	}
	who := ""
	if *assignee != "" {
		a, err := az.Agent(*assignee)
		if err != nil {
			return err
		}
		who = a.ID
	}
	if *status != "" && !slices.Contains(teams.Statuses, *status) {
		return c.usageError("unknown status %q (want %s)", *status, strings.Join(teams.Statuses, ", "))
	}
	cards, err := svc.Cards(p.ID, who)
	if err != nil {
		return err
	}
	out := []teams.TaskCard{}
	for _, cd := range cards {
		if *status == "" || cd.Status == *status {
			out = append(out, cd)
		}
	}
	if *asJSON {
		return writeJSON(w, out)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tPRIORITY\tASSIGNEE\tTITLE\tNOTES")
	for _, cd := range out {
		var notes []string
		if cd.OpenBlockers > 0 {
			notes = append(notes, fmt.Sprintf("waits for %d", cd.OpenBlockers))
		}
		if cd.BlockedReason != "" {
			notes = append(notes, "blocked: "+cd.BlockedReason)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cd.ID, cd.Status, cd.Priority, orDash(cd.AssigneeName), cd.Title, strings.Join(notes, "; "))
	}
	return tw.Flush()
}

// taskDetailOut is `tasks show --json`: what the board's task detail shows.
type taskDetailOut struct {
	teams.TaskDetail
	Card teams.TaskCard `json:"card"`
}

func tasksShow(svc *teams.Service, _ *authz.Service, args []string, w io.Writer) error {
	c, fs := flagSet("tasks show", "tasks show TASK [--json]\n\nShow a task with its history, chat-driven changes, conversations and runs.")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, w)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("want exactly one TASK")
	}
	d, err := svc.Detail(pos[0])
	if err != nil {
		return err
	}
	card, err := svc.Card(d.Task)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(w, taskDetailOut{TaskDetail: d, Card: card})
	}
	t := d.Task
	fmt.Fprintf(w, "%s  %s\nstatus: %s   priority: %s   assignee: %s   created by: %s\n", t.ID, t.Title, t.Status, t.Priority,
		orDash(card.AssigneeName), orDash(card.CreatorName))
	if t.BlockedReason != "" {
		fmt.Fprintf(w, "blocked: %s\n", t.BlockedReason)
	}
	if len(t.DependsOn) > 0 {
		fmt.Fprintf(w, "depends on: %s\n", strings.Join(t.DependsOn, ", "))
	}
	if t.Description != "" {
		fmt.Fprintf(w, "\n%s\n", t.Description)
	}
	fmt.Fprintln(w, "\nhistory:")
	for _, h := range d.History {
		what := h.Kind
		switch h.Kind {
		case teams.EventStatus:
			what = h.FromStatus + " → " + h.ToStatus
		case teams.EventCreated:
			what = "created (" + h.ToStatus + ")"
		case teams.EventEdited:
			what = "changed " + strings.Join(h.Fields, ", ")
		}
		if h.Detail != "" {
			what += ": " + h.Detail
		}
		if h.ConversationID != "" {
			what += " [chat " + h.ConversationID + "]"
		}
		fmt.Fprintf(w, "  %s  %-20s %s\n", h.CreatedAt.Format(time.RFC3339), orDash(h.AgentName), what)
	}
	if len(d.ChatModifications) > 0 {
		fmt.Fprintln(w, "\nchanged from chat:")
		for _, m := range d.ChatModifications {
			warn := ""
			if m.Warning {
				warn = "  WARNING: " + m.WarningReason
			}
			fmt.Fprintf(w, "  %s  %s by %s at the request of %s (%s)%s\n", m.CreatedAt.Format(time.RFC3339), m.Operation, m.ExecutorID, m.RequesterID,
				strings.Join(m.Fields, ", "), warn)
		}
	}
	for _, cv := range d.Conversations {
		fmt.Fprintf(w, "conversation %s (%s) %s\n", cv.ID, cv.State, cv.Topic)
	}
	for _, e := range d.Executions {
		fmt.Fprintf(w, "run %s: %s, started %s\n", e.ID, e.Status, e.StartedAt.Format(time.RFC3339))
	}
	return nil
}

func tasksAdd(svc *teams.Service, _ *authz.Service, args []string, w io.Writer) error {
	c, fs := flagSet("tasks add", "tasks add TITLE --project P [flags]\n\nAdd a task to a project, as the owner.")
	project := fs.String("project", "", "the project (name or id)")
	desc := fs.String("description", "", "what is to be done")
	priority := fs.String("priority", "", "low, medium (default), high or urgent")
	status := fs.String("status", "", "backlog (default) or todo")
	assignee := fs.String("assignee", "", "the agent doing it (name or id)")
	parent := fs.String("parent", "", "the task it is part of")
	var deps repeated
	fs.Var(&deps, "depends-on", "a task that must be done first (repeatable)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, w)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("want exactly one TITLE (quote it)")
	}
	if *project == "" {
		return c.usageError("--project is required")
	}
	p, err := svc.Project(*project)
	if err != nil {
		return err
	}
	ts, err := svc.CreateTasks(authz.OwnerID, p.ID, []teams.TaskInput{{Title: pos[0], Description: *desc, Priority: *priority, Status: *status,
		AssigneeID: *assignee, ParentTaskID: *parent, DependsOn: deps}})
	if err != nil {
		return err
	}
	return printCard(svc, ts[0], *asJSON, w, "added")
}

func printCard(svc *teams.Service, t teams.Task, asJSON bool, w io.Writer, verb string) error {
	card, err := svc.Card(t)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, card)
	}
	fmt.Fprintf(w, "%s %s %q: %s, %s, assignee %s\n", verb, card.ID, card.Title, card.Status, card.Priority, orDash(card.AssigneeName))
	return nil
}

func tasksMove(svc *teams.Service, _ *authz.Service, args []string, w io.Writer) error {
	c, fs := flagSet("tasks move", "tasks move TASK STATUS [--reason R] [--json]\n\nMove a task to another status, as the owner.")
	reason := fs.String("reason", "", "why it is blocked (with status blocked)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, w)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return c.usageError("want TASK STATUS")
	}
	r := *reason
	if pos[1] == teams.StatusBlocked && r == "" {
		r = "blocked by the owner (airlock tasks move)"
	}
	ch, err := svc.SetStatus(authz.OwnerID, "", pos[0], pos[1], r)
	if err != nil {
		return err
	}
	if *asJSON {
		return printCard(svc, ch.Task, true, w, "")
	}
	fmt.Fprintf(w, "moved %s %q: %s → %s\n", ch.Task.ID, ch.Task.Title, ch.PreviousStatus, ch.Task.Status)
	return nil
}

func tasksAssign(svc *teams.Service, _ *authz.Service, args []string, w io.Writer) error {
	c, fs := flagSet("tasks assign", "tasks assign TASK AGENT [--json]\n\nGive a task to an agent (\"\" takes it away), as the owner.")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, w)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return c.usageError("want TASK AGENT")
	}
	res, err := svc.AssignTask(authz.OwnerID, "", pos[0], pos[1])
	if err != nil {
		return err
	}
	return printCard(svc, res.Task, *asJSON, w, "assigned")
}

func tasksUpdate(svc *teams.Service, _ *authz.Service, args []string, w io.Writer) error {
	c, fs := flagSet("tasks update", "tasks update TASK [flags]\n\nChange a task's title, description, priority, dependencies or parent, as the owner.")
	title := fs.String("title", "", "new title")
	parent := fs.String("parent", "", "the task it is part of (--parent \"\" takes it out)")
	desc := fs.String("description", "", "new description")
	priority := fs.String("priority", "", "new priority")
	var deps repeated
	fs.Var(&deps, "depends-on", "replaces the dependencies (repeatable; --depends-on \"\" clears them)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, w)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("want exactly one TASK")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var up teams.TaskUpdate
	if set["title"] {
		up.Title = title
	}
	if set["description"] {
		up.Description = desc
	}
	if set["priority"] {
		up.Priority = priority
	}
	if set["parent"] {
		up.ParentTaskID = parent
	}
	if set["depends-on"] {
		ds := []string{}
		for _, d := range deps {
			if d != "" {
				ds = append(ds, d)
			}
		}
		up.DependsOn = &ds
	}
	t, _, err := svc.EditTask(authz.OwnerID, "", pos[0], up)
	if err != nil {
		return err
	}
	return printCard(svc, t, *asJSON, w, "updated")
}

// logOut is `tasks log --json`.
type logOut struct {
	Execution teams.Execution `json:"execution"`
	teams.LogChunk
}

func tasksLog(svc *teams.Service, _ *authz.Service, args []string, w io.Writer) error {
	c, fs := flagSet("tasks log", "tasks log EXECUTION [--tail N] [--json]\n\nPrint the end of a run's log.")
	tail := fs.Int("tail", teams.DefaultLogTail, "how many lines from the end")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, w)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("want exactly one EXECUTION")
	}
	e, chunk, err := svc.ReadLog(authz.OwnerID, pos[0], tail, nil)
	if err != nil {
		return err
	}
	if chunk.Lines == nil {
		chunk.Lines = []string{}
	}
	if *asJSON {
		return writeJSON(w, logOut{Execution: e, LogChunk: chunk})
	}
	for _, l := range chunk.Lines {
		fmt.Fprintln(w, l)
	}
	return nil
}

func chatList(svc *teams.Service, _ *authz.Service, args []string, w io.Writer) error {
	c, fs := flagSet("chat list", "chat list [--project P] [--json]\n\nList conversations, the most recently active first.")
	project := fs.String("project", "", "only this project's conversations")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := noPositional(c, fs, args, w); err != nil {
		return err
	}
	f := teams.ConversationFilter{}
	if *project != "" {
		p, err := svc.Project(*project)
		if err != nil {
			return err
		}
		f.ProjectID = p.ID
	}
	list, err := svc.Summaries(authz.OwnerID, f)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(w, list)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tUNREAD\tPARTICIPANTS\tTOPIC\tLAST MESSAGE")
	for _, cv := range list {
		var who []string
		for _, p := range cv.Participants {
			if p.Role == teams.RoleMember {
				who = append(who, p.AgentName)
			}
		}
		last := "-"
		if cv.LastMessage != nil {
			last = cv.LastMessage.SenderName + ": " + oneLine(cv.LastMessage.Content, 60)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", cv.ID, cv.State, cv.Unread, strings.Join(who, ","), orDash(cv.Topic), last)
	}
	return tw.Flush()
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// messagesOut is `chat show --json`: what the Chat screen shows.
type messagesOut struct {
	Conversation teams.Conversation `json:"conversation"`
	Messages     []teams.Message    `json:"messages"`
	Total        int                `json:"total"`
}

func chatShow(svc *teams.Service, _ *authz.Service, args []string, w io.Writer) error {
	c, fs := flagSet("chat show", "chat show CONVERSATION [--limit N] [--json]\n\nPrint a conversation's last messages.")
	limit := fs.Int("limit", 100, "how many messages")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, w)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("want exactly one CONVERSATION")
	}
	if *limit < 1 {
		return c.usageError("--limit must be at least 1")
	}
	conv, msgs, total, err := svc.ConversationMessages(authz.OwnerID, "", pos[0], 0, *limit)
	if err != nil {
		return err
	}
	if msgs == nil {
		msgs = []teams.Message{}
	}
	if *asJSON {
		return writeJSON(w, messagesOut{Conversation: conv, Messages: msgs, Total: total})
	}
	fmt.Fprintf(w, "%s (%s) %s — %d message(s)\n", conv.ID, conv.State, conv.Topic, total)
	for _, m := range msgs {
		fmt.Fprintf(w, "%s  %s: %s\n", m.CreatedAt.Format(time.RFC3339), m.SenderName, m.Content)
	}
	return nil
}

func chatSend(svc *teams.Service, _ *authz.Service, args []string, w io.Writer) error {
	c, fs := flagSet("chat send", "chat send CONVERSATION MESSAGE [--json]\n\nWrite into a conversation as the owner.")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, w)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return c.usageError("want CONVERSATION MESSAGE (quote the message)")
	}
	m, err := svc.PostMessage(authz.OwnerID, "", pos[0], pos[1], "")
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(w, m)
	}
	fmt.Fprintf(w, "sent %s\n", m.ID)
	return nil
}

func chatStart(svc *teams.Service, _ *authz.Service, args []string, w io.Writer) error {
	c, fs := flagSet("chat start", "chat start MESSAGE --project P --with AGENT... [--topic T] [--json]\n\nStart a conversation of the owner with agents.")
	project := fs.String("project", "", "the project (name or id)")
	topic := fs.String("topic", "", "a one-line subject")
	var with repeated
	fs.Var(&with, "with", "an agent to talk with (repeatable)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, w)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("want exactly one MESSAGE (quote it)")
	}
	if strings.TrimSpace(pos[0]) == "" {
		return c.usageError("the MESSAGE is empty: the agents hear of the conversation by it")
	}
	if *project == "" || len(with) == 0 {
		return c.usageError("--project and at least one --with are required")
	}
	p, err := svc.Project(*project)
	if err != nil {
		return err
	}
	conv, _, err := svc.StartConversation(authz.OwnerID, p.ID, with, *topic, pos[0], "")
	if err != nil {
		return err
	}
	sum, err := svc.Summary(authz.OwnerID, conv)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(w, sum)
	}
	fmt.Fprintf(w, "started %s\n", conv.ID)
	return nil
}

func chatEnd(svc *teams.Service, _ *authz.Service, args []string, w io.Writer) error {
	c, fs := flagSet("chat end", "chat end CONVERSATION [--json]\n\nEnd a conversation.")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, w)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("want exactly one CONVERSATION")
	}
	conv, err := svc.EndConversation(authz.OwnerID, "", pos[0], "")
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(w, conv)
	}
	fmt.Fprintf(w, "ended %s\n", conv.ID)
	return nil
}
