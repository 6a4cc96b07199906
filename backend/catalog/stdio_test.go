package catalog

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStdoutTapBadLine(t *testing.T) {
	valid := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"nothing read", nil, ""},
		{"only messages", []string{valid, `[` + strings.TrimSpace(valid) + `]` + "\n"}, ""},
		{"a log line first", []string{"starting up\n", valid}, "starting up"},
		{"after messages", []string{valid, valid + "  oops\r\n" + valid}, "oops"},
		{"JSON that is not JSON-RPC", []string{valid, `{"hello":1}` + "\n"}, `{"hello":1}`},
		{"a line whose start was dropped is skipped", []string{strings.Repeat("x", tapSize), "\nbad\n"}, "bad"},
		{"a bad line split across reads", []string{valid + "not ", "json\n"}, "not json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tap := &stdoutTap{r: io.NopCloser(strings.NewReader(strings.Join(tc.writes, "")))}
			for _, w := range tc.writes {
				// Read as the writes came, so that the tap sees each chunk.
				if _, err := io.ReadFull(tap, make([]byte, len(w))); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tc.want, string(tap.badLine())); diff != "" {
				t.Errorf("badLine (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBadOutputErrorQuote(t *testing.T) {
	sdk := errors.New("invalid character 'x' looking for beginning of value")
	tests := []struct {
		name string
		line string
		want string
	}{
		{"no line found", "", "wrote something on stdout that is not MCP (JSON-RPC): invalid character 'x' looking for beginning of value"},
		{"short", "hello", `wrote a line on stdout that is not MCP (JSON-RPC): "hello"`},
		{"cut", strings.Repeat("a", 100), `wrote a line on stdout that is not MCP (JSON-RPC): "` + strings.Repeat("a", quoteMax) + `"…`},
		{"cut inside a rune", strings.Repeat("a", quoteMax-1) + "é", `wrote a line on stdout that is not MCP (JSON-RPC): "` + strings.Repeat("a", quoteMax-1) + `"…`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := &badOutputError{line: []byte(tc.line), err: sdk}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("Error (-want +got):\n%s", diff)
			}
			if !errors.Is(err, sdk) {
				t.Error("the SDK's error is not in the chain")
			}
		})
	}
}
