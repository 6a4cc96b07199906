package hitl_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/store"
)

// benchRules returns 10,000 rules shaped like a large real setup: 200
// servers, each with 40 exact-name rules, 9 pattern rules and one
// server-wide rule, plus nothing global (so unmatched calls scan to the end).
func benchRules() []hitl.RuleInput {
	var out []hitl.RuleInput
	for s := 0; s < 200; s++ {
		server := fmt.Sprintf("server-%03d", s)
		for t := 0; t < 40; t++ {
			out = append(out, hitl.RuleInput{ServerID: sp(server), ToolName: sp(fmt.Sprintf("tool_%02d", t)), AutoApprove: t%2 == 0, Priority: t % 7})
		}
		for p := 0; p < 9; p++ {
			out = append(out, hitl.RuleInput{ServerID: sp(server), ToolPattern: sp(fmt.Sprintf("verb%d_*", p)), AutoApprove: p%2 == 1, Priority: 50 + p})
		}
		out = append(out, hitl.RuleInput{ServerID: sp(server), AutoApprove: false, Priority: -1})
	}
	return out
}

// benchCalls mixes exact-name hits, pattern hits and misses.
func benchCalls(n int) []hitl.Call {
	rng := rand.New(rand.NewPCG(1, 2))
	calls := make([]hitl.Call, n)
	for i := range calls {
		server := fmt.Sprintf("server-%03d", rng.IntN(220)) // some servers have no rules
		var tool string
		switch rng.IntN(3) {
		case 0:
			tool = fmt.Sprintf("tool_%02d", rng.IntN(50))
		case 1:
			tool = fmt.Sprintf("VERB%d_thing", rng.IntN(12))
		default:
			tool = "something_else"
		}
		calls[i] = hitl.Call{Agent: "agent", Session: "session", Server: server, Tool: tool}
	}
	return calls
}

func benchEnv(b *testing.B) (*hitl.Rules, *store.DB) {
	b.Helper()
	db := openDB(b, filepath.Join(b.TempDir(), "airlock.db"))
	now := time.Now().UTC()
	var rules []hitl.Rule
	for i, in := range benchRules() {
		rules = append(rules, hitl.Rule{
			ID: fmt.Sprintf("r%05d", i), ServerID: in.ServerID, ToolName: in.ToolName, ToolPattern: in.ToolPattern,
			AutoApprove: in.AutoApprove, Priority: in.Priority, Conditions: []hitl.Condition{},
			CreatedAt: now.Add(time.Duration(i) * time.Microsecond), UpdatedAt: now,
		})
	}
	if err := store.NewRules(db).ImportRules(rules, true); err != nil {
		b.Fatal(err)
	}
	return newRules(b, db, hitl.RulesOptions{}), db
}

// BenchmarkDecide10k decides calls against 10,000 compiled rules.
func BenchmarkDecide10k(b *testing.B) {
	r, _ := benchEnv(b)
	if n := len(r.List()); n != 10000 {
		b.Fatalf("%d rules, want 10000", n)
	}
	e := r.Engine()
	calls := benchCalls(4096)
	reqs := make([]*core.Request, len(calls))
	for i, c := range calls {
		reqs[i] = c.Request()
	}
	now := time.Now()
	b.ReportAllocs()
	reportP50(b, func(i int) { e.DecideAt(reqs[i&4095], now) })
}

// BenchmarkSeedApproach10k is seed 002's shouldAutoApprove, side by side:
// fetch every rule from SQLite ordered by priority, scan them, and turn each
// pattern into a regular expression on the way.
func BenchmarkSeedApproach10k(b *testing.B) {
	_, db := benchEnv(b)
	calls := benchCalls(4096)
	b.ReportAllocs()
	reportP50(b, func(i int) {
		c := calls[i&4095]
		if _, err := seedShouldAutoApprove(db, c.Server, c.Tool); err != nil {
			b.Fatal(err)
		}
	})
}

type seedRow struct {
	ID          string
	ServerID    *string
	ToolName    *string
	ToolPattern *string
	AutoApprove int
	Priority    int
}

func seedShouldAutoApprove(db *store.DB, serverID, toolName string) (bool, error) {
	var rules []seedRow
	if err := db.Raw("SELECT id, server_id, tool_name, tool_pattern, auto_approve, priority FROM tool_permission_rules ORDER BY priority DESC").
		Scan(&rules).Error; err != nil {
		return false, err
	}
	for _, r := range rules {
		if r.ServerID != nil && *r.ServerID != serverID {
			continue
		}
		if r.ToolName != nil {
			if *r.ToolName == toolName {
				return r.AutoApprove == 1, nil
			}
			continue
		}
		if r.ToolPattern != nil {
			re := regexp.MustCompile("(?i)^" + strings.ReplaceAll(*r.ToolPattern, "*", ".*") + "$")
			if re.MatchString(toolName) {
				return r.AutoApprove == 1, nil
			}
			continue
		}
		return r.AutoApprove == 1, nil
	}
	return false, nil
}

// reportP50 runs fn b.N times in small batches and reports the median
// per-call time of the batches as "p50-ns/op" (timing every single call
// would measure the clock more than the call).
func reportP50(b *testing.B, fn func(i int)) {
	b.Helper()
	batch := 1
	if b.N >= 1000 {
		batch = 64
	}
	samples := make([]float64, 0, b.N/batch+1)
	b.ResetTimer()
	for i := 0; i < b.N; {
		n := min(batch, b.N-i)
		start := time.Now()
		for j := 0; j < n; j++ {
			fn(i + j)
		}
		samples = append(samples, float64(time.Since(start).Nanoseconds())/float64(n))
		i += n
	}
	b.StopTimer()
	slices.Sort(samples)
	if len(samples) > 0 {
		b.ReportMetric(samples[len(samples)/2], "p50-ns/op")
	}
}
