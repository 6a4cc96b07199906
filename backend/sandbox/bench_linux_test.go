package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/backend/proc"
	"github.com/airlock-dev/airlock/backend/sandbox"
)

// BenchmarkStart is what the sandbox adds to starting a command: the
// caller's real home folder and data directory, as shell_exec uses them.
func BenchmarkStart(b *testing.B) {
	home, _ := os.UserHomeDir()
	sb := sandbox.New([]string{filepath.Join(home, ".config", "airlock")})
	for _, bc := range []struct {
		name     string
		restrict func() error
	}{{"plain", nil}, {"sandboxed", sb.Restrict}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				p, err := proc.Start(context.Background(), proc.Spec{Path: "/bin/true", Restrict: bc.restrict})
				if err != nil {
					b.Fatal(err)
				}
				if ex := p.Wait(); ex.Code != 0 {
					b.Fatal(ex)
				}
			}
		})
	}
}
