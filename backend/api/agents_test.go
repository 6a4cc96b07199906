package api_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/api"
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// start runs an Airlock with one in-process server "work".
func start(t *testing.T) *airlock.Instance {
	t.Helper()
	in, err := airlock.Start(context.Background(), airlock.Options{
		DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		UI:        fstest.MapFS{"index.html": {Data: []byte("<title>Airlock</title>")}},
		InProcess: map[string]*mcp.Server{"work": testutil.NewTestServer().Server},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Close)
	return in
}

// accessOf returns the agent's access to the tools of server "work", by
// tool name, once the catalog lists them.
func accessOf(t *testing.T, in *airlock.Instance, id string) map[string]api.ToolAccess {
	t.Helper()
	var out map[string]api.ToolAccess
	testutil.Eventually(t, 10*time.Second, func() bool {
		list, err := in.API.Agents.Access(id)
		if err != nil {
			t.Fatal(err)
		}
		out = map[string]api.ToolAccess{}
		for _, a := range list {
			if a.Server == authz.Server {
				t.Errorf("Access lists Airlock's own tool %s", a.Tool)
			}
			if a.Server == "work" {
				out[a.Tool] = a
			}
		}
		return len(out) > 0 // the catalog lists the server in the background
	}, "server work's tools never appeared in Access(%s)", id)
	return out
}

// The Agents screen shows per tool what the gate decides, with the gate's
// reason code and the hint that links to the setting.
func TestAccessIsTheGatesDecision(t *testing.T) {
	in := start(t)
	ag := in.API.Agents
	if _, err := ag.CreateRole(authz.RoleInput{Name: "workers", Servers: []string{"work"}}); err != nil {
		t.Fatal(err)
	}
	alice, err := ag.Create(authz.AgentInput{Name: "alice", Role: "workers"})
	if err != nil {
		t.Fatal(err)
	}
	bob, err := ag.Create(authz.AgentInput{Name: "bob"}) // the default role grants nothing
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Allowed bool
		Code    string
		Link    string
	}
	decide := func(id, tool string) got {
		a, ok := accessOf(t, in, id)[tool]
		if !ok {
			t.Fatalf("Access(%s) has no tool %s", id, tool)
		}
		link := ""
		if i := strings.Index(a.Hint, "#/agents/"); i >= 0 {
			link = strings.TrimSuffix(a.Hint[i:], ")")
		}
		return got{a.Allowed, a.Code, link}
	}
	tests := []struct {
		name   string
		change func() error
		id     string
		want   got
	}{
		{"granted", nil, alice.Agent.ID, got{Allowed: true}},
		{"no grant", nil, bob.Agent.ID, got{Code: authz.ReasonNotSubscribed, Link: "#/agents/" + bob.Agent.ID + "?tab=role"}},
		{"switched off", func() error {
			_, err := ag.SetToolEnabled(alice.Agent.ID, "work", "touch", false)
			return err
		}, alice.Agent.ID, got{Code: authz.ReasonUserDisabled, Link: "#/agents/" + alice.Agent.ID + "?tab=tools"}},
		{"suspended", func() error {
			_, err := ag.Suspend(alice.Agent.ID)
			return err
		}, alice.Agent.ID, got{Code: authz.ReasonSuspended, Link: "#/agents/" + alice.Agent.ID + "?tab=status"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.change != nil {
				if err := tt.change(); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tt.want, decide(tt.id, "touch")); diff != "" {
				t.Errorf("Access of touch (-want +got):\n%s", diff)
			}
		})
	}

	if _, err := ag.Access("ag_nobody"); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("Access of an unknown agent = %v, want %s", err, core.ENotFound)
	}
}

// Changes authz does not announce (nobody's permissions changed) still
// reach every open Agents screen.
func TestAgentChangesAreAnnounced(t *testing.T) {
	in := start(t)
	ag := in.API.Agents
	sub := in.Hub.Subscribe([]string{"agents"})
	defer sub.Close()
	steps := []struct {
		name string
		do   func() error
	}{
		{"create role", func() error { _, err := ag.CreateRole(authz.RoleInput{Name: "spare"}); return err }},
		{"grant to a role nobody has", func() error { _, err := ag.Grant("spare", "work"); return err }},
		{"create project", func() error { _, err := ag.CreateProject("apollo", ""); return err }},
		{"create agent", func() error { _, err := ag.Create(authz.AgentInput{Name: "carol"}); return err }},
		{"delete project", func() error { return ag.DeleteProject("apollo", false) }},
		{"delete role", func() error { return ag.DeleteRole("spare") }},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if err := s.do(); err != nil {
				t.Fatal(err)
			}
			select {
			case ev := <-sub.C():
				if ev.Name != core.EventAgentsChanged {
					t.Errorf("event %s, want %s", ev.Name, core.EventAgentsChanged)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no %s after %s", core.EventAgentsChanged, s.name)
			}
			for len(sub.C()) > 0 { // a change authz announced too comes twice
				<-sub.C()
			}
		})
	}
	// A refused change announces nothing.
	if err := ag.DeleteRole("nope"); err == nil {
		t.Fatal("deleting an unknown role succeeded")
	}
	select {
	case ev := <-sub.C():
		t.Errorf("a refused change emitted %s", ev.Name)
	default:
	}
}

// The Claude Desktop snippet passes the token in the bridge's environment,
// not on its command line, where other users could read it in the process
// list (found in a security review).
func TestBridgeSnippetKeepsTheTokenOffTheCommandLine(t *testing.T) {
	in := start(t)
	a, err := in.API.Agents.Create(authz.AgentInput{Name: "desk"})
	if err != nil {
		t.Fatal(err)
	}
	snippets, err := in.API.Agents.Snippets(a.Token, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snippets {
		if s.Client != "Claude Desktop" {
			continue
		}
		var cfg struct {
			MCPServers map[string]struct {
				Command string            `json:"command"`
				Args    []string          `json:"args"`
				Env     map[string]string `json:"env"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(s.Text), &cfg); err != nil {
			t.Fatalf("the snippet is not JSON: %v\n%s", err, s.Text)
		}
		srv := cfg.MCPServers["airlock"]
		if srv.Env["AIRLOCK_TOKEN"] != a.Token || slices.Contains(srv.Args, a.Token) || srv.Command == "" {
			t.Errorf("Claude Desktop snippet = %+v, want the token in env only", srv)
		}
		return
	}
	t.Error("no Claude Desktop snippet")
}

// A chat session's snippets can be pasted as they are: the URL quoted for
// the shell (zsh took ?purpose=chat as a glob; found by a new-user test),
// and a name of their own beside the task session's entry.
func TestChatSnippetsPasteAsTheyAre(t *testing.T) {
	in := start(t)
	a, err := in.API.Agents.Create(authz.AgentInput{Name: "talker"})
	if err != nil {
		t.Fatal(err)
	}
	snippets, err := in.API.Agents.Snippets(a.Token, core.PurposeChat)
	if err != nil {
		t.Fatal(err)
	}
	want := "claude mcp add --transport http airlock-chat '" + in.Info.MCPURL + "?purpose=chat' \\\n"
	for _, s := range snippets {
		switch s.Client {
		case "Claude Code":
			if !strings.HasPrefix(s.Text, want) {
				t.Errorf("Claude Code snippet = %q, want it to start %q", s.Text, want)
			}
		case "Cursor", "Gemini CLI", "Claude Desktop":
			var cfg struct {
				MCPServers map[string]json.RawMessage `json:"mcpServers"`
			}
			if err := json.Unmarshal([]byte(s.Text), &cfg); err != nil || cfg.MCPServers["airlock-chat"] == nil {
				t.Errorf("%s snippet = %s (%v), want an airlock-chat entry", s.Client, s.Text, err)
			}
			if s.Client != "Claude Desktop" {
				break
			}
			// The bridge is told the purpose by its flag (SPEC §1), with
			// the plain URL.
			var entry struct {
				Args []string `json:"args"`
			}
			json.Unmarshal(cfg.MCPServers["airlock-chat"], &entry)
			if want := []string{"--url", in.Info.MCPURL, "--purpose", "chat"}; len(entry.Args) < len(want) || !slices.Equal(entry.Args[len(entry.Args)-len(want):], want) {
				t.Errorf("Claude Desktop's bridge arguments = %q, want them to end %q", entry.Args, want)
			}
		case "Codex CLI":
			if !strings.HasPrefix(s.Text, "[mcp_servers.airlock-chat]") {
				t.Errorf("Codex snippet = %q", s.Text)
			}
		}
	}
	plain, _ := in.API.Agents.Snippets(a.Token, "")
	if !strings.Contains(plain[0].Text, "airlock "+in.Info.MCPURL+" ") {
		t.Errorf("a task session's Claude Code snippet = %q, want the plain URL unquoted", plain[0].Text)
	}
}
