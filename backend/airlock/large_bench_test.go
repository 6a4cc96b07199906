package airlock_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/testutil"
)

// BenchmarkLargeResult reads a 1 MiB text file with server-filesystem's
// read_text_file, directly over stdio and through Airlock, in the same
// run: what an agent reading a large file through Airlock pays on top of
// the server (decoding the server's answer, the pipeline, encoding it
// again for the agent; the agent's own decoding is in both).
//
//	go test ./backend/airlock -run '^$' -bench LargeResult -benchtime 100x
func BenchmarkLargeResult(b *testing.B) {
	dir := b.TempDir()
	big := strings.Repeat("0123456789abcde\n", 1<<16) // 1 MiB of text
	path := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(path, []byte(big), 0o600); err != nil {
		b.Fatal(err)
	}
	cfg := testutil.FilesystemServer(b, "fs", dir)
	ctx := context.Background()
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
		&mcp.CommandTransport{Command: exec.Command(cfg.Command, cfg.Args...)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { direct.Close() })

	data := b.TempDir()
	writeServers(b, data, cfg)
	in := start(b, data)
	allowAll(b, in)
	via := connect(b, in)
	waitTool(b, via, "fs__read_text_file")

	run := func(b *testing.B, sess *mcp.ClientSession, tool string) {
		b.SetBytes(1 << 20)
		for range b.N {
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"path": path}})
			if err != nil || res.IsError || len(textOf(res)) != len(big) {
				b.Fatalf("%s: %v, %d bytes", tool, err, len(textOf(res)))
			}
		}
	}
	b.Run("direct", func(b *testing.B) { run(b, direct, "read_text_file") })
	b.Run("airlock", func(b *testing.B) { run(b, via, "fs__read_text_file") })
}
