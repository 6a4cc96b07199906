// Command benchreport turns `go test -bench` output into a Markdown report:
// one table per package with every metric the benchmarks printed (ns/op,
// B/op, allocs/op and each custom b.ReportMetric unit such as p50-µs or
// calls/s), headed by the machine the numbers came from.
//
// It knows nothing about Airlock's benchmarks on purpose: the columns are
// whatever units appear in the input, so new benchmarks need no change here.
//
//	go test -run '^$' -bench . -benchmem ./backend/... | tee bench.txt
//	go run ./scripts/benchreport -in bench.txt -out build/bench-report.md
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	in := fs.String("in", "-", "go test -bench output to read (- for stdin)")
	out := fs.String("out", "-", "Markdown file to write (- for stdout)")
	command := fs.String("cmd", "go tool task bench", "command shown in the report as the way to reproduce it")
	if err := fs.Parse(args); err != nil {
		return err
	}

	r := stdin
	if *in != "-" {
		f, err := os.Open(*in)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	report, err := Parse(r)
	if err != nil {
		return fmt.Errorf("read %s: %w", *in, err)
	}
	if len(report.Packages) == 0 && len(report.Failed) == 0 {
		return errors.New("no benchmark results in the input")
	}

	w := stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	return WriteMarkdown(w, report, CurrentMachine(report.CPU), *command)
}

// Result is one benchmark line: `BenchmarkX-2  1000  123 ns/op  4.5 p50-µs`.
type Result struct {
	Name       string
	Iterations string
	// Metrics maps a unit to its value exactly as go test printed it, so the
	// report shows the precision the benchmark chose.
	Metrics map[string]string
}

// Package holds the results of one `pkg:` block, with units in the order
// they were first seen so related columns stay together.
type Package struct {
	Path    string
	Units   []string
	Results []Result
}

// Report is everything Parse found in one `go test -bench` run.
type Report struct {
	Packages []*Package
	// Failed lists the benchmarks go test reported as failed (--- FAIL:),
	// so a partial run is visibly partial.
	Failed []string
	GOOS   string
	GOARCH string
	CPU    string
}

// Parse reads `go test -bench` output. Lines that are not benchmark results
// (log output, PASS, ok, sub-test chatter) are skipped; a `pkg:` line starts
// a new package, and results before any `pkg:` line go to an unnamed one.
func Parse(r io.Reader) (*Report, error) {
	rep := &Report{}
	var cur *Package
	pkg := func(path string) *Package {
		for _, p := range rep.Packages {
			if p.Path == path {
				return p
			}
		}
		p := &Package{Path: path}
		rep.Packages = append(rep.Packages, p)
		return p
	}

	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "goos: "):
			rep.GOOS = strings.TrimPrefix(line, "goos: ")
		case strings.HasPrefix(line, "goarch: "):
			rep.GOARCH = strings.TrimPrefix(line, "goarch: ")
		case strings.HasPrefix(line, "cpu: "):
			rep.CPU = strings.TrimPrefix(line, "cpu: ")
		case strings.HasPrefix(line, "--- FAIL: Benchmark"):
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "--- FAIL: "), " ")
			rep.Failed = append(rep.Failed, name)
		case strings.HasPrefix(line, "pkg: "):
			cur = pkg(strings.TrimPrefix(line, "pkg: "))
		case strings.HasPrefix(line, "Benchmark"):
			res, ok := parseResult(line)
			if !ok {
				continue
			}
			if cur == nil {
				cur = pkg("")
			}
			for _, unit := range res.units {
				if !contains(cur.Units, unit) {
					cur.Units = append(cur.Units, unit)
				}
			}
			cur.Results = append(cur.Results, res.Result)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	// Drop packages that had a pkg: line but no results (no benchmarks).
	kept := rep.Packages[:0]
	for _, p := range rep.Packages {
		if len(p.Results) > 0 {
			kept = append(kept, p)
		}
	}
	rep.Packages = kept
	return rep, nil
}

type parsed struct {
	Result
	units []string // in line order
}

// parseResult parses `Name Iterations (Value Unit)*`. A line that merely
// starts with "Benchmark" (a log message, "BenchmarkX: skipped") is rejected
// because its second field is not a count or its pairs are not numbers.
func parseResult(line string) (parsed, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || len(f)%2 != 0 || !isCount(f[1]) {
		return parsed{}, false
	}
	p := parsed{Result: Result{Name: f[0], Iterations: f[1], Metrics: map[string]string{}}}
	for i := 2; i+1 < len(f); i += 2 {
		value, unit := f[i], f[i+1]
		if !isNumber(value) {
			return parsed{}, false
		}
		if _, dup := p.Metrics[unit]; !dup {
			p.units = append(p.units, unit)
		}
		p.Metrics[unit] = value
	}
	return p, true
}

func isCount(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isNumber(s string) bool {
	var f float64
	_, err := fmt.Sscan(s, &f)
	return err == nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Machine describes where the numbers were measured; benchmark figures
// mean little without it.
type Machine struct {
	CPUs      int
	CPUModel  string
	GoVersion string
	OS        string
	Date      time.Time
}

// CurrentMachine describes this machine. cpuFromBench, the `cpu:` line of
// the benchmark output, wins over /proc/cpuinfo because it is what go test
// saw.
func CurrentMachine(cpuFromBench string) Machine {
	m := Machine{
		CPUs:      runtime.NumCPU(),
		CPUModel:  cpuFromBench,
		GoVersion: goVersion(),
		OS:        runtime.GOOS + "/" + runtime.GOARCH,
		Date:      time.Now().UTC(),
	}
	if m.CPUModel == "" {
		m.CPUModel = cpuModel()
	}
	if out, err := exec.Command("uname", "-sr").Output(); err == nil {
		m.OS = strings.TrimSpace(string(out)) + " " + runtime.GOARCH
	}
	return m
}

// goVersion asks the go command rather than runtime.Version: under `go run`
// they agree, but a prebuilt benchreport may be older than the toolchain
// that ran the benchmarks.
func goVersion() string {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil || len(strings.TrimSpace(string(out))) == 0 {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
}

// WriteMarkdown writes the report: the machine, the command, then one table
// per package.
func WriteMarkdown(w io.Writer, rep *Report, m Machine, command string) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "# Benchmark report\n\n")
	fmt.Fprintf(b, "| machine | |\n|---|---|\n")
	fmt.Fprintf(b, "| CPUs (nproc) | %d |\n", m.CPUs)
	fmt.Fprintf(b, "| CPU model | %s |\n", cell(m.CPUModel))
	fmt.Fprintf(b, "| Go | %s |\n", cell(m.GoVersion))
	fmt.Fprintf(b, "| OS | %s |\n", cell(m.OS))
	fmt.Fprintf(b, "| date (UTC) | %s |\n", m.Date.Format("2006-01-02 15:04"))
	fmt.Fprintf(b, "\nReproduce with `%s`. Benchmark names end in -GOMAXPROCS.\n", command)

	if len(rep.Failed) > 0 {
		fmt.Fprintf(b, "\n**Failed:** %s. Their figures are missing below.\n", cell(strings.Join(rep.Failed, ", ")))
	}

	for _, p := range rep.Packages {
		units := orderUnits(p.Units)
		title := p.Path
		if title == "" {
			title = "(package not named in the input)"
		}
		fmt.Fprintf(b, "\n## %s\n\n", cell(title))
		fmt.Fprintf(b, "| benchmark | iterations |")
		for _, u := range units {
			fmt.Fprintf(b, " %s |", cell(u))
		}
		fmt.Fprintf(b, "\n|---|---:|")
		for range units {
			fmt.Fprintf(b, "---:|")
		}
		b.WriteString("\n")
		for _, r := range p.Results {
			fmt.Fprintf(b, "| %s | %s |", cell(displayName(r.Name)), r.Iterations)
			for _, u := range units {
				v, ok := r.Metrics[u]
				if !ok {
					v = "–"
				}
				fmt.Fprintf(b, " %s |", v)
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// orderUnits puts ns/op first and the -benchmem columns last, with the
// custom metrics in between in the order they first appeared: go test prints
// B/op and allocs/op after the custom metrics, but a package whose first
// benchmark has fewer custom metrics would otherwise scatter them.
func orderUnits(units []string) []string {
	rank := func(u string) int {
		switch u {
		case "ns/op":
			return 0
		case "MB/s", "B/op", "allocs/op":
			return 2
		}
		return 1
	}
	out := make([]string, 0, len(units))
	for r := 0; r <= 2; r++ {
		for _, u := range units {
			if rank(u) == r {
				out = append(out, u)
			}
		}
	}
	return out
}

// displayName drops the "Benchmark" prefix. The -N suffix stays: go test
// omits it when GOMAXPROCS is 1, so it cannot be told from a sub-benchmark
// name ending in a number.
func displayName(name string) string {
	return strings.TrimPrefix(name, "Benchmark")
}

// cell escapes the one character that breaks a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
