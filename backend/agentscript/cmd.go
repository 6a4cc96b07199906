package agentscript

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
)

const usage = `usage: airlock agent-script FILE [--url U] [--token T] [--mcp-config FILE] [--var K=V]...

Run the YAML script FILE as an agent: a real MCP client that connects to
Airlock with an agent token, performs the script's steps (tool calls with
expected outcomes, tool listings, notifications, polls) and prints each.
It exits 0 when every step passed and 1 at the first that did not.

It is a test double for an LLM agent, for tests and demos: it does what the
script says and nothing else. See the package documentation of
backend/agentscript for the script format.

Where to connect, first found wins: --url and --token; the server "airlock"
(or the only server) of --mcp-config FILE, an mcpServers file as Claude
Code reads it (Airlock's runner writes one for each run); $AIRLOCK_URL and
$AIRLOCK_TOKEN.

flags:
`

// Run runs `airlock agent-script ARGS`. A usage or script problem is an
// EInvalid error; a failed step is an EExpectation error.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("airlock agent-script", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	url := fs.String("url", "", "Airlock's MCP endpoint")
	token := fs.String("token", "", "the agent token (prefer --mcp-config or $AIRLOCK_TOKEN: a flag shows in the process list)")
	mcpConfig := fs.String("mcp-config", "", "an mcpServers JSON file naming Airlock's URL and the Authorization header")
	vars := map[string]string{}
	fs.Func("var", "set a script variable, K=V (repeatable)", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || !varName.MatchString(k) {
			return fmt.Errorf("%q is not NAME=VALUE", s)
		}
		vars[k] = v
		return nil
	})
	// Flags and the file may come in any order.
	var files []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, usage)
				fs.SetOutput(stdout)
				fs.PrintDefaults()
				return nil
			}
			return core.Errorf(core.EInvalid, "%v", err).WithHint("see 'airlock agent-script -h'")
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		files = append(files, rest[0])
		rest = rest[1:]
	}
	if len(files) != 1 {
		fmt.Fprint(stderr, usage)
		return core.Errorf(core.EInvalid, "give one script file").WithHint("see 'airlock agent-script -h'")
	}
	s, err := ReadFile(files[0])
	if err != nil {
		return err
	}
	u, t := *url, *token
	if u == "" && *mcpConfig != "" {
		cu, ct, err := ReadMCPConfig(*mcpConfig)
		if err != nil {
			return err
		}
		u = cu
		if t == "" {
			t = ct
		}
	}
	if u == "" {
		u = getenv("AIRLOCK_URL")
	}
	if t == "" {
		t = getenv("AIRLOCK_TOKEN")
	}
	if t == "" {
		return core.Errorf(core.EInvalid, "no agent token").
			WithHint("give --mcp-config FILE, $AIRLOCK_TOKEN or --token")
	}
	return Execute(ctx, s, Config{URL: u, Token: t, Vars: vars, Out: stdout})
}

// ReadMCPConfig reads Airlock's URL and token from an mcpServers file: the
// server "airlock", or the only one; "url" or Gemini's "httpUrl"; the
// token of its "Authorization: Bearer" header.
func ReadMCPConfig(path string) (url, token string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", core.Errorf(core.EInvalid, "read the MCP config: %v", err)
	}
	var f struct {
		MCPServers map[string]struct {
			URL     string            `json:"url"`
			HTTPURL string            `json:"httpUrl"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return "", "", core.Errorf(core.EInvalid, "the MCP config %s is not JSON: %v", path, err)
	}
	srv, ok := f.MCPServers["airlock"]
	if !ok {
		if len(f.MCPServers) != 1 {
			var names []string
			for n := range f.MCPServers {
				names = append(names, n)
			}
			sort.Strings(names)
			return "", "", core.Errorf(core.EInvalid, "the MCP config %s has no server \"airlock\" (it has %s)", path, strings.Join(names, ", "))
		}
		for _, s := range f.MCPServers {
			srv = s
		}
	}
	url = srv.URL
	if url == "" {
		url = srv.HTTPURL
	}
	for k, v := range srv.Headers {
		if strings.EqualFold(k, "Authorization") {
			token = strings.TrimSpace(strings.TrimPrefix(v, "Bearer "))
		}
	}
	if url == "" {
		return "", "", core.Errorf(core.EInvalid, "the MCP config %s names no URL for Airlock", path)
	}
	return url, token, nil
}
