package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Target keys, also the report's column order.
const (
	keyDirect   = "direct"
	keyAirlock  = "airlock"
	keyHeadless = "headless"
	keyAlone    = "alone"
	keyBaseline = "baseline"
	keyBase2    = "baseline2"
	keySG       = "supergateway"
	keyFloor    = "floor"
)

// target is one path to server-everything's echo.
type target struct {
	Key, Name string
	Bin       string // the airlock binary, for airlock targets
	EP        endpoint
	Tool      string
	GW        *gateway // the gateway process; nil for direct stdio
	Load      bool     // run the many-session load test
	Airlock   bool     // an airlock binary: bridge and allocation figures
	// CPUSplit: the CPU per call of the client, the gateway and its servers
	// can be told apart. Not for direct stdio (its servers start inside the
	// test) nor supergateway (it starts a server per session and ends it
	// with the session; an ended server's time is lost to the count).
	CPUSplit bool
}

// roundResult is one target's figures from one round.
type roundResult struct {
	Seq, Conc clientResult
	Load      *clientResult
	Bridge    *clientResult
	// AfterLoadKB is the gateway's VmRSS right after the load test.
	AfterLoadKB int
	// AllocPerCall is the gateway's allocated bytes per sequential call;
	// negative when the gateway does not expose them.
	AllocPerCall float64
	// ConcCPU is the CPU each process spent per call of the concurrent
	// test, warm-up and session set-up included.
	ConcCPU cpuSplit
}

// cpuSplit is CPU time per call in µs, by process: the client process
// (for direct stdio with its servers, its children), the gateway process,
// and the gateway's descendants (its downstream servers). OK is false when
// it could not be read.
type cpuSplit struct {
	Client, Gateway, Servers float64
	OK                       bool
}

// Total is the CPU the machine spent per call on the three.
func (c cpuSplit) Total() float64 { return c.Client + c.Gateway + c.Servers }

// treeTicks is the CPU ticks of pid, and those of its descendants: the
// live ones and the ended ones it waited for.
func treeTicks(pid int) (own, kids int64, err error) {
	st, err := readStat(pid)
	if err != nil {
		return 0, 0, err
	}
	kids = st.ReapedTicks
	ds, err := descendants(pid)
	if err != nil {
		return 0, 0, err
	}
	for _, p := range ds {
		if k, err := readStat(p); err == nil {
			kids += k.CPUTicks
		}
	}
	return st.CPUTicks, kids, nil
}

// idleResult is a gateway's cost a while after the load.
type idleResult struct {
	CPUPercent float64 // of one core, over the idle interval
	RSSKB      int
}

// results is the whole run.
type results struct {
	Machine machine
	Targets []*target
	Rounds  map[string][]roundResult
	PeakKB  map[string]int // VmHWM of the gateway process at the end
	TreeKB  map[string]int // highest sampled RSS of the gateway and its children
	Idle    map[string]idleResult
	// AllocNote says why allocations per call are missing, if they are.
	AllocNote string
	// Profiles of Airlock under load (-profile).
	Profiles []profileRun
}

func orchestrate(ctx context.Context, c *config, stdout, stderr io.Writer) error {
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "bench: "+format+"\n", args...) }
	node, err := exec.LookPath(c.Node)
	if err != nil {
		return fmt.Errorf("node for server-everything and supergateway: %w", err)
	}
	c.Node = node
	work, err := os.MkdirTemp("", "airlock-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	res := &results{Rounds: map[string][]roundResult{},
		PeakKB: map[string]int{}, TreeKB: map[string]int{}, Idle: map[string]idleResult{}}
	everything := []string{c.Node, c.Everything, "stdio"}
	res.Targets = append(res.Targets, &target{Key: keyDirect, Name: "direct stdio", EP: endpoint{Command: everything}, Tool: "echo"})

	alone := ""
	if c.Alone {
		alone = c.Airlock
	}
	for _, a := range []struct {
		key, name, bin string
		env            []string
	}{
		{keyAirlock, "Airlock", c.Airlock, nil},
		// The desktop build hands `serve` to the headless build beside it
		// (handoff.go); this column is the desktop build without it.
		{keyAlone, "Airlock (desktop build serving itself)", alone, []string{"AIRLOCK_HANDOFF=0"}},
		{keyHeadless, "Airlock (headless build)", c.Headless, nil},
		{keyBaseline, "Airlock baseline", c.Baseline, nil}, {keyBase2, "Airlock baseline 2", c.Baseline2, nil},
	} {
		if a.bin == "" {
			continue
		}
		logf("starting %s: airlock serve (%s)", a.name, a.bin)
		g, err := startAirlock(ctx, c, a.bin, filepath.Join(work, a.key), a.env...)
		if err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
		defer g.close()
		res.Targets = append(res.Targets, &target{Key: a.key, Name: a.name, Bin: a.bin, EP: g.ep, Tool: c.Tool, GW: g, Load: true, Airlock: true, CPUSplit: true})
	}
	al := res.Targets[1].GW // the measured build (-airlock is required), after direct
	logf("starting supergateway")
	sg, err := startSupergateway(ctx, c, filepath.Join(work, "supergateway.log"))
	if err != nil {
		return err
	}
	defer sg.close()
	res.Targets = append(res.Targets, &target{Key: keySG, Name: "supergateway", EP: sg.ep, Tool: "echo", GW: sg, Load: c.LoadPeers})
	if c.Floor {
		logf("starting the transport floor (a minimal relay)")
		fl, err := startRelay(ctx, c, filepath.Join(work, "relay.log"))
		if err != nil {
			return err
		}
		defer fl.close()
		res.Targets = append(res.Targets, &target{Key: keyFloor, Name: "transport floor", EP: fl.ep, Tool: "echo", GW: fl, Load: c.LoadPeers, CPUSplit: true})
	}

	res.Machine = describeMachine(ctx, c, res.Targets)
	if _, err := readTotalAlloc(ctx, al, c.MemstatsPath); err != nil {
		res.AllocNote = fmt.Sprintf("Airlock does not expose its allocated bytes (GET %s: %v)", c.MemstatsPath, err)
	}

	smp := newSampler(res.Targets)
	go smp.run(ctx)

	nonce := randomHex()
	for r := range c.Rounds {
		// Rotate the order so no target always runs first (cold caches)
		// or last (a machine that got busier during the round).
		n := len(res.Targets)
		for i := range n {
			t := res.Targets[(i+r)%n]
			rr, err := measureTarget(ctx, c, t, fmt.Sprintf("%s-r%d-%s", nonce, r, t.Key), logf)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, t.Name, err)
			}
			res.Rounds[t.Key] = append(res.Rounds[t.Key], rr)
		}
	}
	if c.ProfileDir != "" {
		res.Profiles = profileAirlock(ctx, c, res.Targets[1], logf)
	}
	smp.stop()
	for _, t := range res.Targets {
		if t.GW == nil {
			continue
		}
		if m, err := readMem(t.GW.pid()); err == nil {
			res.PeakKB[t.Key] = m.Peak
		}
		res.TreeKB[t.Key] = smp.peak(t.Key)
	}

	logf("waiting %s after the load, then measuring idle CPU for %s", c.IdleAfter, c.IdleInterval)
	select {
	case <-time.After(c.IdleAfter):
	case <-ctx.Done():
		return ctx.Err()
	}
	idle, err := measureIdle(ctx, res.Targets, c.IdleInterval)
	if err != nil {
		return err
	}
	res.Idle = idle

	report := renderReport(c, res)
	if c.Append != "" {
		// The in-process report is written by an earlier step that may
		// have failed; say so rather than lose this run's figures.
		if extra, err := os.ReadFile(c.Append); err != nil {
			report += fmt.Sprintf("\n## In-process benchmarks\n\nNot available: %v\n", err)
		} else {
			report += "\n" + demoteHeadings(string(extra))
		}
	}
	if err := os.MkdirAll(filepath.Dir(c.Out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(c.Out, []byte(report), 0o644); err != nil {
		return err
	}
	logf("report written to %s", c.Out)
	// Wrong answers are a failure of the run, whatever the speed; missed
	// targets are the report's business.
	if bad := correctness(res); bad != "" {
		return errors.New(bad)
	}
	return nil
}

// measureTarget runs one round of every test on one target.
func measureTarget(ctx context.Context, c *config, t *target, nonce string, logf func(string, ...any)) (roundResult, error) {
	rr := roundResult{AllocPerCall: -1}
	spec := clientSpec{Target: t.EP, Tool: t.Tool, Protocol: c.Protocol, Warmup: c.Warmup}

	logf("%s: sequential, %d calls", t.Name, c.SeqCalls)
	var before uint64
	allocOK := false
	if t.Airlock {
		var err error
		before, err = readTotalAlloc(ctx, t.GW, c.MemstatsPath)
		allocOK = err == nil
	}
	s := spec
	s.Kind, s.Calls, s.Sessions, s.Nonce = kindSeq, c.SeqCalls, 1, nonce+"-seq"
	var err error
	if rr.Seq, err = runClientProcess(ctx, s); err != nil {
		return rr, err
	}
	if allocOK {
		if after, err := readTotalAlloc(ctx, t.GW, c.MemstatsPath); err == nil {
			rr.AllocPerCall = float64(after-before) / float64(c.SeqCalls+c.Warmup)
		}
	}

	logf("%s: %d sessions, %d calls", t.Name, c.ConcSessions, c.ConcCalls)
	s = spec
	s.Kind, s.Calls, s.Sessions, s.Nonce = kindConc, c.ConcCalls, c.ConcSessions, nonce+"-conc"
	var gw0, kids0 int64
	gwOK := t.CPUSplit && t.GW != nil
	if gwOK {
		gw0, kids0, err = treeTicks(t.GW.pid())
		gwOK = err == nil
	}
	if rr.Conc, err = runClientProcess(ctx, s); err != nil {
		return rr, err
	}
	if made := float64(rr.Conc.OK + rr.Conc.Errors + rr.Conc.Misrouted + c.Warmup*c.ConcSessions); made > 0 {
		perCall := func(ticks int64) float64 { return float64(ticks) / clockTicks * 1e6 / made }
		rr.ConcCPU = cpuSplit{Client: rr.Conc.CPUSeconds * 1e6 / made, OK: rr.Conc.CPUSeconds > 0}
		if gwOK {
			gw1, kids1, err := treeTicks(t.GW.pid())
			if err == nil {
				rr.ConcCPU.Gateway, rr.ConcCPU.Servers = perCall(gw1-gw0), perCall(max(kids1-kids0, 0))
			} else {
				rr.ConcCPU.OK = false
			}
		} else {
			rr.ConcCPU.OK = false
		}
	}

	if t.Load {
		logf("%s: %d sessions × %d calls", t.Name, c.LoadSessions, c.LoadCalls)
		s = spec
		s.Kind, s.Calls, s.Sessions, s.Nonce = kindLoad, c.LoadCalls, c.LoadSessions, nonce+"-load"
		s.Warmup = 1 // each session's first call opens its connections
		load, err := runClientProcess(ctx, s)
		if err != nil {
			return rr, err
		}
		rr.Load = &load
		if m, err := readMem(t.GW.pid()); err == nil {
			rr.AfterLoadKB = m.RSS
		}
	}

	if t.Airlock {
		logf("%s: airlock bridge, %d calls", t.Name, c.BridgeCalls)
		s = spec
		s.Kind, s.Calls, s.Sessions, s.Nonce = kindBridge, c.BridgeCalls, 1, nonce+"-bridge"
		s.Target = endpoint{Command: []string{t.Bin, "bridge", "--url", t.EP.URL, "--token", t.EP.Token}}
		if c.Bridge != "" {
			s.Target.Command = []string{c.Bridge, "--url", t.EP.URL, "--token", t.EP.Token}
		}
		b, err := runClientProcess(ctx, s)
		if err != nil {
			return rr, err
		}
		rr.Bridge = &b
	}
	return rr, nil
}

// runClientProcess runs spec in a new client process: this program again,
// in its client role.
func runClientProcess(ctx context.Context, spec clientSpec) (clientResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return clientResult{}, err
	}
	in, err := json.Marshal(spec)
	if err != nil {
		return clientResult{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, exe)
	cmd.Env = append(os.Environ(), roleEnv+"=client")
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return clientResult{}, fmt.Errorf("client (%s): %v: %s", spec.Kind, err, strings.TrimSpace(errb.String()))
	}
	var res clientResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return clientResult{}, fmt.Errorf("client (%s) printed no result: %v: %q", spec.Kind, err, out.String())
	}
	// The client's CPU, with that of the children it waited for.
	res.CPUSeconds = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	return res, nil
}

// gateway is a gateway process the bench started.
type gateway struct {
	name string
	cmd  *exec.Cmd
	ep   endpoint
	done chan struct{} // closed when the process has exited
	sig  os.Signal     // the graceful stop signal
}

func (g *gateway) pid() int { return g.cmd.Process.Pid }

func (g *gateway) start(logPath string) error {
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	g.cmd.Stdout, g.cmd.Stderr = f, f
	// Its own process group: a Ctrl-C meant for the bench does not reach it
	// before the bench has stopped it in order.
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := g.cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", g.name, err)
	}
	g.done = make(chan struct{})
	go func() { g.cmd.Wait(); f.Close(); close(g.done) }()
	return nil
}

// close stops the gateway gracefully, then kills whatever of it and of the
// processes it started is left (by their ids, collected before the stop).
func (g *gateway) close() {
	if g.cmd.Process == nil {
		return
	}
	kids, _ := descendants(g.pid())
	g.cmd.Process.Signal(g.sig)
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		g.cmd.Process.Kill()
		<-g.done
	}
	for _, p := range kids {
		syscall.Kill(p, syscall.SIGKILL) // ESRCH for those that exited: fine
	}
}

// startAirlock configures a fresh data directory with server-everything and
// an auto-approve rule through the CLI, as a user would, and starts
// `airlock serve` on a free loopback port.
func startAirlock(ctx context.Context, c *config, bin, dir string, env ...string) (*gateway, error) {
	cli := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("airlock %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return string(out), nil
	}
	add := []string{"servers", "add", "everything", "--data-dir", dir}
	if c.NoPrefix {
		add = append(add, "--no-prefix")
	}
	add = append(add, "--", c.Node, c.Everything, "stdio")
	if _, err := cli(add...); err != nil {
		return nil, err
	}
	// Without a rule every call waits for a person.
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
	g := &gateway{name: "airlock serve", sig: os.Interrupt,
		cmd: exec.Command(bin, "serve", "--data-dir", dir, "--addr", addr),
		ep:  endpoint{URL: "http://" + addr + "/mcp", Token: strings.TrimSpace(tok)}}
	if len(env) > 0 {
		g.cmd.Env = append(os.Environ(), env...)
	}
	if err := g.start(dir + ".log"); err != nil {
		return nil, err
	}
	if err := waitReady(ctx, g, c.Tool, c.Protocol); err != nil {
		g.close()
		return nil, fmt.Errorf("%w (log: %s)", err, dir+".log")
	}
	return g, nil
}

// startSupergateway runs supergateway in stateful Streamable HTTP mode in
// front of server-everything over stdio.
func startSupergateway(ctx context.Context, c *config, logPath string) (*gateway, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	stdio := shellQuote(c.Node) + " " + shellQuote(c.Everything) + " stdio"
	g := &gateway{name: "supergateway", sig: syscall.SIGTERM,
		cmd: exec.Command(c.Node, c.Supergateway, "--stdio", stdio, "--outputTransport", "streamableHttp",
			"--stateful", "--port", port, "--logLevel", "none"),
		ep: endpoint{URL: "http://127.0.0.1:" + port + "/mcp"}}
	if err := g.start(logPath); err != nil {
		return nil, err
	}
	if err := waitReady(ctx, g, "echo", c.Protocol); err != nil {
		g.close()
		return nil, fmt.Errorf("%w (log: %s)", err, logPath)
	}
	return g, nil
}

// startRelay runs this program in its relay role (see relay.go) in front
// of server-everything over stdio.
func startRelay(ctx context.Context, c *config, logPath string) (*gateway, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	g := &gateway{name: "relay", sig: os.Interrupt,
		cmd: exec.Command(exe, c.Node, c.Everything, "stdio"),
		ep:  endpoint{URL: "http://" + addr + "/mcp"}}
	g.cmd.Env = append(os.Environ(), roleEnv+"=relay", relayAddrEnv+"="+addr)
	if err := g.start(logPath); err != nil {
		return nil, err
	}
	if err := waitReady(ctx, g, "echo", c.Protocol); err != nil {
		g.close()
		return nil, fmt.Errorf("%w (log: %s)", err, logPath)
	}
	return g, nil
}

// waitReady waits until a session through g lists tool.
func waitReady(ctx context.Context, g *gateway, tool, protocol string) error {
	deadline := time.Now().Add(90 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-g.done:
			return fmt.Errorf("%s exited during start-up: %v", g.name, g.cmd.ProcessState)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		last = func() error {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			s, err := connect(cctx, g.ep, protocol)
			if err != nil {
				return err
			}
			defer s.close()
			res, err := s.ListTools(cctx, nil)
			if err != nil {
				return err
			}
			for _, t := range res.Tools {
				if t.Name == tool {
					return nil
				}
			}
			return fmt.Errorf("tool %q not listed (yet)", tool)
		}()
		if last == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready: %v", g.name, last)
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func randomHex() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// readTotalAlloc reads memstats.TotalAlloc (bytes allocated since start)
// from an expvar endpoint on the gateway's address, sent with the agent
// token. A page that is not expvar JSON (the UI's fallback page, a 404)
// means the gateway does not expose it.
func readTotalAlloc(ctx context.Context, g *gateway, path string) (uint64, error) {
	u := strings.TrimSuffix(g.ep.URL, "/mcp") + path
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+g.ep.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var v struct {
		Memstats *struct{ TotalAlloc *uint64 } `json:"memstats"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v); err != nil || v.Memstats == nil || v.Memstats.TotalAlloc == nil {
		return 0, errors.New("no expvar memstats.TotalAlloc in the answer")
	}
	return *v.Memstats.TotalAlloc, nil
}

// sampler records the highest RSS of each gateway together with its
// children, every 100 ms.
type sampler struct {
	targets []*target
	mu      sync.Mutex
	max     map[string]int
	quit    chan struct{}
	done    chan struct{}
}

func newSampler(ts []*target) *sampler {
	return &sampler{targets: ts, max: map[string]int{}, quit: make(chan struct{}), done: make(chan struct{})}
}

func (s *sampler) run(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, t := range s.targets {
			if t.GW == nil {
				continue
			}
			if kb, err := treeRSS(t.GW.pid()); err == nil {
				s.mu.Lock()
				s.max[t.Key] = max(s.max[t.Key], kb)
				s.mu.Unlock()
			}
		}
		select {
		case <-tick.C:
		case <-s.quit:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (s *sampler) stop() { close(s.quit); <-s.done }

func (s *sampler) peak(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max[key]
}

// measureIdle measures the CPU time each gateway process uses over interval
// while no client is connected, and its RSS.
func measureIdle(ctx context.Context, ts []*target, interval time.Duration) (map[string]idleResult, error) {
	before := map[string]int64{}
	for _, t := range ts {
		if t.GW == nil {
			continue
		}
		st, err := readStat(t.GW.pid())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		before[t.Key] = st.CPUTicks
	}
	t0 := time.Now()
	select {
	case <-time.After(interval):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	elapsed := time.Since(t0).Seconds()
	out := map[string]idleResult{}
	for _, t := range ts {
		if t.GW == nil {
			continue
		}
		st, err := readStat(t.GW.pid())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		m, err := readMem(t.GW.pid())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		cpu := float64(st.CPUTicks-before[t.Key]) / clockTicks
		out[t.Key] = idleResult{CPUPercent: 100 * cpu / elapsed, RSSKB: m.RSS}
	}
	return out, nil
}

// correctness lists every error and misrouted reply of the run.
func correctness(res *results) string {
	var bad []string
	for _, t := range res.Targets {
		for i, rr := range res.Rounds[t.Key] {
			for _, x := range []struct {
				name string
				r    *clientResult
			}{{"sequential", &rr.Seq}, {"concurrent", &rr.Conc}, {"load", rr.Load}, {"bridge", rr.Bridge}} {
				if x.r == nil {
					continue
				}
				if x.r.Errors > 0 {
					bad = append(bad, fmt.Sprintf("%s round %d %s: %d errors (first: %s)", t.Name, i+1, x.name, x.r.Errors, x.r.FirstError))
				}
				if x.r.Misrouted > 0 {
					bad = append(bad, fmt.Sprintf("%s round %d %s: %d misrouted replies (first: %s)", t.Name, i+1, x.name, x.r.Misrouted, x.r.FirstMisroute))
				}
			}
		}
	}
	return strings.Join(bad, "; ")
}

// machine describes where the numbers came from.
type machine struct {
	CPUModel, Kernel, Go, Node         string
	CPUs                               int
	Date                               time.Time
	Binaries                           [][2]string // target name, "version (path)"
	EverythingVersion, SupergatewayVer string
}

func describeMachine(ctx context.Context, c *config, ts []*target) machine {
	m := machine{CPUs: runtimeCPUs(), Go: goVersion(), Date: time.Now().UTC(), CPUModel: "unknown", Kernel: "unknown"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	out := func(name string, args ...string) string {
		b, err := exec.CommandContext(ctx, name, args...).Output()
		if err != nil {
			return "unknown"
		}
		return strings.TrimSpace(string(b))
	}
	m.Node = out(c.Node, "--version")
	for _, t := range ts {
		if t.Bin != "" {
			where := t.Bin
			// The program the process runs: another one when it handed off.
			if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", t.GW.pid())); err == nil && exe != t.Bin {
				where += ", running " + exe
			}
			m.Binaries = append(m.Binaries, [2]string{t.Name, out(t.Bin, "version") + " (" + where + ")"})
		}
	}
	if c.Bridge != "" {
		m.Binaries = append(m.Binaries, [2]string{"airlock-bridge", c.Bridge})
	}
	m.EverythingVersion = packageVersion(filepath.Join(filepath.Dir(c.Everything), "..", "package.json"))
	m.SupergatewayVer = packageVersion(filepath.Join(filepath.Dir(c.Supergateway), "..", "package.json"))
	return m
}

func packageVersion(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	var p struct{ Version string }
	if json.Unmarshal(b, &p) != nil || p.Version == "" {
		return "unknown"
	}
	return p.Version
}

// demoteHeadings nests an appended Markdown document (the go test -bench
// report) one level deeper, under a title that says what it measures.
func demoteHeadings(md string) string {
	lines := strings.Split(md, "\n")
	for i, l := range lines {
		switch {
		case i == 0 && strings.HasPrefix(l, "# "):
			lines[i] = "## In-process benchmarks (`go test -bench`: gateway and clients share one process)"
		case strings.HasPrefix(l, "#"):
			lines[i] = "#" + l
		}
	}
	return strings.Join(lines, "\n")
}
