package airlock_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// childEnv names the data directory of an Airlock that a test runs in a
// child process, so that it can kill it with SIGKILL.
const childEnv = "AIRLOCK_TEST_CHILD_DIR"

// childFsizeEnv limits the size of the files the child may write once it
// is ready (RLIMIT_FSIZE), in bytes.
const childFsizeEnv = "AIRLOCK_TEST_CHILD_FSIZE"

// runChildIfAsked makes this test binary an Airlock server when started by
// startChild: it starts, prints READY <mcp-url> <token>, and runs until killed.
func runChildIfAsked(allowAll bool) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		return
	}
	in, err := airlock.Start(context.Background(), airlock.Options{DataDir: dir, Addr: "127.0.0.1:0",
		InProcess: map[string]*mcp.Server{"test": testutil.NewTestServer().Server}})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	if allowAll {
		in.API.Rules.Create(hitl.RuleInput{AutoApprove: true})
	}
	if v := os.Getenv(childFsizeEnv); v != "" {
		// From now on no file of this process may grow past v bytes: a
		// full disk, for the audit log, without needing one.
		n, _ := strconv.ParseUint(v, 10, 64)
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
	}
	fmt.Printf("READY %s %s %s\n", in.Info.MCPURL, in.Info.AgentToken, in.UIURL())
	select {}
}

// child is an Airlock running in a child process.
type child struct {
	url, token string // the MCP endpoint and the agent token
	ui         string // the UI's URL with its token
	kill       func() // SIGKILL to its process group
}

// startChild runs the test named test again in a child process, as an
// Airlock on dir (with the in-process test server "test"), and returns it
// once it is ready.
func startChild(t *testing.T, test, dir string, env ...string) child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^"+test+"$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+dir), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}
	t.Cleanup(kill)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "READY" {
			return child{url: f[1], token: f[2], ui: f[3], kill: kill}
		}
	}
	t.Fatal("child Airlock never became ready")
	return child{}
}

// rpc calls a method of the child's UI facade over HTTP and decodes its
// answer into out.
func (c child) rpc(t *testing.T, method string, out any, args ...any) {
	t.Helper()
	u, err := url.Parse(c.ui)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(args)
	if args == nil {
		body = []byte("[]")
	}
	req, _ := http.NewRequest("POST", "http://"+u.Host+"/api/rpc/"+method, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+u.Query().Get("token"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d", method, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}
