package authz_test

import (
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// A run session identifies its agent with the fixed purpose and project,
// without a passkey; Logout ends it at once; it expires after its ttl; the
// agent's own token is left as it was.
func TestOpenRunSession(t *testing.T) {
	e := newEnv(t)
	p, err := e.svc.CreateProject("apollo", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.CreateProject("zeus", ""); err != nil {
		t.Fatal(err)
	}
	w, err := e.svc.CreateAgent(authz.AgentInput{Name: "w", Kind: authz.KindWorker, Projects: []string{"apollo"}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := e.svc.OpenRunSession("w", "apollo", core.PurposeTask, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	id, err := e.svc.IdentifyToken(sess.Token)
	if err != nil || id.AgentID != w.Agent.ID || id.Purpose != core.PurposeTask || id.ProjectID != p.ID || id.Via != authz.ViaSessionToken {
		t.Fatalf("identify the run session = %+v, %v; want w, task, apollo", id, err)
	}
	if id, err := e.svc.IdentifyToken(w.Token); err != nil || id.AgentID != w.Agent.ID {
		t.Errorf("the agent's own token stopped working: %+v %v", id, err)
	}
	if err := e.svc.Logout(sess.Record.ID, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.IdentifyToken(sess.Token); core.ErrorCode(err) != core.EUnauthorized {
		t.Errorf("the run session after Logout: %v, want unauthorized", err)
	}

	short, err := e.svc.OpenRunSession(w.Agent.ID, "", core.PurposeTask, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Minute)
	if _, err := e.svc.IdentifyToken(short.Token); core.ErrorCode(err) != core.EUnauthorized {
		t.Errorf("an expired run session: %v, want unauthorized", err)
	}

	for _, tc := range []struct {
		name, agent, project, purpose, code string
	}{
		{"unknown agent", "nobody", "", core.PurposeTask, core.ENotFound},
		{"project not assigned", "w", "zeus", core.PurposeTask, authz.EAgentNotAssigned},
		{"unknown project", "w", "hera", core.PurposeTask, authz.EProjectNotFound},
		{"bad purpose", "w", "", "play", core.EInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := e.svc.OpenRunSession(tc.agent, tc.project, tc.purpose, time.Hour); core.ErrorCode(err) != tc.code {
				t.Errorf("OpenRunSession = %v, want %s", err, tc.code)
			}
		})
	}
	if _, err := e.svc.Suspend("w"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.OpenRunSession("w", "apollo", core.PurposeTask, time.Hour); core.ErrorCode(err) != "suspended" {
		t.Errorf("a run session for a suspended agent: %v, want suspended", err)
	}
}
