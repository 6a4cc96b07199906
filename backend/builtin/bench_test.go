package builtin_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/builtin"
)

// BenchmarkFileRead1MB calls file_read's handler directly on a 1 MB text
// file (the pipeline's variant lives with the gateway).
func BenchmarkFileRead1MB(b *testing.B) {
	f := newFixture(b)
	mustWrite(b, filepath.Join(f.root, "big.txt"), strings.Repeat("0123456789abcdef", 1<<16))
	ctx := context.Background()
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		res, err := f.b.ReadFile(ctx, builtin.ReadArgs{Path: "big.txt"})
		if err != nil || len(res.Content) != 1<<20 {
			b.Fatalf("ReadFile: %d bytes, %v", len(res.Content), err)
		}
	}
}

// BenchmarkShellTrue calls shell_exec's handler directly with `true`: the
// cost of checking, starting and reaping a command.
func BenchmarkShellTrue(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := f.b.Exec(ctx, builtin.ExecArgs{Command: "true"})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("Exec(true): %+v, %v", res, err)
		}
	}
}

// BenchmarkClassify measures the shell policy alone on a typical command.
func BenchmarkClassify(b *testing.B) {
	c := defaultClassifier(b)
	b.ReportAllocs()
	for b.Loop() {
		if c.Classify("cd sub && go test ./... 2>&1 | tee log.txt; git status --short").Outcome == "" {
			b.Fatal("no outcome")
		}
	}
}
