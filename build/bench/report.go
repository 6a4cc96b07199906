package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The targets (issue 11), as ratios measured in one run where they
// can be.
const (
	targetP50Ratio      = 2.0    // Airlock p50 ≤ 2× direct stdio p50
	todayConcCPS        = 1863.0 // Airlock's 8-session calls/s when the issue was filed
	targetConcVsToday   = 2.0    // ≥ 2× today's calls/s
	targetConcVsSG      = 4.0    // ≥ 4× supergateway's calls/s
	targetLoadCPS       = 2500.0 // 200 sessions × 100 calls
	targetRSSMB         = 120.0
	targetIdleCPU       = 1.0 // percent of one core: "≈ 0"
	targetAllocKB       = 40.0
	targetBridgeRSSMB   = 15.0
	targetBridgeReadyMs = 100.0
)

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// over collects f of every round of key that has it (ok false: skipped).
func over(res *results, key string, f func(roundResult) (float64, bool)) []float64 {
	var out []float64
	for _, rr := range res.Rounds[key] {
		if v, ok := f(rr); ok {
			out = append(out, v)
		}
	}
	return out
}

// ratio collects, round by round, f(a)/f(b): each ratio compares figures
// taken minutes apart at most, which is what makes them comparable on a
// machine whose speed drifts.
func ratio(res *results, a, b string, f func(roundResult) (float64, bool)) []float64 {
	ra, rb := res.Rounds[a], res.Rounds[b]
	var out []float64
	for i := range min(len(ra), len(rb)) {
		x, ok1 := f(ra[i])
		y, ok2 := f(rb[i])
		if ok1 && ok2 && y != 0 {
			out = append(out, x/y)
		}
	}
	return out
}

var (
	seqP50  = func(r roundResult) (float64, bool) { return r.Seq.P50, r.Seq.OK > 0 }
	seqP99  = func(r roundResult) (float64, bool) { return r.Seq.P99, r.Seq.OK > 0 }
	concCPS = func(r roundResult) (float64, bool) { return r.Conc.CallsPerSec(), r.Conc.OK > 0 }
	concP50 = func(r roundResult) (float64, bool) { return r.Conc.P50, r.Conc.OK > 0 }
	loadCPS = func(r roundResult) (float64, bool) { return calls(r.Load) }
	loadP50 = func(r roundResult) (float64, bool) {
		return field(r.Load, func(c *clientResult) float64 { return c.P50 })
	}
	loadP99 = func(r roundResult) (float64, bool) {
		return field(r.Load, func(c *clientResult) float64 { return c.P99 })
	}
	loadErrs = func(r roundResult) (float64, bool) {
		return field(r.Load, func(c *clientResult) float64 { return float64(c.Errors) })
	}
	loadMis = func(r roundResult) (float64, bool) {
		return field(r.Load, func(c *clientResult) float64 { return float64(c.Misrouted) })
	}
	afterLoad = func(r roundResult) (float64, bool) {
		return float64(r.AfterLoadKB) / 1024, r.Load != nil && r.AfterLoadKB > 0
	}
	allocKB = func(r roundResult) (float64, bool) { return r.AllocPerCall / 1024, r.AllocPerCall >= 0 }
	brReady = func(r roundResult) (float64, bool) {
		return field(r.Bridge, func(c *clientResult) float64 { return c.ReadyMs })
	}
	brRSS = func(r roundResult) (float64, bool) {
		return field(r.Bridge, func(c *clientResult) float64 { return float64(c.BridgeRSSKB) / 1024 })
	}
	brP50 = func(r roundResult) (float64, bool) {
		return field(r.Bridge, func(c *clientResult) float64 { return c.P50 })
	}
)

func calls(c *clientResult) (float64, bool) {
	if c == nil {
		return 0, false
	}
	return c.CallsPerSec(), true
}

func field(c *clientResult, f func(*clientResult) float64) (float64, bool) {
	if c == nil {
		return 0, false
	}
	return f(c), true
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// num formats with thousands separators and the given decimals.
func num(v float64, decimals int) string {
	if math.IsNaN(v) {
		return "–"
	}
	s := fmt.Sprintf("%.*f", decimals, v)
	intPart, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	var b strings.Builder
	for i, ch := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	out := b.String()
	if neg {
		out = "-" + out
	}
	if frac != "" {
		out += "." + frac
	}
	return out
}

func times(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.2f×", v)
}

func metOrNot(ok bool) string {
	if ok {
		return "**met**"
	}
	return "not met"
}

// renderReport writes the Markdown report.
func renderReport(c *config, res *results) string {
	b := &strings.Builder{}
	m := res.Machine
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }

	p("# Airlock gateway benchmark (as agents see it)\n\n")
	if c.Quick {
		p("> **Quick mode** (`-quick`): a smoke run with small counts and a %s idle wait. Its figures are not for comparison.\n\n", c.IdleAfter)
	}
	p("| machine | |\n|---|---|\n")
	p("| date (UTC) | %s |\n", m.Date.Format("2006-01-02 15:04"))
	p("| CPU | %s |\n| cores (as Go sees them) | %d |\n| OS | %s |\n", m.CPUModel, m.CPUs, m.Kernel)
	p("| Go (bench) | %s |\n| node | %s |\n", m.Go, m.Node)
	for _, b := range m.Binaries {
		p("| %s | %s |\n", b[0], b[1])
	}
	p("| server-everything | %s |\n| supergateway | %s (stateful Streamable HTTP) |\n\n", m.EverythingVersion, m.SupergatewayVer)
	p("Reproduce with `%s` (`go tool task bench` runs it after building and installing everything).\n\n", strings.Join(c.Command, " "))

	// The main table: medians over rounds, ratios as medians of per-round ratios.
	cols := res.Targets
	p("## Results (median of %d interleaved round(s))\n\n", c.Rounds)
	p("| metric |")
	for _, t := range cols {
		p(" %s |", t.Name)
	}
	_, floor := res.Rounds[keyFloor]
	if floor {
		p(" Airlock ÷ direct | Airlock ÷ floor | Airlock ÷ supergateway |\n|---|")
	} else {
		p(" Airlock ÷ direct | Airlock ÷ supergateway |\n|---|")
	}
	for range cols {
		p("---:|")
	}
	if floor {
		p("---:|")
	}
	p("---:|---:|\n")
	row := func(name string, f func(roundResult) (float64, bool), decimals int, withRatios bool) {
		p("| %s |", name)
		for _, t := range cols {
			p(" %s |", num(median(over(res, t.Key, f)), decimals))
		}
		switch {
		case withRatios && floor:
			p(" %s | %s | %s |\n", times(median(ratio(res, keyAirlock, keyDirect, f))), times(median(ratio(res, keyAirlock, keyFloor, f))), times(median(ratio(res, keyAirlock, keySG, f))))
		case withRatios:
			p(" %s | %s |\n", times(median(ratio(res, keyAirlock, keyDirect, f))), times(median(ratio(res, keyAirlock, keySG, f))))
		case floor:
			p(" | | |\n")
		default:
			p(" | |\n")
		}
	}
	row("sequential p50 (µs)", seqP50, 0, true)
	row("sequential p99 (µs)", seqP99, 0, true)
	row(fmt.Sprintf("%d sessions: calls/s", c.ConcSessions), concCPS, 0, true)
	row(fmt.Sprintf("%d sessions: p50 (µs)", c.ConcSessions), concP50, 0, true)
	cpuRow := func(what string, f func(cpuSplit) float64, withRatios bool) {
		row(fmt.Sprintf("%d sessions: CPU per call, %s (µs)", c.ConcSessions, what),
			func(r roundResult) (float64, bool) { return f(r.ConcCPU), r.ConcCPU.OK }, 0, withRatios)
	}
	cpuRow("client process", func(x cpuSplit) float64 { return x.Client }, false)
	cpuRow("gateway process", func(x cpuSplit) float64 { return x.Gateway }, false)
	cpuRow("gateway's servers", func(x cpuSplit) float64 { return x.Servers }, false)
	cpuRow("all of them", cpuSplit.Total, true)
	load := fmt.Sprintf("%d sessions × %d calls", c.LoadSessions, c.LoadCalls)
	row(load+": calls/s", loadCPS, 0, true)
	row(load+": p50 (µs)", loadP50, 0, true)
	row(load+": p99 (µs)", loadP99, 0, true)
	p("| %s: errors / misrouted (all rounds) |", load)
	for _, t := range cols {
		if !t.Load {
			p(" – |")
			continue
		}
		p(" %s / %s |", num(sum(over(res, t.Key, loadErrs)), 0), num(sum(over(res, t.Key, loadMis)), 0))
	}
	p("%s", emptyRatios(floor))
	gwRow := func(name string, v func(t *target) (float64, bool), decimals int) {
		p("| %s |", name)
		for _, t := range cols {
			x, ok := v(t)
			if t.GW == nil || !ok {
				p(" – |")
				continue
			}
			p(" %s |", num(x, decimals))
		}
		p("%s", emptyRatios(floor))
	}
	gwRow("gateway process RSS, peak (MB, VmHWM)", func(t *target) (float64, bool) { kb, ok := res.PeakKB[t.Key]; return float64(kb) / 1024, ok }, 1)
	gwRow("gateway + its children RSS, peak (MB, sampled)", func(t *target) (float64, bool) { kb, ok := res.TreeKB[t.Key]; return float64(kb) / 1024, ok && kb > 0 }, 1)
	row("gateway process RSS right after the load (MB)", afterLoad, 1, false)
	gwRow(fmt.Sprintf("gateway process RSS %s after the load (MB)", c.IdleAfter), func(t *target) (float64, bool) { i, ok := res.Idle[t.Key]; return float64(i.RSSKB) / 1024, ok }, 1)
	gwRow(fmt.Sprintf("idle CPU %s after the load (%% of a core, over %s)", c.IdleAfter, c.IdleInterval), func(t *target) (float64, bool) { i, ok := res.Idle[t.Key]; return i.CPUPercent, ok }, 2)
	row("allocated per proxied echo (KB)", allocKB, 1, false)
	row("`airlock bridge`: start to ready (ms)", brReady, 1, false)
	row("`airlock bridge`: RSS after its calls (MB)", brRSS, 1, false)
	row("`airlock bridge`: sequential p50 (µs)", brP50, 0, false)
	p("\n")
	if res.AllocNote != "" {
		p("Allocations per proxied echo: **not measured** — %s. It needs a loopback-only endpoint on Airlock's address "+
			"that answers `GET %s` (with the agent token) with Go's expvar JSON, i.e. `expvar.Handler()`, whose "+
			"`memstats.TotalAlloc` the bench reads before and after the sequential test.\n\n", res.AllocNote, c.MemstatsPath)
	}
	if !c.LoadPeers {
		p("supergateway is not run in the %d-session test by default: in stateful mode it starts one server-everything "+
			"process per session (pass `-load-peers` to include it). Direct stdio is never run there: %d node processes.\n\n", c.LoadSessions, c.LoadSessions)
	}

	writeTargets(b, c, res)
	writeRounds(b, c, res)
	writeProfiles(b, c, res)

	p("## How it was measured\n\n")
	p("- `airlock serve` runs as its own process with a fresh data directory, set up through its CLI: `servers add everything -- node …/server-everything/dist/index.js stdio`, `rules add --auto-approve`, `token`.\n")
	p("- supergateway runs as `supergateway --stdio \"node …/index.js stdio\" --outputTransport streamableHttp --stateful`.\n")
	if _, ok := res.Rounds[keyFloor]; ok {
		p("- The transport floor is the least a gateway of this shape can do: this program in its relay role (build/bench/relay.go), a plain `net/http` server that writes each JSON-RPC message to one server-everything's stdin and sends the answer back as one SSE event with a Content-Length, as Airlock does — no MCP SDK, no sessions, no checks, no audit. The client and the server are the same as for Airlock, so the floor ÷ direct ratio is what the extra process and the HTTP hop cost on this machine before a gateway does any work.\n")
	}
	p("- Every test runs in a new client process (this program in its client role) using the Go SDK client; every HTTP session has its own `http.Transport` (its own connection pool), every direct session spawns its own server-everything. Clients ask for protocol %q and advertise no capabilities.\n", c.Protocol)
	p("- Each call is `%s` (`echo` for direct and supergateway) with a message unique to the run, session and call; a reply that does not echo its own message counts as misrouted.\n", c.Tool)
	p("- Sequential: one session, %d warm-up calls, then %d calls. Concurrent: %d sessions share %d calls. Load: %d sessions open first, then all start together, %d calls each. Latencies are per call as the client sees them; calls/s counts answered calls over the wall time of the timed part.\n",
		c.Warmup, c.SeqCalls, c.ConcSessions, c.ConcCalls, c.LoadSessions, c.LoadCalls)
	p("- Rounds are interleaved and their order rotates; the table shows medians over rounds, and each ratio is the median of the per-round ratios.\n")
	p("- CPU per call in the %d-session test: the client process's user and system time (from wait4), and the utime+stime deltas of the gateway process and of its descendants (its server) from /proc/PID/stat, each divided by the calls made, warm-up included. On %d cores the calls/s of that test follow the sum. Not shown for direct stdio, whose servers start inside the test, nor for supergateway, which starts a server per session and ends it with the session (an ended server's time cannot be counted).\n", c.ConcSessions, m.CPUs)
	p("- RSS is VmRSS / VmHWM from /proc/PID/status (the gateway process; \"+ children\" adds its descendants, sampled every 100 ms). Idle CPU is the utime+stime delta from /proc/PID/stat over the interval.\n")
	bridge := "`airlock bridge`"
	if c.Bridge != "" {
		bridge = "`airlock-bridge` (" + c.Bridge + ", the small binary that client configs start)"
	}
	p("- The bridge is %s, started by the client as a stdio MCP server would be; start to ready is from spawning it to the answered `initialize`.\n", bridge)
	return b.String()
}

func writeTargets(b *strings.Builder, c *config, res *results) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Targets (issue 11)\n\n| target | measured | |\n|---|---|---|\n")

	r := median(ratio(res, keyAirlock, keyDirect, seqP50))
	measured := times(r)
	if _, ok := res.Rounds[keyFloor]; ok {
		// The floor says how much of the ratio is the transport's.
		measured += fmt.Sprintf(" (the transport floor alone: %s direct; Airlock is %s the floor)",
			times(median(ratio(res, keyFloor, keyDirect, seqP50))), times(median(ratio(res, keyAirlock, keyFloor, seqP50))))
	}
	p("| Airlock p50 ≤ %.0f× direct stdio p50 | %s | %s |\n", targetP50Ratio, measured, metOrNot(r <= targetP50Ratio))

	cps := median(over(res, keyAirlock, concCPS))
	if _, ok := res.Rounds[keyBaseline]; ok {
		r := median(ratio(res, keyAirlock, keyBaseline, concCPS))
		p("| %d sessions: ≥ %.0f× today's calls/s | %s the baseline build, same run | %s |\n", c.ConcSessions, targetConcVsToday, times(r), metOrNot(r >= targetConcVsToday))
	} else {
		p("| %d sessions: ≥ %.0f× today's calls/s | %s calls/s vs %s when the issue was filed (another moment of the machine: indicative only; pass `-baseline` for a same-run ratio) | %s |\n",
			c.ConcSessions, targetConcVsToday, num(cps, 0), num(todayConcCPS, 0), metOrNot(cps >= targetConcVsToday*todayConcCPS))
	}
	r = median(ratio(res, keyAirlock, keySG, concCPS))
	p("| %d sessions: ≥ %.0f× supergateway calls/s | %s | %s |\n", c.ConcSessions, targetConcVsSG, times(r), metOrNot(r >= targetConcVsSG))

	load := fmt.Sprintf("%d × %d", c.LoadSessions, c.LoadCalls)
	lc := median(over(res, keyAirlock, loadCPS))
	p("| %s: ≥ %s calls/s | %s | %s |\n", load, num(targetLoadCPS, 0), num(lc, 0), metOrNot(lc >= targetLoadCPS))
	errs, mis := sum(over(res, keyAirlock, loadErrs)), sum(over(res, keyAirlock, loadMis))
	p("| %s: 0 errors, 0 misrouted replies | %s errors, %s misrouted | %s |\n", load, num(errs, 0), num(mis, 0), metOrNot(errs == 0 && mis == 0))
	rss := float64(res.PeakKB[keyAirlock]) / 1024
	p("| RSS ≤ %.0f MB | %s MB peak (Airlock process) | %s |\n", targetRSSMB, num(rss, 1), metOrNot(rss > 0 && rss <= targetRSSMB))
	if kb, ok := res.PeakKB[keyAlone]; ok {
		// Without the headless build beside it, the desktop build serves
		// itself with GTK and WebKitGTK mapped.
		h := float64(kb) / 1024
		p("| RSS ≤ %.0f MB, desktop build serving itself | %s MB peak | %s |\n", targetRSSMB, num(h, 1), metOrNot(h > 0 && h <= targetRSSMB))
	}
	if kb, ok := res.PeakKB[keyHeadless]; ok {
		// The desktop build maps GTK and WebKitGTK even when it serves
		// without a window; on a server the headless build is the one to run.
		h := float64(kb) / 1024
		p("| RSS ≤ %.0f MB, headless build | %s MB peak | %s |\n", targetRSSMB, num(h, 1), metOrNot(h > 0 && h <= targetRSSMB))
	}
	idle, ok := res.Idle[keyAirlock]
	note := ""
	if c.IdleAfter < time.Minute {
		note = fmt.Sprintf(" (measured %s after, not a minute)", c.IdleAfter)
	}
	p("| idle CPU ≈ 0 a minute after the load (≤ %.0f %% of a core) | %s %%%s | %s |\n", targetIdleCPU, num(idle.CPUPercent, 2), note, metOrNot(ok && idle.CPUPercent <= targetIdleCPU))
	if a := median(over(res, keyAirlock, allocKB)); math.IsNaN(a) {
		p("| allocations per proxied echo ≤ %.0f KB | not measured: Airlock exposes no allocation counter (see above) | – |\n", targetAllocKB)
	} else {
		p("| allocations per proxied echo ≤ %.0f KB | %s KB | %s |\n", targetAllocKB, num(a, 1), metOrNot(a <= targetAllocKB))
	}
	br := median(over(res, keyAirlock, brRSS))
	p("| `airlock bridge` RSS ≤ %.0f MB | %s MB | %s |\n", targetBridgeRSSMB, num(br, 1), metOrNot(br <= targetBridgeRSSMB))
	rd := median(over(res, keyAirlock, brReady))
	p("| `airlock bridge` start to ready ≤ %.0f ms | %s ms | %s |\n\n", targetBridgeReadyMs, num(rd, 1), metOrNot(rd <= targetBridgeReadyMs))
}

func writeRounds(b *strings.Builder, c *config, res *results) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Every round\n\n| round | path | seq p50 µs | seq p99 µs | %d-session calls/s | %d-session p50 µs | load calls/s | load p50 µs | errors | misrouted |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
		c.ConcSessions, c.ConcSessions)
	for i := range c.Rounds {
		for _, t := range res.Targets {
			rs := res.Rounds[t.Key]
			if i >= len(rs) {
				continue
			}
			rr := rs[i]
			lc, lp := "–", "–"
			errs, mis := rr.Seq.Errors+rr.Conc.Errors, rr.Seq.Misrouted+rr.Conc.Misrouted
			for _, x := range []*clientResult{rr.Load, rr.Bridge} {
				if x != nil {
					errs += x.Errors
					mis += x.Misrouted
				}
			}
			if rr.Load != nil {
				lc, lp = num(rr.Load.CallsPerSec(), 0), num(rr.Load.P50, 0)
			}
			p("| %d | %s | %s | %s | %s | %s | %s | %s | %d | %d |\n", i+1, t.Name, num(rr.Seq.P50, 0), num(rr.Seq.P99, 0),
				num(rr.Conc.CallsPerSec(), 0), num(rr.Conc.P50, 0), lc, lp, errs, mis)
		}
	}
	p("\n")
}

func writeProfiles(b *strings.Builder, c *config, res *results) {
	if len(res.Profiles) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Where Airlock's time goes (pprof of the running binary)\n\n")
	p("After the rounds, a client drove Airlock for %s per scenario while the bench took a CPU and an allocation profile "+
		"of the Airlock process (`GET /debug/pprof/profile` and `/debug/pprof/allocs?seconds=N`, loopback and agent token). "+
		"Open them with `go tool pprof -http=: FILE`.\n\n", c.ProfileFor)
	for _, pr := range res.Profiles {
		p("### %s\n\n", pr.Name)
		if pr.Err != "" {
			p("Incomplete: %s\n\n", pr.Err)
		}
		if pr.Client.OK > 0 {
			p("%s calls in %.1f s (%s calls/s, p50 %s µs) while profiling. Files: `%s`, `%s`.\n\n",
				num(float64(pr.Client.OK), 0), pr.Client.Seconds, num(pr.Client.CallsPerSec(), 0), num(pr.Client.P50, 0), pr.CPUFile, pr.Allocs)
		}
		if len(pr.Parts) > 0 && pr.CPU > 0 {
			// Calls during the profile, from the client's rate over its run.
			calls := pr.Client.CallsPerSec() * c.ProfileFor.Seconds()
			p("Airlock's CPU: %s ms in %s", num(float64(pr.CPU.Milliseconds()), 0), c.ProfileFor)
			if calls > 0 {
				p(", about **%s µs per call**", num(float64(pr.CPU.Microseconds())/calls, 0))
			}
			p(". By part of the path (each sampled stack counted once, in the first part it passes through; \"in the kernel\" is the share spent in system calls and in futex, epoll and sleep waits):\n\n")
			p("| part | share of CPU | µs per call | of which in the kernel |\n|---|---:|---:|---:|\n")
			for _, pt := range pr.Parts {
				if pt.CPU == 0 {
					continue
				}
				per := "–"
				if calls > 0 {
					per = num(float64(pt.CPU.Microseconds())/calls, 1)
				}
				p("| %s | %s %% | %s | %s %% |\n", pt.Name, num(100*float64(pt.CPU)/float64(pr.CPU), 1), per, num(100*float64(pt.Syscall)/float64(pt.CPU), 0))
			}
			p("\n")
		}
		if pr.Top != "" {
			p("CPU, top functions:\n\n```\n%s\n```\n\n", pr.Top)
		}
		if pr.TopAlloc != "" {
			p("Allocated bytes, top functions:\n\n```\n%s\n```\n\n", pr.TopAlloc)
		}
	}
}

// emptyRatios ends a table row that has no ratios.
func emptyRatios(floor bool) string {
	if floor {
		return " | | |\n"
	}
	return " | |\n"
}
