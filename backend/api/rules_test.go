package api_test

import (
	"slices"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/google/go-cmp/cmp"
)

// Moving a rule with ↑ on the Rules screen, where equal priorities make
// Airlock renumber the rules, failed half-way with "expiresAt … is in the
// past" when an expired rule was among them (found by a new-user test):
// the rules above it had been given new priorities one by one (a rule-set
// version each), the rest not, and the move the person asked for was
// refused for a reason that had nothing to do with it. A move must apply
// whole (or not at all), whatever rules have expired.
func TestMoveRuleWithAnExpiredRuleAmongThem(t *testing.T) {
	in := start(t)
	mk := func(tool string, exp *time.Time) hitl.Rule {
		t.Helper()
		r, err := in.API.Rules.Create(hitl.RuleInput{ServerID: sp("work"), ToolName: sp(tool), AutoApprove: true, ExpiresAt: exp})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := mk("echo", nil)
	soon := time.Now().Add(200 * time.Millisecond)
	b := mk("add", &soon)
	c := mk("slow", nil)
	testutil.Eventually(t, 10*time.Second, func() bool { return time.Now().After(soon.Add(10 * time.Millisecond)) }, "the rule never expired")

	before, _ := in.API.Rules.List()
	pos := func(rs []hitl.Rule, id string) int {
		return slices.IndexFunc(rs, func(r hitl.Rule) bool { return r.ID == id })
	}
	if !(pos(before, a.ID) < pos(before, b.ID) && pos(before, b.ID) < pos(before, c.ID)) {
		t.Fatalf("setup: order %v, want echo, add, slow", before)
	}
	_, err := in.API.Rules.Move(c.ID, -1)
	after, _ := in.API.Rules.List()
	if err != nil {
		t.Errorf("Move(slow, up) with the expired rule %s in the way: %v", b.ID, err)
		prio := func(rs []hitl.Rule) map[string]int {
			m := map[string]int{}
			for _, r := range rs {
				m[r.ID] = r.Priority
			}
			return m
		}
		if diff := cmp.Diff(prio(before), prio(after)); diff != "" {
			t.Errorf("the refused move still changed priorities (-before +after):\n%s", diff)
		}
		return
	}
	if !(pos(after, c.ID) < pos(after, b.ID)) {
		t.Errorf("after Move(slow, up) the order is %v; want slow above add", after)
	}
}
