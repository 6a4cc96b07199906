package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// profileRun is one profile of Airlock taken while a client drove it.
type profileRun struct {
	Name     string       // the scenario
	CPU      string       // the CPU profile's path
	Allocs   string       // the allocation profile's path (allocations during the profile only)
	Client   clientResult // what the client measured meanwhile
	Top      string       // `go tool pprof -top` of the CPU profile
	TopAlloc string       // the same for allocated bytes
	Err      string       // why the profile is missing, if it is
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
			CPU:    filepath.Join(c.ProfileDir, "airlock-cpu-"+sc.file+".pprof"),
			Allocs: filepath.Join(c.ProfileDir, "airlock-allocs-"+sc.file+".pprof")}
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
			{fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs), pr.CPU},
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
			pr.Top = pprofTop(ctx, pr.CPU)
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
