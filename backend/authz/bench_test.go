package authz_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// realClock makes a benchmark pay for the real clock read each check does.
func realClock(o *authz.Options) { o.Now = time.Now }

// BenchmarkAuthorizeWarm is the gate's decision on a proxied call with a
// warm cache (target: ≤ 300 ns).
func BenchmarkAuthorizeWarm(b *testing.B) {
	e := newEnv(b, realClock)
	if _, err := e.svc.CreateRole(authz.RoleInput{Name: "dev", Servers: []string{"github"}}); err != nil {
		b.Fatal(err)
	}
	w := e.agent(b, authz.AgentInput{Name: "bob", Role: "dev"})
	caller := mustResolve(b, e, "m", w.Token, "")
	req := &core.Request{Kind: core.KindToolCall, Caller: caller, Server: "github", Name: "create_issue", Exposed: "github__create_issue"}
	ctx := context.Background()
	if err := e.svc.Authorize(ctx, req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := e.svc.Authorize(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthorizeWarmSession is the same for a caller with an agent
// session (authenticate), which also checks the session is still alive.
func BenchmarkAuthorizeWarmSession(b *testing.B) {
	e := newEnv(b, realClock)
	w := e.agent(b, authz.AgentInput{Name: "bob", Role: authz.RoleSuperuser})
	sess, err := e.svc.Authenticate("bob", w.Passkey, "", "")
	if err != nil {
		b.Fatal(err)
	}
	caller, err := e.svc.Resolve("m", authz.Identity{}, sess.Token)
	if err != nil {
		b.Fatal(err)
	}
	req := &core.Request{Kind: core.KindToolCall, Caller: caller, Server: "github", Name: "create_issue"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := e.svc.Authorize(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFilter500Tools filters a tools/list of 500 downstream tools for
// one agent (warm cache).
func BenchmarkFilter500Tools(b *testing.B) {
	e := newEnv(b, realClock)
	var servers []string
	for i := 0; i < 10; i++ {
		servers = append(servers, fmt.Sprintf("srv%d", i))
	}
	if _, err := e.svc.CreateRole(authz.RoleInput{Name: "dev", Servers: servers}); err != nil {
		b.Fatal(err)
	}
	w := e.agent(b, authz.AgentInput{Name: "bob", Role: "dev"})
	caller := mustResolve(b, e, "m", w.Token, "")
	targets := make([]core.Target, 0, 500)
	for i := 0; i < 500; i++ {
		targets = append(targets, toolTarget(servers[i%10], fmt.Sprintf("tool_%d", i)))
	}
	visible := make([]core.Target, 0, len(targets))
	filter := func() {
		visible = visible[:0]
		for _, t := range targets {
			if e.svc.Allowed(&caller, t) {
				visible = append(visible, t)
			}
		}
	}
	filter()
	if len(visible) != 500 {
		b.Fatalf("%d visible", len(visible))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		filter()
	}
}

// BenchmarkResolve is the per-request identification of a connection made
// with an agent token.
func BenchmarkResolve(b *testing.B) {
	e := newEnv(b, realClock)
	w := e.agent(b, authz.AgentInput{Name: "bob"})
	id, err := e.svc.IdentifyToken(w.Token)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.svc.Resolve("m", id, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIdentifyToken is the check of a connection's bearer token.
func BenchmarkIdentifyToken(b *testing.B) {
	e := newEnv(b)
	w := e.agent(b, authz.AgentInput{Name: "bob"})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.svc.IdentifyToken(w.Token); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSecretMatches compares a near miss and a far miss: the times
// should be the same (the comparison is over fixed-size digests, in
// constant time).
func BenchmarkSecretMatches(b *testing.B) {
	tok := authz.TokenPrefix + "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE"
	h := authz.HashSecret(tok)
	for name, guess := range map[string]string{"near": tok[:len(tok)-1] + "F", "far": authz.TokenPrefix + "zzzz"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if authz.SecretMatches(h, guess) {
					b.Fatal("matched")
				}
			}
		})
	}
}
