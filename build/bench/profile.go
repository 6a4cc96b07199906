package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// profileRun is one profile of Airlock taken while a client drove it.
type profileRun struct {
	Name     string       // the scenario
	CPUFile  string       // the CPU profile's path
	Allocs   string       // the allocation profile's path (allocations during the profile only)
	Client   clientResult // what the client measured meanwhile
	Top      string       // `go tool pprof -top` of the CPU profile
	Parts    []part       // the CPU profile by part of the path
	CPU      time.Duration
	TopAlloc string // the same for allocated bytes
	Err      string // why the profile is missing, if it is
}

// profileAirlock runs a client against Airlock for each scenario and takes
// a CPU profile and an allocation profile of the Airlock process while it
// runs (GET /debug/pprof/profile and /debug/pprof/allocs?seconds=N, with
// the agent token), so that the report can say where the time goes in the
// real binary under a real client's load.
func profileAirlock(ctx context.Context, c *config, t *target, logf func(string, ...any)) []profileRun {
	if err := os.MkdirAll(c.ProfileDir, 0o755); err != nil {
		return []profileRun{{Name: "all", Err: err.Error()}}
	}
	var out []profileRun
	for _, sc := range []struct {
		name, file, kind string
		sessions         int
	}{
		{"sequential (1 session)", "seq", kindSeq, 1},
		{fmt.Sprintf("%d sessions", c.ConcSessions), "conc", kindConc, c.ConcSessions},
	} {
		logf("profiling %s: %s for %s", t.Name, sc.name, c.ProfileFor)
		pr := profileRun{Name: sc.name,
			CPUFile: filepath.Join(c.ProfileDir, "airlock-cpu-"+sc.file+".pprof"),
			Allocs:  filepath.Join(c.ProfileDir, "airlock-allocs-"+sc.file+".pprof")}
		spec := clientSpec{Kind: sc.kind, Target: t.EP, Tool: t.Tool, Protocol: c.Protocol, Warmup: c.Warmup,
			Sessions: sc.sessions, Calls: 1, Duration: c.ProfileFor + 2*time.Second, Nonce: randomHex() + "-profile-" + sc.file}
		type done struct {
			r   clientResult
			err error
		}
		client := make(chan done, 1)
		go func() {
			r, err := runClientProcess(ctx, spec)
			client <- done{r, err}
		}()
		// The client connects and warms up first; the profiles cover its
		// steady state only.
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return out
		}
		secs := max(1, int(c.ProfileFor.Round(time.Second)/time.Second))
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, p := range []struct{ path, file string }{
			{fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs), pr.CPUFile},
			{fmt.Sprintf("/debug/pprof/allocs?seconds=%d", secs), pr.Allocs},
		} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = fetchDebug(ctx, t.GW, p.path, time.Duration(secs+30)*time.Second, p.file)
			}()
		}
		wg.Wait()
		d := <-client
		pr.Client = d.r
		var msgs []string
		for _, err := range append(errs, d.err) {
			if err != nil {
				msgs = append(msgs, err.Error())
			}
		}
		pr.Err = strings.Join(msgs, "; ")
		if errs[0] == nil {
			pr.Top = pprofTop(ctx, pr.CPUFile)
			pr.Parts, pr.CPU = breakdown(ctx, pr.CPUFile)
		}
		if errs[1] == nil {
			pr.TopAlloc = pprofTop(ctx, pr.Allocs, "-sample_index=alloc_space")
		}
		out = append(out, pr)
	}
	return out
}

// fetchDebug saves GET path on the gateway's address (with the agent token)
// to file.
func fetchDebug(ctx context.Context, g *gateway, path string, timeout time.Duration, file string) error {
	u := strings.TrimSuffix(g.ep.URL, "/mcp") + path
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+g.ep.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: HTTP %d: %s", path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return f.Close()
}

// pprofTop is `go tool pprof -top` of a profile, cut to its first lines
// ("" when go is not at hand).
func pprofTop(ctx context.Context, file string, extra ...string) string {
	args := append([]string{"tool", "pprof", "-top", "-nodecount=25"}, extra...)
	out, err := exec.CommandContext(ctx, "go", append(args, file)...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// part is the CPU that one part of a proxied call's path took in a
// profile.
type part struct {
	Name string
	CPU  time.Duration
	// Syscall is how much of it was in system calls, futex and epoll waits
	// included (the kernel's side of handing data and control between
	// threads and processes).
	Syscall time.Duration
}

// pathParts assign each sampled stack to the first part whose pattern
// occurs in it (so their order matters: the audit before the pipeline
// that calls it, the pipeline before the SDK handler that calls it).
var pathParts = []struct{ name, pattern string }{
	{"audit journal append (Begin, Finish)", `store.(*AuditLog).Begin|store.(*AuditLog).Finish|store.(*AuditLog).writeLocked`},
	{"audit moved into SQLite (background, batched)", `store.(*AuditLog).Flush|store.(*AuditLog).run|store.(*Audit)`},
	{"Activity events to the UI (background)", `activity.(*Recorder).emit|events.(*Hub)`},
	{"pipeline: the record (redaction, digest)", `pipeline.newRecord`},
	{"downstream call (SDK client, write to the server's stdin)", `catalog.(*Catalog).Dispatch`},
	{"pipeline: route, gate, policy, decide", `pipeline.(*Pipeline)`},
	{"gateway: caller, middleware, listings", `gateway.(*Gateway)`},
	{"answer to the agent (JSON-RPC response, SSE event, write)", `jsonrpc2.(*Connection).processResult|streamableServerConn).Write|writeEvent|writeSingleEvent`},
	{"downstream answer read (stdio reader, SDK client)", `ioConn|newIOConnLimited|jsonrpc2.(*Connection).readIncoming|ClientSession`},
	{"request read and decoded (net/http, SDK streamable server)", `net/http|go-sdk`},
	{"garbage collection", `runtime.gcBgMarkWorker|runtime.gcAssist|runtime.bgsweep|runtime.bgscavenge|runtime.gcDrain|runtime.markroot`},
	{"Go scheduler: idle, netpoll, sysmon, thread wake-ups", `runtime.mcall|runtime.schedule|runtime.findRunnable|runtime.park_m|runtime.goexit0|runtime.mstart|runtime.sysmon`},
}

// breakdown reads `go tool pprof -traces` of a CPU profile and adds its
// samples up by pathParts; stacks no part claims are "other".
func breakdown(ctx context.Context, file string) ([]part, time.Duration) {
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-traces", file).Output()
	if err != nil {
		return nil, 0
	}
	return parseTraces(string(out))
}

// parseTraces is breakdown's parser: the -traces format is a header, then
// blocks separated by lines of dashes, each a duration before the leaf
// frame and one caller per line after it.
func parseTraces(text string) ([]part, time.Duration) {
	parts := make([]part, len(pathParts)+1)
	for i, p := range pathParts {
		parts[i].Name = p.name
	}
	parts[len(pathParts)].Name = "other"
	var total time.Duration
	for _, block := range strings.Split(text, "-----------+-------------------------------------------------------")[1:] {
		lines := strings.Split(strings.Trim(block, "\n"), "\n")
		if len(lines) == 0 {
			continue
		}
		f := strings.Fields(lines[0])
		if len(f) < 2 {
			continue
		}
		d, err := time.ParseDuration(f[0])
		if err != nil {
			continue
		}
		frames := []string{strings.Join(f[1:], " ")}
		for _, l := range lines[1:] {
			frames = append(frames, strings.TrimSpace(l))
		}
		stack := strings.Join(frames, "\n")
		total += d
		i := len(pathParts)
		for j, p := range pathParts {
			if matchesAny(stack, p.pattern) {
				i = j
				break
			}
		}
		parts[i].CPU += d
		if leaf := frames[0]; strings.Contains(leaf, "Syscall") || strings.Contains(leaf, "futex") || strings.Contains(leaf, "usleep") || strings.Contains(stack, "EpollWait") {
			parts[i].Syscall += d
		}
	}
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].CPU > parts[j].CPU })
	return parts, total
}

func matchesAny(stack, patterns string) bool {
	for _, p := range strings.Split(patterns, "|") {
		if strings.Contains(stack, p) {
			return true
		}
	}
	return false
}
