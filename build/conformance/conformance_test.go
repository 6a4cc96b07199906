package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConformanceThroughAirlock runs the MCP server conformance suite against
// the Go SDK's everything-server directly and through `airlock serve`
// ($AIRLOCK_BIN), and fails one subtest for every scenario that passes
// directly but not through Airlock.
func TestConformanceThroughAirlock(t *testing.T) {
	bin := os.Getenv("AIRLOCK_BIN")
	if bin == "" {
		t.Skip("set AIRLOCK_BIN to an airlock binary (absolute, or relative to the repository root, e.g. build/bin/airlock-headless from `go tool task build:headless`) to run the MCP conformance suite through Airlock")
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(bin) {
		// go test runs in this directory; a relative path means the
		// repository root, where the build puts its binaries.
		bin = filepath.Join(root, bin)
	}
	c, err := Compare(context.Background(), Options{Root: root, Airlock: bin, NoPrefix: "auto", Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + c.Markdown())

	// The harness itself: the suite must work against the server alone,
	// and the header proxy must change no verdict.
	passedDirectly := 0
	for _, r := range c.Rows {
		if r.DirectOK() {
			passedDirectly++
		}
		if r.Direct.OK() != r.Control.OK() {
			t.Errorf("%s: direct %s but through the header proxy alone %s: the proxy is not transparent", r.Scenario, r.Direct, r.Control)
		}
	}
	if passedDirectly == 0 {
		t.Fatal("no scenario passed against everything-server directly: the suite or the server is broken, nothing was compared")
	}

	for _, r := range c.Rows {
		t.Run(r.Scenario, func(t *testing.T) {
			switch {
			case r.DirectOK() && !r.Airlock.OK():
				t.Errorf("passes directly (%s) but not through Airlock (%s): %s", r.baseline(), r.Airlock, truncate(r.Airlock.FirstFailure, 300))
			case r.DirectOK() && r.Masked != "":
				t.Errorf("passes directly; through Airlock the suite passed it on an error result: %s", truncate(r.Masked, 300))
			}
		})
	}
}

// testWriter sends the runner's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestReadChecks(t *testing.T) {
	tests := []struct {
		name, json string
		want       Outcome
	}{
		{"all pass, info and warnings do not count",
			`[{"id":"a","status":"SUCCESS"},{"id":"b","status":"INFO"},{"id":"c","status":"WARNING"},{"id":"d","status":"SUCCESS"}]`,
			Outcome{Ran: true, Passed: 2}},
		{"first failure kept, with its message",
			`[{"id":"a","status":"SUCCESS"},{"id":"b","status":"FAILURE","errorMessage":"method not found"},{"id":"c","status":"FAILURE","description":"later"}]`,
			Outcome{Ran: true, Passed: 1, Failed: 2, FirstFailure: "b: method not found"}},
		{"error results behind passing checks are kept",
			`[{"id":"t","status":"SUCCESS","details":{"result":{"isError":true,"content":[{"type":"text","text":"no such tool"}]}}},{"id":"u","status":"SUCCESS","details":{"result":{"content":[{"type":"text","text":"fine"}]}}}]`,
			Outcome{Ran: true, Passed: 2, ToolErrors: map[string]string{"t": "no such tool"}}},
		{"a failure without a message uses its description",
			`[{"id":"x","status":"FAILURE","description":"Tool was not called"}]`,
			Outcome{Ran: true, Failed: 1, FirstFailure: "x: Tool was not called"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "checks.json")
			if err := os.WriteFile(p, []byte(tt.json), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readChecks(p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("readChecks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResultDirNames(t *testing.T) {
	tests := map[string]string{
		"server-resources-subscribe-2026-11-26T03-45-51-700Z": "resources-subscribe",
		"server-ping-2026-01-02T00-00-00-000Z":                "ping",
		"server-json-schema-2020-12-2026-11-26T03-45-51-048Z": "json-schema-2020-12",
		"server-ping.log": "",
		"client-initialize-2026-11-26T03-45-51-700Z": "",
	}
	for dir, want := range tests {
		got := ""
		if m := resultDir.FindStringSubmatch(dir); m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("scenario of %q = %q, want %q", dir, got, want)
		}
	}
}

func TestMasked(t *testing.T) {
	ok := Outcome{Ran: true, Passed: 1}
	errOut := func(text string) Outcome {
		return Outcome{Ran: true, Passed: 1, ToolErrors: map[string]string{"call": text}}
	}
	tests := []struct {
		name            string
		direct, through Outcome
		masked          bool
	}{
		{"no errors", ok, ok, false},
		{"the same tool error both ways (an error-handling scenario)", errOut("boom"), errOut("boom"), false},
		{"an error only through Airlock", ok, errOut("unknown tool"), true},
		{"a different error through Airlock", errOut("boom"), errOut("unknown tool"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := masked(tt.direct, tt.through); (got != "") != tt.masked {
				t.Errorf("masked(direct, through) = %q, want masked %v", got, tt.masked)
			}
		})
	}
}

func TestDifferences(t *testing.T) {
	pass := Outcome{Ran: true, Passed: 1}
	fail := Outcome{Ran: true, Failed: 1}
	c := &Comparison{Rows: []Row{
		{Scenario: "masked-pass", Direct: pass, Airlock: pass, Masked: "call passed on an error result: unknown tool"},
		{Scenario: "both-pass", Direct: pass, Airlock: pass},
		{Scenario: "only-direct", Direct: pass, Airlock: fail},
		{Scenario: "missing-through-airlock", Direct: pass},
		{Scenario: "both-fail", Direct: fail, Airlock: fail},
		{Scenario: "only-airlock", Direct: fail, Airlock: pass},
		{Scenario: "only-stateless-direct", Direct: fail, Stateless: pass, Airlock: fail},
		{Scenario: "stateless-direct-and-airlock", Direct: fail, Stateless: pass, Airlock: pass},
	}}
	var got []string
	for _, r := range c.Differences() {
		got = append(got, r.Scenario)
	}
	if diff := cmp.Diff([]string{"masked-pass", "only-direct", "missing-through-airlock", "only-stateless-direct"}, got); diff != "" {
		t.Errorf("Differences (-want +got):\n%s", diff)
	}
}

// The list of 0.1.16 and of the 0.2.0 pre-releases, which print each
// scenario's protocol revisions after its name.
func TestScenarioLine(t *testing.T) {
	for line, want := range map[string]string{
		"  - server-initialize":                             "server-initialize",
		"  - server-stateless [2026-07-28]":                 "server-stateless",
		"  - tools-list [2025-06-18,2025-11-25,2026-07-28]": "tools-list",
		"Server scenarios (test against a server):":         "",
	} {
		got := ""
		if m := scenarioLine.FindStringSubmatch(line); m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("scenario of %q = %q, want %q", line, got, want)
		}
	}
}
