package hitl

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestIndexedDecideEqualsLinearScan checks the indexed Decide against the
// plain definition (every rule in evaluation order, first match wins), which
// Explain implements, on random rule sets and calls.
func TestIndexedDecideEqualsLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	servers := []string{"", "fs", "shell", "web"}
	tools := []string{"", "read_file", "write_file", "exec", "READ_x"}
	patterns := []string{"", "read_*", "*", "*_file", "w*e", "exec"}
	for round := 0; round < 200; round++ {
		var rules []Rule
		for i := 0; i < 30; i++ {
			r := mkRule(fmt.Sprintf("r%02d", i), rng.IntN(4), rng.IntN(2) == 0,
				servers[rng.IntN(len(servers))], tools[rng.IntN(len(tools))], "", rng.IntN(3))
			if p := patterns[rng.IntN(len(patterns))]; p != "" && (r.ToolName == nil || compileWildcard(p).Match(*r.ToolName)) {
				r.ToolPattern = sp(p)
			}
			if rng.IntN(5) == 0 {
				r.AgentID = sp("alice")
			}
			rules = append(rules, r)
		}
		e := mustEngine(t, rules...)
		for _, server := range servers[1:] {
			for _, tool := range tools[1:] {
				for _, agent := range []string{"alice", "bob"} {
					call := Call{Agent: agent, Server: server, Tool: tool, Now: t0}
					if d, ex := e.DecideAt(call.Request(), call.At()), e.Explain(call.Request(), call.At()); d != ex.Verdict {
						t.Fatalf("round %d, call %+v: Decide %+v, linear scan %+v", round, call, d, ex.Verdict)
					}
				}
			}
		}
	}
}
