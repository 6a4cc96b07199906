package airlock_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/hitl"
)

// BenchmarkBuiltinTools runs file_read of a 1 MB text file and shell_exec of
// `true` three ways in one run: the tool's handler called directly
// ("handler"); through the SDK to the in-process server, as the catalogue
// reaches it (catalog.InProcessTransports; "server"); and as an agent
// does, over Streamable HTTP through the whole pipeline — identity, gate,
// shell policy, rules, audit ("airlock"). The pipeline's share is airlock − server; the SDK's,
// server − handler.
//
//	go test ./backend/airlock -run '^$' -bench BuiltinTools -benchtime 300x
func BenchmarkBuiltinTools(b *testing.B) {
	dir := b.TempDir()
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB of text
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big), 0o600); err != nil {
		b.Fatal(err)
	}
	in := startWith(b, airlock.Options{DataDir: b.TempDir(), AllowPaths: []string{dir}})
	// file_read runs unasked by default; shell_exec needs a rule.
	if _, err := in.API.Rules.Create(hitl.RuleInput{ServerID: sp(builtin.ServerShellExec), AutoApprove: true}); err != nil {
		b.Fatal(err)
	}
	sess := connect(b, in)
	waitTool(b, sess, "shell-exec__shell_exec")

	direct, err := builtin.New(builtin.Options{Roots: []string{dir}})
	if err != nil {
		b.Fatal(err)
	}
	ct, st := catalog.InProcessTransports()
	servers := direct.Servers()
	ctx := context.Background()
	if _, err := servers[builtin.ServerFileRead].Connect(ctx, st, nil); err != nil {
		b.Fatal(err)
	}
	readSess, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { readSess.Close() })
	ct2, st2 := catalog.InProcessTransports()
	if _, err := servers[builtin.ServerShellExec].Connect(ctx, st2, nil); err != nil {
		b.Fatal(err)
	}
	shellSess, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct2, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { shellSess.Close() })

	check := func(b *testing.B, res *mcp.CallToolResult, err error, want string) {
		if err != nil || res.IsError || !strings.Contains(textOf(res)[:min(len(textOf(res)), 64)], want) {
			b.Fatalf("call: %v %.200s", err, textOf(res))
		}
	}
	readArgs := map[string]any{"path": filepath.Join(dir, "big.txt")}
	b.Run("file_read_1MB/handler", func(b *testing.B) {
		b.SetBytes(1 << 20)
		for range b.N {
			res, err := direct.ReadFile(ctx, builtin.ReadArgs{Path: filepath.Join(dir, "big.txt")})
			if err != nil || len(res.Content) != 1<<20 {
				b.Fatalf("ReadFile: %v", err)
			}
		}
	})
	b.Run("file_read_1MB/server", func(b *testing.B) {
		b.SetBytes(1 << 20)
		for range b.N {
			res, err := readSess.CallTool(ctx, &mcp.CallToolParams{Name: "file_read", Arguments: readArgs})
			check(b, res, err, "0123456789abcdef")
		}
	})
	b.Run("file_read_1MB/airlock", func(b *testing.B) {
		b.SetBytes(1 << 20)
		for range b.N {
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "file-read__file_read", Arguments: readArgs})
			check(b, res, err, "0123456789abcdef")
		}
	})
	shellArgs := map[string]any{"command": "true", "cwd": dir}
	b.Run("shell_true/handler", func(b *testing.B) {
		for range b.N {
			res, err := direct.Exec(ctx, builtin.ExecArgs{Command: "true", Cwd: dir})
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("Exec: %+v %v", res, err)
			}
		}
	})
	b.Run("shell_true/server", func(b *testing.B) {
		for range b.N {
			res, err := shellSess.CallTool(ctx, &mcp.CallToolParams{Name: "shell_exec", Arguments: shellArgs})
			check(b, res, err, "")
		}
	})
	b.Run("shell_true/airlock", func(b *testing.B) {
		for range b.N {
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "shell-exec__shell_exec", Arguments: shellArgs})
			check(b, res, err, "")
		}
	})
}
