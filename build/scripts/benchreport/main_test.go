package main

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/airlock-dev/airlock/backend/gateway
cpu: AMD EPYC 7B13
BenchmarkEcho/direct/sequential-2         	    5000	    198000 ns/op	      198.0 p50-µs	    4167 calls/s	   2048 B/op	      31 allocs/op
BenchmarkEcho/airlock/sessions-8-2        	   12000	    250000 ns/op	      412.5 p50-µs	    4410 calls/s	       0 wrong-replies	   4096 B/op	      60 allocs/op
    bench_test.go:42: BenchmarkEcho started 3 servers
--- FAIL: BenchmarkServeRSS
    bench_test.go:99: serve did not start
BenchmarkSkipped: skipped because npx is missing
PASS
ok  	github.com/airlock-dev/airlock/backend/gateway	12.345s
pkg: github.com/airlock-dev/airlock/backend/store
BenchmarkAppend-2   	  100000	     10500 ns/op	     512 B/op	       7 allocs/op
PASS
ok  	github.com/airlock-dev/airlock/backend/store	2.1s
?   	github.com/airlock-dev/airlock/backend/core	[no test files]
`

func TestParse(t *testing.T) {
	rep, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if rep.CPU != "AMD EPYC 7B13" || rep.GOOS != "linux" || rep.GOARCH != "amd64" {
		t.Errorf("header: got cpu=%q goos=%q goarch=%q", rep.CPU, rep.GOOS, rep.GOARCH)
	}
	if want := []string{"BenchmarkServeRSS"}; !reflect.DeepEqual(rep.Failed, want) {
		t.Errorf("failed: got %q, want %q", rep.Failed, want)
	}
	if len(rep.Packages) != 2 {
		t.Fatalf("got %d packages, want 2", len(rep.Packages))
	}

	gw := rep.Packages[0]
	wantUnits := []string{"ns/op", "p50-µs", "calls/s", "B/op", "allocs/op", "wrong-replies"}
	if !reflect.DeepEqual(gw.Units, wantUnits) {
		t.Errorf("units: got %q, want %q", gw.Units, wantUnits)
	}
	if len(gw.Results) != 2 {
		t.Fatalf("got %d gateway results, want 2 (log and skip lines must be ignored): %+v", len(gw.Results), gw.Results)
	}
	second := gw.Results[1]
	if second.Name != "BenchmarkEcho/airlock/sessions-8-2" || second.Iterations != "12000" {
		t.Errorf("second result: got %s %s", second.Name, second.Iterations)
	}
	wantMetrics := map[string]string{
		"ns/op": "250000", "p50-µs": "412.5", "calls/s": "4410", "wrong-replies": "0",
		"B/op": "4096", "allocs/op": "60",
	}
	if !reflect.DeepEqual(second.Metrics, wantMetrics) {
		t.Errorf("metrics: got %v, want %v", second.Metrics, wantMetrics)
	}

	if st := rep.Packages[1]; st.Path != "github.com/airlock-dev/airlock/backend/store" || len(st.Results) != 1 {
		t.Errorf("store package: got %q with %d results", st.Path, len(st.Results))
	}
}

func TestParseRejectsNonResults(t *testing.T) {
	for _, line := range []string{
		"BenchmarkX: skipped",
		"BenchmarkX-2 notanumber 12 ns/op",
		"BenchmarkX-2 100 fast ns/op",
		"BenchmarkX-2 100 12",
		"Benchmark",
	} {
		t.Run(line, func(t *testing.T) {
			if res, ok := parseResult(line); ok {
				t.Errorf("parseResult accepted %q as %+v", line, res)
			}
		})
	}
}

func TestWriteMarkdown(t *testing.T) {
	rep, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	m := Machine{CPUs: 2, CPUModel: "AMD EPYC 7B13", GoVersion: "go1.26.8", OS: "Linux 6.1 amd64",
		Date: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)}
	var b strings.Builder
	if err := WriteMarkdown(&b, rep, m, "go tool task bench"); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"| CPUs (nproc) | 2 |",
		"| CPU model | AMD EPYC 7B13 |",
		"| Go | go1.26.8 |",
		"| date (UTC) | 2026-01-02 03:04 |",
		"Reproduce with `go tool task bench`",
		"## github.com/airlock-dev/airlock/backend/gateway",
		"**Failed:** BenchmarkServeRSS.",
		"| benchmark | iterations | ns/op | p50-µs | calls/s | wrong-replies | B/op | allocs/op |",
		"| Echo/direct/sequential-2 | 5000 | 198000 | 198.0 | 4167 | – | 2048 | 31 |",
		"| Echo/airlock/sessions-8-2 | 12000 | 250000 | 412.5 | 4410 | 0 | 4096 | 60 |",
		"| Append-2 | 100000 | 10500 | 512 | 7 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q; report:\n%s", want, got)
		}
	}
}

func TestRunFailsWithoutResults(t *testing.T) {
	var out strings.Builder
	err := run(nil, strings.NewReader("PASS\nok  \tx\t0.1s\n"), &out)
	if err == nil {
		t.Fatalf("run succeeded on input with no benchmarks; wrote:\n%s", out.String())
	}
}
