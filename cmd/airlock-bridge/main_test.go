package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/authz"
)

// TestMain lets a test run this program: with AIRLOCK_BRIDGE_TEST_ARGS set
// (its arguments, one per line) the test binary is airlock-bridge.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("AIRLOCK_BRIDGE_TEST_ARGS"); ok {
		os.Args = append([]string{"airlock-bridge"}, strings.Split(args, "\n")...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// SPEC §1: "airlock bridge --token T [--purpose task|chat] [--url U]". A
// stdio-only client (Claude Desktop) that runs an agent's chat session
// starts the bridge with --purpose chat, and its session is a chat
// session: it lists and may call the chat tools (seed 000's chat_only
// level).
func TestBridgePurposeChat(t *testing.T) {
	in, err := airlock.Start(context.Background(), airlock.Options{DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		UI: fstest.MapFS{"index.html": {Data: []byte("<title>Airlock</title>")}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Close)
	if _, err := in.API.Agents.CreateProject("proj-001", ""); err != nil {
		t.Fatal(err)
	}
	worker, err := in.API.Agents.Create(authz.AgentInput{Name: "worker-01", Kind: authz.KindWorker, Projects: []string{"proj-001"}})
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AIRLOCK_BRIDGE_TEST_ARGS="+strings.Join([]string{
		"--purpose", "chat", "--url", in.Info.MCPURL, "--token", worker.Token, "--data-dir", t.TempDir()}, "\n"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cl := mcp.NewClient(&mcp.Implementation{Name: "stdio-client", Version: "1"}, nil)
	sess, err := cl.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("airlock-bridge --purpose chat did not start a session: %v; its stderr: %s", err, stderr.String())
	}
	defer sess.Close()
	res, err := sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "respond_chat") {
		t.Errorf("a bridge started with --purpose chat lists no chat tools: %v", names)
	}
	r, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "help"})
	if err != nil {
		t.Fatal(err)
	}
	var help authz.HelpListing
	raw, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(raw, &help); err != nil || help.Context.SessionPurpose != "chat" {
		t.Errorf("help's context through the bridge = %+v, want session_purpose chat", help.Context)
	}
}

// --project names the session's project as ?project= does, and both flags
// apply to the URL the bridge finds by itself (the Airlock running on the
// data directory), not only to a --url.
func TestBridgeProjectOnTheFoundURL(t *testing.T) {
	dir := t.TempDir()
	in, err := airlock.Start(context.Background(), airlock.Options{DataDir: dir, Addr: "127.0.0.1:0",
		UI: fstest.MapFS{"index.html": {Data: []byte("<title>Airlock</title>")}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Close)
	// The agent is in two projects: the session is in the one named.
	if _, err := in.API.Agents.CreateProject("proj-001", ""); err != nil {
		t.Fatal(err)
	}
	proj, err := in.API.Agents.CreateProject("proj-002", "")
	if err != nil {
		t.Fatal(err)
	}
	worker, err := in.API.Agents.Create(authz.AgentInput{Name: "worker-01", Kind: authz.KindWorker, Projects: []string{"proj-001", "proj-002"}})
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AIRLOCK_URL=", "AIRLOCK_BRIDGE_TEST_ARGS="+strings.Join([]string{
		"--project", "proj-002", "--purpose", "chat", "--token", worker.Token, "--data-dir", dir}, "\n"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cl := mcp.NewClient(&mcp.Implementation{Name: "stdio-client", Version: "1"}, nil)
	sess, err := cl.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("airlock-bridge --project did not start a session: %v; its stderr: %s", err, stderr.String())
	}
	defer sess.Close()
	r, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "help"})
	if err != nil {
		t.Fatal(err)
	}
	var help authz.HelpListing
	raw, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(raw, &help); err != nil || help.Context.ProjectID != proj.ID || help.Context.SessionPurpose != "chat" {
		t.Errorf("help's context through the bridge = %+v, want project %s and session_purpose chat", help.Context, proj.ID)
	}
}

// A purpose that is neither task nor chat is refused at once, saying what
// it may be, before the bridge looks for Airlock.
func TestBridgeBadPurpose(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AIRLOCK_BRIDGE_TEST_ARGS="+strings.Join([]string{
		"--purpose", "chta", "--url", "http://127.0.0.1:1/mcp", "--token", "alk_x"}, "\n"))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("airlock-bridge --purpose chta: %v, want it to fail; output %s", err, out)
	}
	if want := `airlock-bridge: --purpose is task or chat, not "chta" [invalid]`; !strings.Contains(string(out), want) {
		t.Errorf("airlock-bridge --purpose chta said %q, want %q", out, want)
	}
}
