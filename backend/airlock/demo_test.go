package airlock_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/events"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/teams"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// demoDir holds the team demo's scripts, the ones examples/team-demo/run.sh
// runs.
const demoDir = "../../examples/team-demo"

// demoScript is one agent session of the demo: a script run by one
// scripted agent, connected as agent with a session of purpose.
type demoScript struct {
	label, agent, purpose, file string
}

// demoScripts are the demo's five sessions: the manager's and worker-a's
// task and chat sessions, and worker-b's task session.
func demoScripts() []demoScript {
	return []demoScript{
		{"manager/task", "manager", core.PurposeTask, "manager-task.yaml"},
		{"manager/chat", "manager", core.PurposeChat, "manager-chat.yaml"},
		{"worker-a/task", "worker-a", core.PurposeTask, "worker-a-task.yaml"},
		{"worker-a/chat", "worker-a", core.PurposeChat, "worker-a-chat.yaml"},
		{"worker-b/task", "worker-b", core.PurposeTask, "worker-b-task.yaml"},
	}
}

// demo is a real Airlock set up as run.sh sets up the one it is given: a
// project, a manager and two workers below it (a role granting the built-in
// file servers), a folder they may use, and rules that let file reads and
// writes inside that folder run unasked.
type demo struct {
	in      *airlock.Instance
	dataDir string
	work    string
	project authz.Project
	agents  map[string]authz.CreatedAgent
	rules   []string
}

func newDemo(t *testing.T) *demo {
	t.Helper()
	d := &demo{dataDir: t.TempDir(), work: t.TempDir(), agents: map[string]authz.CreatedAgent{}}
	d.in = startWith(t, airlock.Options{DataDir: d.dataDir})
	api := d.in.API
	var err error
	if d.project, err = api.Agents.CreateProject("team-demo", "the team demo of examples/team-demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := api.Agents.CreateRole(authz.RoleInput{Name: "team-demo", Servers: []string{builtin.ServerFileRead, builtin.ServerFileWrite}}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct{ name, kind, parent string }{
		{"manager", authz.KindManager, ""},
		{"worker-a", authz.KindWorker, "manager"},
		{"worker-b", authz.KindWorker, "manager"},
	} {
		made, err := api.Agents.Create(authz.AgentInput{Name: a.name, Kind: a.kind, Parent: a.parent, Role: "team-demo", Projects: []string{"team-demo"}})
		if err != nil {
			t.Fatal(err)
		}
		d.agents[a.name] = made
	}
	if _, err := api.Builtin.AllowPath(d.work); err != nil {
		t.Fatal(err)
	}
	inside, err := hitl.ParseCondition("$.path inside " + d.work)
	if err != nil {
		t.Fatal(err)
	}
	for _, server := range []string{builtin.ServerFileRead, builtin.ServerFileWrite} {
		r, err := api.Rules.Create(hitl.RuleInput{ServerID: sp(server), AutoApprove: true, Priority: 100, Conditions: []hitl.Condition{inside}})
		if err != nil {
			t.Fatal(err)
		}
		d.rules = append(d.rules, r.ID)
	}
	return d
}

func (d *demo) id(name string) string { return d.agents[name].Agent.ID }

// run runs every script at once, each as `<this test binary> agent-script
// FILE` (TestMain makes the binary the scripted agent, as `airlock
// agent-script` is): real processes and real MCP clients over Streamable
// HTTP, as run.sh starts them. It returns each script's output by label,
// failing the test (with every output) when a script fails.
func (d *demo) run(t *testing.T) map[string]string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	scripts := demoScripts()
	vars := []string{"project=team-demo", "manager=manager", "worker_a=worker-a", "worker_b=worker-b", "workdir=" + d.work}
	outs := make([]bytes.Buffer, len(scripts))
	errs := make([]error, len(scripts))
	var wg sync.WaitGroup
	for i, s := range scripts {
		args := []string{"agent-script", filepath.Join(demoDir, s.file), "--url", d.in.Info.MCPURL + "?purpose=" + s.purpose + "&project=team-demo"}
		for _, v := range vars {
			args = append(args, "--var", v)
		}
		cmd := exec.CommandContext(ctx, self, args...)
		cmd.Env = append(os.Environ(), "AIRLOCK_TOKEN="+d.agents[s.agent].Token)
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = cmd.Wait(); errs[i] != nil {
				cancel() // the others would wait for it until their timeouts
			}
		}()
	}
	wg.Wait()
	got := map[string]string{}
	var all strings.Builder
	failed := false
	for i, s := range scripts {
		got[s.label] = outs[i].String()
		sc := bufio.NewScanner(strings.NewReader(outs[i].String()))
		for sc.Scan() {
			fmt.Fprintf(&all, "%-14s %s\n", s.label, sc.Text())
		}
		if errs[i] != nil {
			failed = true
			fmt.Fprintf(&all, "%-14s exited: %v\n", s.label, errs[i])
		}
	}
	if failed {
		t.Fatalf("a scripted agent failed:\n%s", all.String())
	}
	t.Logf("the scripted agents:\n%s", all.String())
	return got
}

// The team demo of examples/team-demo, issue 9's "done means": three
// scripted agents — a manager and two workers, each session a real MCP
// client in a process of its own — run seed 001's flows at once through a
// real Airlock, from the very scripts run.sh runs, and their expectations
// (every refusal in the seeds' words) hold. Then the end state, read
// through the facade the UI uses: every task done with the history of who
// moved it, the task made from the chat request recorded with its
// requester and conversation, the conversation ended, the screens told of
// every change and message as it happened, the chat-session notification
// delivered once, every file call let through by the folder's rules and
// every refusal in the audit, nothing left waiting.
func TestTeamDemo(t *testing.T) {
	d := newDemo(t)
	// What the Board and Chat screens are sent while the agents work.
	live := d.in.Hub.Subscribe([]string{events.Topic(teams.EventBoardChanged), events.Topic(teams.EventChatMessage)})
	defer live.Close()
	outs := d.run(t)
	for label, out := range outs {
		if !strings.Contains(out, "steps passed") {
			t.Errorf("%s did not report its steps passed:\n%s", label, out)
		}
	}
	api := d.in.API
	mgr, wa, wb := d.id("manager"), d.id("worker-a"), d.id("worker-b")

	// The board: every task done.
	board, err := api.Board.Get(d.project.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	byTitle := map[string]teams.TaskCard{}
	columns := map[string][]string{}
	for _, col := range board.Columns {
		for _, c := range col.Tasks {
			columns[col.Status] = append(columns[col.Status], c.Title)
			byTitle[c.Title] = c
		}
	}
	for _, titles := range columns {
		slices.Sort(titles)
	}
	wantColumns := map[string][]string{teams.StatusDone: {"CHANGELOG entry for the orders work", "Orders API notes", "Orders page notes", "Review the CHANGELOG entry"}}
	if diff := cmp.Diff(wantColumns, columns); diff != "" {
		t.Fatalf("the board's columns (-want +got):\n%s", diff)
	}

	// Each task's history: who moved it, and from where to where.
	type move struct{ From, To, By, Conversation string }
	details := map[string]teams.TaskDetail{}
	for title, c := range byTitle {
		dv, err := api.Board.Detail(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		details[title] = dv.TaskDetail
	}
	extra := details["CHANGELOG entry for the orders work"]
	var conv string
	convs, err := api.Chat.Conversations(d.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) == 1 {
		conv = convs[0].ID
	} else {
		t.Errorf("conversations = %+v, want the one of worker-a and the manager", convs)
	}
	wantMoves := map[string][]move{
		"Orders API notes": {
			{teams.StatusBacklog, teams.StatusTodo, "manager", ""},
			{teams.StatusTodo, teams.StatusInProgress, "worker-a", ""},
			{teams.StatusInProgress, teams.StatusDone, "worker-a", ""},
		},
		"Orders page notes": {
			{teams.StatusBacklog, teams.StatusTodo, "manager", ""},
			{teams.StatusTodo, teams.StatusBlocked, "worker-b", ""},
			{teams.StatusBlocked, teams.StatusInProgress, "worker-b", ""},
			{teams.StatusInProgress, teams.StatusDone, "worker-b", ""},
		},
		"CHANGELOG entry for the orders work": {
			{teams.StatusTodo, teams.StatusInProgress, "worker-a", conv},
			{teams.StatusInProgress, teams.StatusDone, "worker-a", ""},
		},
		"Review the CHANGELOG entry": {
			{teams.StatusTodo, teams.StatusInProgress, "manager", ""},
			{teams.StatusInProgress, teams.StatusDone, "manager", ""},
		},
	}
	names := map[string]string{mgr: "manager", wa: "worker-a", wb: "worker-b"}
	gotMoves := map[string][]move{}
	for title, dt := range details {
		for _, e := range dt.History {
			if e.Kind == teams.EventStatus {
				gotMoves[title] = append(gotMoves[title], move{e.FromStatus, e.ToStatus, names[e.AgentID], e.ConversationID})
			}
		}
		if len(dt.Executions) != 0 {
			// The agents ran outside Airlock's runner: no run, no log.
			t.Errorf("%s has executions %+v, want none", title, dt.Executions)
		}
	}
	if diff := cmp.Diff(wantMoves, gotMoves); diff != "" {
		t.Errorf("status changes per task (-want +got):\n%s", diff)
	}

	// The work asked for in chat: worker-a's task, requested by the
	// manager in the conversation and started from it, the start audited
	// once (the sibling named as requester was refused and left nothing).
	x := extra.Task
	if x.AssigneeID != wa || x.CreatedByAgentID != wa || x.RequestedByAgentID != mgr || x.RequestedInConversationID != conv ||
		x.StartedFromConversationID != conv || x.Result != teams.ResultSuccess || x.Priority != teams.PriorityHigh {
		t.Errorf("the task made from the chat request = %+v, want worker-a's, requested by the manager in %s and started from it", x, conv)
	}
	wantMods := []teams.ChatModification{{TaskID: x.ID, ConversationID: conv, RequesterID: mgr, ExecutorID: wa, Operation: teams.OperationStart, Fields: []string{"status"}}}
	if diff := cmp.Diff(wantMods, extra.ChatModifications, cmpopts.IgnoreFields(teams.ChatModification{}, "ID", "CreatedAt")); diff != "" {
		t.Errorf("the chat-driven modifications (-want +got):\n%s", diff)
	}
	review := details["Review the CHANGELOG entry"]
	if len(review.Blockers) != 1 || review.Blockers[0].ID != x.ID {
		t.Errorf("the review's blockers = %+v, want the CHANGELOG entry", review.Blockers)
	}

	// The conversation: who said what, in order, and it is over.
	if conv != "" {
		mv, err := api.Chat.Messages(conv, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var said []string
		for _, m := range mv.Messages {
			said = append(said, names[m.SenderID]+": "+firstWords(m.Content, 4))
		}
		wantSaid := []string{
			"worker-a: The Orders API notes",
			"manager: Thanks! One more thing:",
			"worker-a: Tracked as " + x.ID + " and",
			"manager: Great, thanks.",
			"manager: Use version 1.4.0 for",
			"worker-a: " + x.ID + " is done: CHANGELOG.md",
			"manager: Thanks, that is everything.",
		}
		if diff := cmp.Diff(wantSaid, said); diff != "" {
			t.Errorf("the conversation (-want +got):\n%s", diff)
		}
		if mv.Conversation.State != teams.ConversationEnded {
			t.Errorf("the conversation is %s, want ended", mv.Conversation.State)
		}
	}

	// The files the agents wrote through Airlock's file-write server.
	for file, want := range map[string]string{"orders-api.md": "# Orders API", "orders-page.md": "# Orders page", "CHANGELOG.md": "## 1.4.0"} {
		b, err := os.ReadFile(filepath.Join(d.work, file))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s = %q, %v; want it to hold %q", file, b, err, want)
		}
	}

	d.checkLive(t, live, details, conv)
	d.checkNotifications(t, conv, x.ID)
	d.checkAudit(t)
	if p, _ := api.Approvals.Pending(); len(p) != 0 {
		t.Errorf("approvals left waiting: %+v", p)
	}
}

// checkLive checks that the screens were told of every step as it
// happened: a board:changed event for each change in the tasks' histories
// (created, assigned, moved — by whom), and a chat:message event for each
// message of the conversation, in order.
func (d *demo) checkLive(t *testing.T, live *events.Sub, details map[string]teams.TaskDetail, conv string) {
	t.Helper()
	// Events are sent as each change is made, before the agent's call
	// returns; the queue holds far more than the demo makes.
	var board, chat []string
	for len(live.C()) > 0 {
		switch e := <-live.C(); p := e.Payload.(type) {
		case teams.BoardChanged:
			for _, id := range p.TaskIDs {
				board = append(board, fmt.Sprintf("%s %s by %s", p.Reason, id, p.AgentID))
			}
		case teams.ChatMessageEvent:
			chat = append(chat, p.Message.ID)
		}
	}
	if n := live.Lagged(); n != 0 {
		t.Fatalf("the screens' subscription dropped %d events", n)
	}
	var wantBoard []string
	for _, dt := range details {
		for _, e := range dt.History {
			wantBoard = append(wantBoard, fmt.Sprintf("%s %s by %s", e.Kind, e.TaskID, e.AgentID))
		}
	}
	slices.Sort(board)
	slices.Sort(wantBoard)
	if diff := cmp.Diff(wantBoard, board); diff != "" {
		t.Errorf("board:changed events against the tasks' histories (-history +events):\n%s", diff)
	}
	mv, err := d.in.API.Chat.Messages(conv, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var wantChat []string
	for _, m := range mv.Messages {
		wantChat = append(wantChat, m.ID)
	}
	if diff := cmp.Diff(wantChat, chat); diff != "" {
		t.Errorf("chat:message events against the conversation (-messages +events):\n%s", diff)
	}
}

// checkNotifications reads the database beside the running Airlock (as
// the CLI does): worker-a's chat session sent one notification to its task
// session, and it was delivered (claimed once, so read); no notification
// of any agent is left undelivered.
func (d *demo) checkNotifications(t *testing.T, conv, taskID string) {
	t.Helper()
	db, err := store.Open(filepath.Join(d.dataDir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	type row struct {
		SourceAgentID, ConversationID, TaskID string
		ReadAt                                *time.Time
	}
	var rows []row
	if err := db.Table("agent_notifications").Where("target_agent_id = ? AND type = ?", d.id("worker-a"), teams.NotifyChatSession).Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].SourceAgentID != d.id("worker-a") || rows[0].ConversationID != conv || rows[0].TaskID != taskID || rows[0].ReadAt == nil {
		t.Errorf("worker-a's chat-session notifications = %+v, want one from itself about %s in %s, delivered", rows, taskID, conv)
	}
	st := store.NewTeams(db)
	for name := range d.agents {
		if left, err := st.UnreadNotifications(d.id(name), ""); err != nil || len(left) != 0 {
			t.Errorf("%s has undelivered notifications %+v (%v)", name, left, err)
		}
	}
}

// checkAudit looks at the Activity screen's records: every file call ran
// unasked by the folder's rules, and every refusal the scripts provoked is
// there, by whom, in which session, with its code — the gate's refusals
// (denied) and the team tools' own (a tool error whose body carries the
// seed's error code).
func (d *demo) checkAudit(t *testing.T) {
	t.Helper()
	type entry struct{ Agent, Purpose, Server, Tool, Decision, Rule, Status, Code string }
	read, write := d.rules[0], d.rules[1]
	want := []entry{
		{"manager", core.PurposeChat, authz.Server, "create_tasks_batch", core.DecisionDenied, "", core.StatusError, core.EForbidden},
		{"manager", core.PurposeTask, builtin.ServerFileRead, "file_read", core.DecisionAllow, read, core.StatusOK, ""},
		{"worker-a", core.PurposeChat, authz.Server, "start_task_from_chat", core.DecisionAllow, store.OwnToolsRuleID, core.StatusToolError, teams.ECodeUnauthorized},
		{"worker-a", core.PurposeTask, authz.Server, "get_pending_messages", core.DecisionDenied, "", core.StatusError, core.EForbidden},
		{"worker-a", core.PurposeTask, builtin.ServerFileWrite, "file_write", core.DecisionAllow, write, core.StatusOK, ""},
		{"worker-a", core.PurposeTask, builtin.ServerFileWrite, "file_write", core.DecisionAllow, write, core.StatusOK, ""},
		{"worker-b", core.PurposeTask, authz.Server, "assign_task", core.DecisionDenied, "", core.StatusError, core.EForbidden},
		{"worker-b", core.PurposeTask, authz.Server, "update_task_status", core.DecisionAllow, store.OwnToolsRuleID, core.StatusToolError, teams.ECodeTaskBlocked},
		{"worker-b", core.PurposeTask, builtin.ServerFileWrite, "file_write", core.DecisionAllow, write, core.StatusOK, ""},
	}
	var got []entry
	// The audit is written as calls end: wait until the last are in.
	testutil.Eventually(t, 10*time.Second, func() bool {
		recs, err := d.in.API.Activity.List(core.ActivityFilter{Limit: store.MaxActivityPage})
		if err != nil {
			t.Fatal(err)
		}
		got = nil
		for _, r := range recs {
			if r.Server == authz.Server && r.Status == core.StatusOK {
				continue
			}
			if r.Status == core.StatusToolError && r.Server == authz.Server {
				var body teams.ToolError
				if err := json.Unmarshal([]byte(r.Error), &body); err != nil || body.Error != r.ErrorCode {
					t.Errorf("a team tool's refusal: body %q, audit code %q; want the seed's error body with the same code", r.Error, r.ErrorCode)
				}
			}
			got = append(got, entry{r.Agent, r.Purpose, r.Server, r.Tool, r.Decision, r.RuleID, r.Status, r.ErrorCode})
		}
		slices.SortFunc(got, func(a, b entry) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		return len(got) >= len(want)
	}, "the audit never held the %d file calls and refusals", len(want))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("file calls and refusals in the audit (-want +got):\n%s", diff)
	}
}

// firstWords returns the first n words of s.
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}
