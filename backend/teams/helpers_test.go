package teams_test

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/teams"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// clock is a settable clock that moves a millisecond on every reading, so
// that everything made in a test has its own time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// world is seed 001's hierarchy on a real SQLite file:
//
//	owner
//	  ├─ manager-dev
//	  │    ├─ worker-frontend-01
//	  │    └─ worker-frontend-02
//	  └─ qa-lead
//	       └─ worker-qa-01
//
// all assigned to project proj-001; outsider is assigned to no project.
type world struct {
	db      *store.DB
	az      *authz.Service
	svc     *teams.Service
	events  *testutil.Recorder
	project authz.Project
	ids     map[string]string // agent name → id
	logDir  string
}

func newWorld(tb testing.TB) *world {
	tb.Helper()
	dir := tb.TempDir()
	db, err := store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	az, err := authz.New(store.NewAgents(db), authz.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	w := &world{db: db, az: az, events: &testutil.Recorder{}, ids: map[string]string{"owner": authz.OwnerID}, logDir: filepath.Join(dir, "logs")}
	if w.project, err = az.CreateProject("proj-001", ""); err != nil {
		tb.Fatal(err)
	}
	for _, a := range []struct{ name, kind, parent string }{
		{"manager-dev", authz.KindManager, "owner"},
		{"worker-frontend-01", authz.KindWorker, "manager-dev"},
		{"worker-frontend-02", authz.KindWorker, "manager-dev"},
		{"qa-lead", authz.KindManager, "owner"},
		{"worker-qa-01", authz.KindWorker, "qa-lead"},
		{"coordinator", authz.KindCoordinator, "owner"},
	} {
		c, err := az.CreateAgent(authz.AgentInput{Name: a.name, Kind: a.kind, Parent: a.parent, Projects: []string{"proj-001"}})
		if err != nil {
			tb.Fatal(err)
		}
		w.ids[a.name] = c.Agent.ID
	}
	c, err := az.CreateAgent(authz.AgentInput{Name: "outsider", Kind: authz.KindWorker, Parent: "manager-dev"})
	if err != nil {
		tb.Fatal(err)
	}
	w.ids["outsider"] = c.Agent.ID
	clk := &clock{t: time.Date(2026, 2, 6, 9, 0, 0, 0, time.UTC)}
	w.svc, err = teams.New(store.NewTeams(db), az, teams.Options{Now: clk.Now, Events: w.events, LogDir: w.logDir})
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

func (w *world) id(name string) string {
	if id, ok := w.ids[name]; ok {
		return id
	}
	return name
}

// task creates one task as creator, assigned to assignee, in status.
func (w *world) task(tb testing.TB, creator, assignee, title, status string, deps ...string) teams.Task {
	tb.Helper()
	create := status
	if status != teams.StatusBacklog {
		create = teams.StatusTodo
	}
	ts, err := w.svc.CreateTasks(w.id(creator), w.project.ID, []teams.TaskInput{{Title: title, AssigneeID: assignee, Status: create, DependsOn: deps}})
	if err != nil {
		tb.Fatalf("create task %q: %v", title, err)
	}
	t := ts[0]
	if status == teams.StatusInProgress || status == teams.StatusBlocked || status == teams.StatusDone {
		if _, err := w.svc.SetStatus(authz.OwnerID, "", t.ID, teams.StatusInProgress, ""); err != nil {
			tb.Fatal(err)
		}
	}
	if status == teams.StatusBlocked || status == teams.StatusDone {
		if _, err := w.svc.SetStatus(authz.OwnerID, "", t.ID, status, "set up by the test"); err != nil {
			tb.Fatal(err)
		}
	}
	t, err = w.svc.Task(t.ID)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// conversation starts a conversation of from with to, with a first
// message.
func (w *world) conversation(tb testing.TB, from, to, first string) teams.Conversation {
	tb.Helper()
	c, _, err := w.svc.StartConversation(w.id(from), w.project.ID, []string{w.id(to)}, "test", first, "")
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// unread returns agent's unread notifications without claiming them.
func (w *world) unread(tb testing.TB, agent string) []teams.Notification {
	tb.Helper()
	ns, err := store.NewTeams(w.db).UnreadNotifications(w.id(agent), "")
	if err != nil {
		tb.Fatal(err)
	}
	return ns
}
