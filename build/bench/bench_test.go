package main

import (
	"context"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMain lets the test binary play the client role too: the orchestrator
// runs os.Executable() again, which under go test is this binary.
func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "client":
		if err := runClient(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString("bench client: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	case "relay":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		if err := runRelay(ctx, os.Getenv(relayAddrEnv), os.Args[1:]); err != nil {
			os.Stderr.WriteString("bench relay: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want procStat
		err  bool
	}{
		{"plain", "4242 (airlock) S 17 4242 17 0 -1 4194560 900 0 0 0 120 35 7 3 20 0 9 0 5000 1000 2000",
			procStat{PPID: 17, CPUTicks: 155, ReapedTicks: 10}, false},
		// A command name may hold spaces and parentheses: fields count from the last ')'.
		{"name with spaces and parens", "7 (node (x) y) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 1 1",
			procStat{PPID: 1, CPUTicks: 7}, false},
		{"truncated", "7 (node) R 1 7", procStat{}, true},
		{"no name", "garbage", procStat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.in))
			if (err != nil) != tt.err {
				t.Fatalf("parseStat error = %v, want error %v", err, tt.err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseStat (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	in := "Name:\tairlock\nVmPeak:\t 900000 kB\nVmHWM:\t   51200 kB\nVmRSS:\t   40960 kB\nRssAnon:\t 30000 kB\n"
	got, err := parseStatus([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(memKB{RSS: 40960, Peak: 51200}, got); diff != "" {
		t.Errorf("parseStatus (-want +got):\n%s", diff)
	}
	if _, err := parseStatus([]byte("Name:\tkthreadd\n")); err == nil {
		t.Error("parseStatus of a status without VmRSS: no error, want one")
	}
}

// The bench reads its own process: a real /proc, not only canned text.
func TestReadOwnProcess(t *testing.T) {
	m, err := readMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.Peak < m.RSS {
		t.Errorf("own memory = %+v, want 0 < RSS <= Peak", m)
	}
	st, err := readStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.PPID != os.Getppid() {
		t.Errorf("own ppid = %d, want %d", st.PPID, os.Getppid())
	}
}

func TestPercentilesAndMedian(t *testing.T) {
	var lat []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		lat = append(lat, time.Duration(i)*time.Microsecond)
	}
	p50, p99 := percentiles(lat)
	if diff := cmp.Diff([2]float64{50, 99}, [2]float64{p50, p99}); diff != "" {
		t.Errorf("percentiles of 1..100 µs (-want +got):\n%s", diff)
	}
	if lat[0] != 100*time.Microsecond {
		t.Error("percentiles sorted its caller's slice")
	}
	for _, tt := range []struct {
		in   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median(nil) is a number, want NaN (shown as –)")
	}
}

func TestNum(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		d    int
		want string
	}{{0, 0, "0"}, {999, 0, "999"}, {1863, 0, "1,863"}, {1234567.891, 1, "1,234,567.9"}, {-2500, 0, "-2,500"}, {math.NaN(), 0, "–"}} {
		if got := num(tt.v, tt.d); got != tt.want {
			t.Errorf("num(%v, %d) = %q, want %q", tt.v, tt.d, got, tt.want)
		}
	}
}

// Ratios are taken round by round, then their median: a machine that
// slows down between rounds shifts both sides of each ratio alike.
func TestRatioPerRound(t *testing.T) {
	res := &results{Rounds: map[string][]roundResult{
		keyAirlock: {{Seq: clientResult{OK: 1, P50: 400}}, {Seq: clientResult{OK: 1, P50: 1200}}, {Seq: clientResult{OK: 1, P50: 800}}},
		keyDirect:  {{Seq: clientResult{OK: 1, P50: 100}}, {Seq: clientResult{OK: 1, P50: 300}}, {Seq: clientResult{OK: 1, P50: 400}}},
	}}
	got := ratio(res, keyAirlock, keyDirect, seqP50)
	if diff := cmp.Diff([]float64{4, 4, 2}, got); diff != "" {
		t.Errorf("per-round ratios (-want +got):\n%s", diff)
	}
	if m := median(got); m != 4 {
		t.Errorf("median ratio = %v, want 4 (the ratio of medians would be 800/300)", m)
	}
}

func TestCorrectnessReportsEveryBadReply(t *testing.T) {
	res := &results{
		Targets: []*target{{Key: keyAirlock, Name: "Airlock"}},
		Rounds: map[string][]roundResult{keyAirlock: {
			{Seq: clientResult{OK: 10}, Load: &clientResult{OK: 8, Errors: 1, FirstError: "boom", Misrouted: 1, FirstMisroute: "sent a, got b"}},
		}},
	}
	got := correctness(res)
	for _, want := range []string{"1 errors (first: boom)", "1 misrouted replies (first: sent a, got b)", "round 1 load"} {
		if !strings.Contains(got, want) {
			t.Errorf("correctness() = %q, missing %q", got, want)
		}
	}
	res.Rounds[keyAirlock][0].Load = &clientResult{OK: 10}
	if got := correctness(res); got != "" {
		t.Errorf("correctness() of a clean run = %q, want empty", got)
	}
}

// TestQuickRun runs the whole benchmark in quick mode against a real
// `airlock serve`, server-everything and supergateway. It checks that the
// harness works and every reply was right; the figures are not asserted.
func TestQuickRun(t *testing.T) {
	bin := os.Getenv("AIRLOCK_BIN")
	if bin == "" {
		bin = os.Getenv("AIRLOCK_HEADLESS_BIN")
	}
	if bin == "" {
		t.Skip("set AIRLOCK_BIN (or AIRLOCK_HEADLESS_BIN) to an airlock binary to run the benchmark harness")
	}
	out := filepath.Join(t.TempDir(), "report.md")
	err := run(context.Background(), []string{"-quick", "-airlock", bin, "-out", out}, func(string) string { return "" },
		strings.NewReader(""), os.Stdout, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	report := string(b)
	for _, want := range []string{"| sequential p50 (µs) |", "| Airlock p50 ≤ 2× direct stdio p50 |", "0 errors, 0 misrouted", "**Quick mode**"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

func TestDemoteHeadings(t *testing.T) {
	in := "# Benchmark report\n\n| a |\n## pkg\ntext # not a heading\n"
	want := "## In-process benchmarks (`go test -bench`: gateway and clients share one process)\n\n| a |\n### pkg\ntext # not a heading\n"
	if diff := cmp.Diff(want, demoteHeadings(in)); diff != "" {
		t.Errorf("demoteHeadings (-want +got):\n%s", diff)
	}
}

// The CPU breakdown adds each sampled stack to the first part of the path
// it passes through.
func TestParseTraces(t *testing.T) {
	const sep = "-----------+-------------------------------------------------------"
	in := "File: airlock\nType: cpu\n" + sep + "\n" +
		"      30ms   internal/runtime/syscall/linux.Syscall6\n" +
		"             syscall.write\n" +
		"             github.com/airlock-dev/airlock/backend/store.(*AuditLog).writeLocked\n" +
		"             github.com/airlock-dev/airlock/backend/store.(*AuditLog).Begin\n" +
		"             github.com/airlock-dev/airlock/backend/pipeline.(*Pipeline).Run\n" + sep + "\n" +
		"      10ms   encoding/json.Marshal\n" +
		"             github.com/airlock-dev/airlock/backend/pipeline.(*Pipeline).Run\n" + sep + "\n" +
		"      1s   main.somethingElse\n" + sep + "\n"
	parts, total := parseTraces(in)
	if total != 1040*time.Millisecond {
		t.Errorf("total = %v, want 1.04s", total)
	}
	got := map[string][2]time.Duration{}
	for _, p := range parts {
		if p.CPU > 0 {
			got[p.Name] = [2]time.Duration{p.CPU, p.Syscall}
		}
	}
	want := map[string][2]time.Duration{
		"audit journal append (Begin, Finish)":  {30 * time.Millisecond, 30 * time.Millisecond},
		"pipeline: route, gate, policy, decide": {10 * time.Millisecond, 0},
		"other":                                 {time.Second, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
	if parts[0].Name != "other" {
		t.Errorf("first part = %q, want the largest (other) first", parts[0].Name)
	}
}
