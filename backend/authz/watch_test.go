package authz_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// TestWatchPicksUpOtherProcess: with Watch running, a suspension made by
// another process reaches the OnChange hooks without anyone calling Reload.
func TestWatchPicksUpOtherProcess(t *testing.T) {
	e := newEnv(t, func(o *authz.Options) { o.PollInterval = 5 * time.Millisecond })
	bob := e.agent(t, authz.AgentInput{Name: "bob"})
	heard := make(chan []string, 16)
	e.svc.OnChange(func(ids []string) { heard <- ids })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.svc.Watch(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	if _, err := newServiceOn(t, e).Suspend("bob"); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second) // a guard against hanging, not a timing assertion
	for {
		select {
		case ids := <-heard:
			if containsStr(ids, bob.id()) {
				caller, err := e.resolve(t, "m", bob.Token, "")
				if core.ErrorCode(err) != authz.ReasonSuspended || caller.AgentName != "bob" {
					t.Errorf("after the change: %+v %v", caller, err)
				}
				return
			}
		case <-deadline:
			t.Fatal("Watch never reported the other process's change")
		}
	}
}

// TestSweep forgets ended sessions and idle MCP sessions.
func TestSweep(t *testing.T) {
	tm := newTeam(t)
	sess, err := tm.svc.Authenticate("wrk", tm.wrk.Passkey, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.svc.Bind("m1", sess.Record.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.svc.Resolve("m1", authz.Identity{}, ""); err != nil {
		t.Fatal(err)
	}
	tm.clock.Advance(authz.DefaultSessionTTL + 2*time.Hour)
	if err := tm.svc.Sweep(); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := tm.db.Raw("SELECT COUNT(*) FROM agent_sessions").Scan(&n).Error; err != nil || n != 0 {
		t.Errorf("%d sessions left (%v)", n, err)
	}
	if got := tm.svc.MCPSessions([]string{tm.wrk.id()}); len(got) != 0 {
		t.Errorf("idle MCP sessions kept: %v", got)
	}
	if _, err := tm.svc.IdentifyToken(sess.Token); core.ErrorCode(err) != core.EUnauthorized {
		t.Errorf("swept session: %v", err)
	}
}

// TestConcurrentChecks runs checks from many goroutines while the agent is
// suspended and resumed (run with -race); the last change wins.
func TestConcurrentChecks(t *testing.T) {
	e := newEnv(t)
	bob := e.agent(t, authz.AgentInput{Name: "bob", Role: authz.RoleSuperuser})
	caller := mustResolve(t, e, "m", bob.Token, "")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := e.svc.Refusal(&caller, toolTarget("github", "x")); err != nil && err.Code != authz.ReasonSuspended {
					t.Errorf("unexpected refusal %v", err)
					return
				}
			}
		}()
	}
	for i := 0; i < 20; i++ {
		if _, err := e.svc.Suspend("bob"); err != nil {
			t.Fatal(err)
		}
		if err := e.svc.Refusal(&caller, toolTarget("github", "x")); err == nil || err.Code != authz.ReasonSuspended {
			t.Fatalf("right after suspend: %v", err)
		}
		if _, err := e.svc.Resume("bob"); err != nil {
			t.Fatal(err)
		}
		if err := e.svc.Refusal(&caller, toolTarget("github", "x")); err != nil {
			t.Fatalf("right after resume: %v", err)
		}
	}
	close(stop)
	wg.Wait()
}
