package airlock_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/hitl"
)

// childEnv names the data directory of an Airlock that a test runs in a
// child process, so that it can kill it with SIGKILL.
const childEnv = "AIRLOCK_TEST_CHILD_DIR"

// runChildIfAsked makes this test binary an Airlock server when started by
// startChild: it starts, prints READY <mcp-url> <token>, and runs until killed.
func runChildIfAsked(allowAll bool) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		return
	}
	in, err := airlock.Start(context.Background(), airlock.Options{DataDir: dir, Addr: "127.0.0.1:0"})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	if allowAll {
		in.API.CreateRule(hitl.RuleInput{AutoApprove: true})
	}
	fmt.Printf("READY %s %s\n", in.Info.MCPURL, in.Info.AgentToken)
	select {}
}

// startChild runs the test named test again in a child process, as an
// Airlock on dir, and returns its MCP URL, its agent token and a function
// that kills it (and its process group) with SIGKILL.
func startChild(t *testing.T, test, dir string) (url, token string, kill func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^"+test+"$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill = func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}
	t.Cleanup(kill)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "READY" {
			return f[1], f[2], kill
		}
	}
	t.Fatal("child Airlock never became ready")
	return "", "", nil
}
