package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingPkg is the Go SDK's conformance server, built from the module
// vendored SDK (third_party/go-sdk) at the version go.mod requires.
const everythingPkg = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// Options configure one comparison.
type Options struct {
	Root     string // the repository root
	Airlock  string // absolute path of the airlock binary
	NoPrefix string // auto, on or off
	Keep     bool   // keep the work directory
	// Scenarios, when set, are the only scenarios run (the suite's
	// --scenario, one run each); otherwise every server scenario is.
	Scenarios []string
	Log       io.Writer
}

// Outcome is one scenario's result in one run.
type Outcome struct {
	Ran          bool // the suite wrote a result for it
	Passed       int  // checks with status SUCCESS
	Failed       int  // checks with status FAILURE
	FirstFailure string
	// ToolErrors holds, by check id, the text of tool results with isError
	// set that passing checks were judged on (see Row.Masked).
	ToolErrors map[string]string `json:",omitempty"`
}

// OK is the suite's own verdict: a scenario passes when it ran and none of
// its checks failed.
func (o Outcome) OK() bool { return o.Ran && o.Failed == 0 }

func (o Outcome) String() string {
	switch {
	case !o.Ran:
		return "no result"
	case o.OK():
		return fmt.Sprintf("pass (%d)", o.Passed)
	}
	return fmt.Sprintf("**FAIL** (%d/%d)", o.Failed, o.Passed+o.Failed)
}

// Row is one scenario in the four runs.
type Row struct {
	Scenario string
	Direct   Outcome // the suite against everything-server (stateful)
	// Stateless is the suite against everything-server in its stateless
	// mode, the only one in which the Go SDK serves the 2026-07-28
	// revision (and the one that cannot send sampling or elicitation).
	Stateless Outcome
	Control   Outcome // Direct, through the header-adding proxy
	Airlock   Outcome // through the proxy and airlock serve
	// Masked is set when the suite passed a check through Airlock on a tool
	// result that is an error where the direct result was not (or a
	// different error): some scenarios only look for content, and a
	// gateway's refusal has text content too.
	Masked string
}

// DirectOK is whether everything-server passes the scenario on its own,
// in either mode.
func (r Row) DirectOK() bool { return r.Direct.OK() || r.Stateless.OK() }

// baseline is the direct run a pass through Airlock is compared with.
func (r Row) baseline() Outcome {
	if r.Direct.OK() || !r.Stateless.OK() {
		return r.Direct
	}
	return r.Stateless
}

// AirlockOK is whether the scenario passes through Airlock, masked passes
// counted as failures.
func (r Row) AirlockOK() bool { return r.Airlock.OK() && r.Masked == "" }

// masked compares the tool errors behind passing checks.
func masked(direct, through Outcome) string {
	ids := make([]string, 0, len(through.ToolErrors))
	for id := range through.ToolErrors {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if d, ok := direct.ToolErrors[id]; !ok || d != through.ToolErrors[id] {
			return fmt.Sprintf("%s passed on an error result: %s", id, through.ToolErrors[id])
		}
	}
	return ""
}

// Comparison is the result of Compare.
type Comparison struct {
	Rows         []Row
	Date         time.Time
	Suite, Node  string // versions
	SDK          string // the go-sdk version everything-server was built from
	AirlockVer   string
	AirlockBin   string
	NoPrefix     bool   // everything-server was added with --no-prefix
	Stateless    bool   // the stateless direct run was made
	NoPrefixNote string // why not, when it was not
}

// Differences are the scenarios that pass directly but not through Airlock.
func (c *Comparison) Differences() []Row {
	var out []Row
	for _, r := range c.Rows {
		if r.DirectOK() && !r.AirlockOK() {
			out = append(out, r)
		}
	}
	return out
}

// suite is the pinned conformance suite and node.
type suite struct {
	node, script string
}

// suiteDirEnv names a directory holding another install of the suite (its
// node_modules with @modelcontextprotocol/conformance and node), to try a
// newer release than the pinned one without changing the pin.
const suiteDirEnv = "AIRLOCK_CONFORMANCE_DIR"

func findSuite(root string) (suite, error) {
	dir := filepath.Join(root, "build", "conformance", "node_modules")
	if d := os.Getenv(suiteDirEnv); d != "" {
		dir = filepath.Join(d, "node_modules")
	}
	s := suite{
		node:   filepath.Join(dir, "node", "bin", "node"),
		script: filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js"),
	}
	for _, p := range []string{s.node, s.script} {
		if _, err := os.Stat(p); err != nil {
			return suite{}, fmt.Errorf("%v: run `npm ci --no-audit --no-fund` in build/conformance (`go tool task deps:npm` does)", err)
		}
	}
	return s, nil
}

func (s suite) cmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, s.node, append([]string{s.script}, args...)...)
	// Anything the suite starts with `node` gets the pinned one, not the system's.
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(s.node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return cmd
}

var scenarioLine = regexp.MustCompile(`^\s*-\s+(\S+)`)

// statelessRevision is the first MCP revision the Go SDK serves only in
// its stateless mode.
const statelessRevision = "2026-07-28"

// scenarios lists the suite's server scenarios, pending ones included, and
// whether any is of statelessRevision (releases after 0.1.16 print each
// scenario's revisions after its name).
func (s suite) scenarios(ctx context.Context) ([]string, bool, error) {
	out, err := s.cmd(ctx, "list", "--server").Output()
	if err != nil {
		return nil, false, fmt.Errorf("conformance list --server: %w", err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if m := scenarioLine.FindStringSubmatch(line); m != nil {
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		return nil, false, fmt.Errorf("conformance list --server printed no scenarios: %q", out)
	}
	return names, strings.Contains(string(out), statelessRevision), nil
}

// resultDir matches the suite's per-scenario output directories:
// server-<scenario>-<ISO time with - for :>.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// run runs every server scenario (or only those named) against url and
// reads the results.
func (s suite) run(ctx context.Context, url, outDir string, only []string, log io.Writer) (map[string]Outcome, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	var buf bytes.Buffer
	var runErr error
	if len(only) == 0 {
		only = []string{""}
	}
	for _, name := range only {
		args := []string{"server", "--url", url, "--suite", "all", "-o", outDir}
		if name != "" {
			args = []string{"server", "--url", url, "--scenario", name, "-o", outDir}
		}
		cmd := s.cmd(cctx, args...)
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Run(); err != nil { // non-zero whenever a scenario fails: judged below
			runErr = err
		}
	}
	if err := os.WriteFile(outDir+".log", buf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(outDir)
	if err != nil || len(entries) == 0 {
		return nil, fmt.Errorf("the suite wrote no results for %s (%v): %s", url, runErr, tail(buf.String(), 2000))
	}
	out := map[string]Outcome{}
	for _, e := range entries {
		m := resultDir.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		o, err := readChecks(filepath.Join(outDir, e.Name(), "checks.json"))
		if err != nil {
			return nil, err
		}
		out[m[1]] = o
	}
	fmt.Fprintf(log, "conformance: %s: %d scenarios\n", url, len(out))
	return out, nil
}

func readChecks(path string) (Outcome, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Outcome{}, err
	}
	var checks []struct {
		ID, Status, ErrorMessage, Description string
		Details                               struct {
			Result *struct {
				IsError bool
				Content []struct{ Type, Text string }
			}
		}
	}
	if err := json.Unmarshal(b, &checks); err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", path, err)
	}
	o := Outcome{Ran: true}
	for _, c := range checks {
		switch c.Status {
		case "SUCCESS":
			o.Passed++
			if r := c.Details.Result; r != nil && r.IsError {
				var text []string
				for _, ct := range r.Content {
					text = append(text, ct.Text)
				}
				if o.ToolErrors == nil {
					o.ToolErrors = map[string]string{}
				}
				o.ToolErrors[c.ID] = strings.Join(text, " ")
			}
		case "FAILURE":
			o.Failed++
			if o.FirstFailure == "" {
				msg := c.ErrorMessage
				if msg == "" {
					msg = c.Description
				}
				o.FirstFailure = c.ID + ": " + msg
			}
		}
	}
	return o, nil
}

// Compare runs the suite directly, through the proxy alone (the control)
// and through the proxy and Airlock, and lines the results up.
func Compare(ctx context.Context, o Options) (*Comparison, error) {
	logf := func(format string, args ...any) { fmt.Fprintf(o.Log, "conformance: "+format+"\n", args...) }
	s, err := findSuite(o.Root)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "airlock-conformance-")
	if err != nil {
		return nil, err
	}
	if o.Keep {
		logf("work directory kept: %s", work)
	} else {
		defer os.RemoveAll(work)
	}
	c := &Comparison{Date: time.Now().UTC(), AirlockBin: o.Airlock}
	c.Suite = strings.TrimSpace(output(ctx, s.cmd(ctx, "--version")))
	c.Node = strings.TrimSpace(output(ctx, exec.CommandContext(ctx, s.node, "--version")))
	c.AirlockVer = strings.TrimSpace(output(ctx, exec.CommandContext(ctx, o.Airlock, "version")))
	sdk := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}}", "github.com/modelcontextprotocol/go-sdk")
	sdk.Dir = o.Root
	c.SDK = strings.TrimSpace(output(ctx, sdk))

	names, newer, err := s.scenarios(ctx)
	if err != nil {
		return nil, err
	}
	if len(o.Scenarios) > 0 {
		names = o.Scenarios
	}

	logf("building %s", everythingPkg)
	server := filepath.Join(work, "everything-server")
	// From this module: the vendored SDK (third_party/go-sdk) carries the
	// conformance server too, so nothing is downloaded.
	build := exec.CommandContext(ctx, "go", "build", "-o", server, everythingPkg)
	build.Dir = o.Root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s: %v: %s", everythingPkg, err, out)
	}

	// Direct: stateful Streamable HTTP, as the Go SDK's own conformance
	// script runs it (stateless mode cannot send sampling or elicitation).
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	es, err := startProcess(ctx, filepath.Join(work, "everything-server.log"), server, "-http", addr, "-stateless=false")
	if err != nil {
		return nil, err
	}
	defer es.stop()
	if err := waitListening(ctx, addr, es); err != nil {
		return nil, err
	}
	logf("direct run against %s", addr)
	direct, err := s.run(ctx, "http://"+addr+"/mcp", filepath.Join(work, "direct"), o.Scenarios, o.Log)
	if err != nil {
		return nil, err
	}

	// Direct, stateless: the SDK serves the 2026-07-28 revision only so.
	// Run when the suite has scenarios of that revision (not 0.1.16).
	stateless := map[string]Outcome{}
	if newer {
		c.Stateless = true
		saddr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		ses, err := startProcess(ctx, filepath.Join(work, "everything-server-stateless.log"), server, "-http", saddr, "-stateless=true")
		if err != nil {
			return nil, err
		}
		defer ses.stop()
		if err := waitListening(ctx, saddr, ses); err != nil {
			return nil, err
		}
		logf("direct run against the stateless server at %s", saddr)
		if stateless, err = s.run(ctx, "http://"+saddr+"/mcp", filepath.Join(work, "direct-stateless"), o.Scenarios, o.Log); err != nil {
			return nil, err
		}
	}

	ctl, err := startProxy("http://"+addr, "control-token-ignored-by-the-server", o.Log)
	if err != nil {
		return nil, err
	}
	defer ctl.Close()
	logf("control run through the header proxy at %s", ctl.Addr)
	control, err := s.run(ctx, "http://"+ctl.Addr+"/mcp", filepath.Join(work, "control"), o.Scenarios, o.Log)
	if err != nil {
		return nil, err
	}

	al, err := startAirlock(ctx, o, c, server, filepath.Join(work, "airlock"))
	if err != nil {
		return nil, err
	}
	defer al.proc.stop()
	if err := waitListening(ctx, strings.TrimPrefix(al.url, "http://"), al.proc); err != nil {
		return nil, err
	}
	px, err := startProxy(al.url, al.token, o.Log)
	if err != nil {
		return nil, err
	}
	defer px.Close()
	if err := waitTools(ctx, "http://"+px.Addr+"/mcp", al.proc); err != nil {
		return nil, fmt.Errorf("%w (Airlock log: %s)", err, al.proc.log)
	}
	logf("run through Airlock (%s) behind the header proxy at %s", al.url, px.Addr)
	through, err := s.run(ctx, "http://"+px.Addr+"/mcp", filepath.Join(work, "airlock-run"), o.Scenarios, o.Log)
	if err != nil {
		return nil, err
	}

	// Every listed scenario, plus any the runs reported that the list did not.
	for _, m := range []map[string]Outcome{direct, stateless, control, through} {
		for n := range m {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	for _, n := range names {
		r := Row{Scenario: n, Direct: direct[n], Stateless: stateless[n], Control: control[n], Airlock: through[n]}
		r.Masked = masked(r.baseline(), through[n])
		c.Rows = append(c.Rows, r)
	}
	return c, nil
}

func output(ctx context.Context, cmd *exec.Cmd) string {
	b, err := cmd.Output()
	if err != nil || ctx.Err() != nil {
		return "unknown"
	}
	return string(b)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// process is a child process the runner started.
type process struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func startProcess(ctx context.Context, logPath, name string, args ...string) (*process, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { cmd.Wait(); f.Close(); close(p.done) }()
	return p, nil
}

// stop interrupts the process (Airlock then stops its downstream servers),
// and kills it if it has not exited after 10 s.
func (p *process) stop() {
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func waitListening(ctx context.Context, addr string, p *process) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if p.exited() {
			return fmt.Errorf("%s exited: see %s", p.cmd.Path, p.log)
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s never listened on %s", p.cmd.Path, addr)
}

// waitTools waits until a session at url lists the everything-server's
// tools, under either name (prefixed or not).
func waitTools(ctx context.Context, url string, p *process) error {
	deadline := time.Now().Add(60 * time.Second)
	var last error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if p.exited() {
			return fmt.Errorf("airlock serve exited during start-up")
		}
		last = func() error {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			cl := mcp.NewClient(&mcp.Implementation{Name: "conformance-wait", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
			s, err := cl.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				return err
			}
			defer s.Close()
			res, err := s.ListTools(cctx, nil)
			if err != nil {
				return err
			}
			for _, t := range res.Tools {
				if strings.HasSuffix(t.Name, "test_simple_text") {
					return nil
				}
			}
			return errors.New("everything-server's tools not listed yet")
		}()
		if last == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("Airlock never listed everything-server's tools: %v", last)
}

// airlockRun is a started airlock serve.
type airlockRun struct {
	proc       *process
	url, token string
}

// startAirlock sets up a data directory through the CLI, as a user would
// (the server, an auto-approve rule so no call waits for a person, the
// token) and starts `airlock serve` on a free loopback port.
func startAirlock(ctx context.Context, o Options, c *Comparison, server, dir string) (*airlockRun, error) {
	cli := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, o.Airlock, args...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("airlock %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return string(out), nil
	}
	add := func(extra ...string) error {
		args := append([]string{"servers", "add", "everything", "--data-dir", dir}, extra...)
		_, err := cli(append(args, "--", server)...)
		return err
	}
	switch o.NoPrefix {
	case "on":
		if err := add("--no-prefix"); err != nil {
			return nil, err
		}
		c.NoPrefix = true
	case "auto":
		// A build without the flag refuses it; then the server is added
		// with prefixed names and the report says so.
		if err := add("--no-prefix"); err != nil {
			c.NoPrefixNote = err.Error()
			if err := add(); err != nil {
				return nil, err
			}
		} else {
			c.NoPrefix = true
		}
	default:
		c.NoPrefixNote = "-no-prefix off"
		if err := add(); err != nil {
			return nil, err
		}
	}
	if _, err := cli("rules", "add", "--data-dir", dir, "--auto-approve"); err != nil {
		return nil, err
	}
	tok, err := cli("token", "--data-dir", dir)
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p, err := startProcess(ctx, dir+".log", o.Airlock, "serve", "--data-dir", dir, "--addr", addr)
	if err != nil {
		return nil, err
	}
	return &airlockRun{proc: p, url: "http://" + addr, token: strings.TrimSpace(tok)}, nil
}

// proxy adds `Authorization: Bearer <token>` to every request and changes
// nothing else: the Host header stays the one the suite sent (so its
// DNS-rebinding scenario tests the server behind), and streams are relayed
// as they come.
type proxy struct {
	Addr string
	srv  *http.Server
}

func startProxy(target, token string, logw io.Writer) (*proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1, // SSE: every event at once
		ErrorLog:      log.New(logw, "conformance: header proxy: ", 0),
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the (small, JSON-RPC) request body before relaying: Go's
		// HTTP/1 server closes an unread body once the response starts,
		// which would cut a relayed SSE stream.
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{Addr: l.Addr().String(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: rp.ErrorLog}}
	go p.srv.Serve(l)
	return p, nil
}

// Close stops the proxy and its open streams.
func (p *proxy) Close() { p.srv.Close() }

// Markdown renders the comparison as a report.
func (c *Comparison) Markdown() string {
	b := &strings.Builder{}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("# MCP server conformance: directly and through Airlock\n\n")
	p("| | |\n|---|---|\n")
	p("| date (UTC) | %s |\n", c.Date.Format("2006-01-02 15:04"))
	p("| suite | @modelcontextprotocol/conformance %s (`server --suite all`) on node %s |\n", c.Suite, c.Node)
	p("| server | go-sdk %s `conformance/everything-server` |\n", c.SDK)
	p("| Airlock | %s (%s) |\n", c.AirlockVer, c.AirlockBin)
	if c.NoPrefix {
		p("| names | everything-server added with `--no-prefix`: tools, prompts and resources under their own names |\n")
	} else {
		p("| names | everything-server added **without** `--no-prefix` (%s): Airlock exposes its tools as `everything__<tool>` |\n", cell(c.NoPrefixNote))
	}
	directOK, both := 0, 0
	for _, r := range c.Rows {
		if r.DirectOK() {
			directOK++
			if r.AirlockOK() {
				both++
			}
		}
	}
	diff := c.Differences()
	p("\n**%d of %d scenarios pass directly; %d of those pass through Airlock.**", directOK, len(c.Rows), both)
	if len(diff) > 0 {
		var names []string
		for _, r := range diff {
			names = append(names, "`"+r.Scenario+"`")
		}
		p(" Different: %s.", strings.Join(names, ", "))
	}
	stateless, sep := "", ""
	if c.Stateless {
		stateless, sep = " direct, stateless server |", "---|"
	}
	p("\n\n| scenario | direct |%s direct via header proxy (control) | through Airlock | first failed check through Airlock |\n|---|---|%s---|---|---|\n", stateless, sep)
	for _, r := range c.Rows {
		through, note := r.Airlock.String(), ""
		switch {
		case !r.Airlock.OK():
			note = r.Airlock.FirstFailure
		case r.Masked != "":
			through, note = "**FAIL** (masked pass)", r.Masked
		}
		st := ""
		if c.Stateless {
			st = " " + r.Stateless.String() + " |"
		}
		p("| %s | %s |%s %s | %s | %s |\n", r.Scenario, r.Direct, st, r.Control, through, cell(truncate(note, 160)))
	}
	p("\n## How it was run\n\n")
	p("- `direct`: everything-server `-http 127.0.0.1:PORT -stateless=false` (stateful, as the Go SDK's own conformance script runs it), suite against `http://127.0.0.1:PORT/mcp`.\n")
	if c.Stateless {
		p("- `direct, stateless server`: the same with `-stateless=true`, the only mode in which the Go SDK serves the 2026-07-28 revision (and in which it cannot send sampling or elicitation requests); run because the suite has scenarios of that revision. A scenario passes directly when it passes in either mode.\n")
	}
	flag := ""
	if c.NoPrefix {
		flag = " --no-prefix"
	}
	p("- `through Airlock`: a fresh data directory set up with `airlock servers add everything%s -- everything-server` (stdio), `airlock rules add --auto-approve`, `airlock token`; then `airlock serve`.\n", flag)
	p("- The suite's `server` command takes only `--url` and its client sends no custom headers, so the runner puts a reverse proxy in front that adds `Authorization: Bearer <agent token>` and keeps the suite's Host header. The control column is the suite through that proxy in front of everything-server alone: it matches `direct` when the proxy is transparent.\n")
	p("- A scenario the suite passes through Airlock counts as failed (\"masked pass\") when a passing check was judged on a tool result that is an error where the direct result was not, or a different error: some scenarios check only that content came back, and a refusal has content too.\n")
	p("- Reproduce: `go tool task conformance` (or `go run ./build/conformance -airlock build/bin/airlock-headless -report`); `AIRLOCK_BIN=… go test ./build/conformance` fails for every scenario in the \"Different\" list.\n")
	return b.String()
}

func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
