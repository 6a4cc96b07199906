package gateway_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenResults are tool results of every content kind a tool can return,
// with what a marshaller can get wrong: HTML characters, line separators,
// escapes, invalid UTF-8, meta and annotations, no or empty content.
func goldenResults() map[string]*mcp.CallToolResult {
	text := "<a href=\"x&y\">\u2028\u2029\t\\ é 😀 \xff</a>\n"
	size := int64(42)
	ann := &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.5, LastModified: "2026-11-26T00:00:00Z"}
	meta := mcp.Meta{"k<": "v&", "n": 1.5, "raw": json.RawMessage(`{ "a" : [1, 2] }`)}
	return map[string]*mcp.CallToolResult{
		"text":        {Content: []mcp.Content{&mcp.TextContent{Text: text}}},
		"text-meta":   {Content: []mcp.Content{&mcp.TextContent{Text: text, Meta: meta, Annotations: ann}}, Meta: meta},
		"empty-text":  {Content: []mcp.Content{&mcp.TextContent{}}},
		"nil-content": {},
		"no-content":  {Content: []mcp.Content{}},
		"image-audio": {Content: []mcp.Content{
			&mcp.ImageContent{Data: []byte{0, 1, '<'}, MIMEType: "image/png", Meta: meta, Annotations: ann},
			&mcp.ImageContent{},
			&mcp.AudioContent{Data: []byte("wav"), MIMEType: "audio/wav"},
		}},
		"resources": {Content: []mcp.Content{
			&mcp.ResourceLink{URI: "file:///a<b>", Name: "a", Title: "t", Description: text, MIMEType: "text/plain", Size: &size, Meta: meta, Annotations: ann},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///c", MIMEType: "text/plain", Text: text}, Meta: meta, Annotations: ann},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///d", Blob: []byte{1, 2, 3}}},
			&mcp.EmbeddedResource{},
		}},
		"structured": {Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: map[string]any{"text": text, "n": 1.5, "list": []any{"<", nil}}},
		"structured-raw": {Content: []mcp.Content{&mcp.TextContent{Text: "x"}},
			StructuredContent: json.RawMessage("{ \"text\" : \"<&>\" }")},
		"error": {Content: []mcp.Content{&mcp.TextContent{Text: "failed: <x>"}}, IsError: true},
		"every-field": {Meta: mcp.Meta{"m": 1}, Content: []mcp.Content{&mcp.TextContent{Text: "t"}}, StructuredContent: map[string]any{"s": 1},
			IsError: true, RequestState: "st", InputRequests: mcp.InputRequestMap{"r": &mcp.ListRootsParams{}}},
		"input-requests": {Content: []mcp.Content{&mcp.TextContent{Text: "need <input>"}}, RequestState: "state<&>",
			InputRequests: mcp.InputRequestMap{"r1": &mcp.ElicitParams{Message: "name?"}, "r2": &mcp.ListRootsParams{}}},
	}
}

// The JSON of tool results is byte for byte what SDK v1.8.0 made of them
// (testdata/callToolResult.golden.json was written with the unpatched
// marshalling; third_party/go-sdk encodes content blocks inline instead of
// through each block's MarshalJSON, see PATCHES.md there).
func TestCallToolResultJSONAsUpstream(t *testing.T) {
	got := map[string]string{}
	for name, r := range goldenResults() {
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got[name] = string(data)
	}
	path := filepath.Join("testdata", "callToolResult.golden.json")
	if *updateGolden {
		data, _ := json.MarshalIndent(got, "", "  ")
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Errorf("%d golden results, %d made", len(want), len(got))
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s:\n got %s\nwant %s", name, got[name], w)
		}
		if !strings.Contains(w, `"content":`) {
			t.Errorf("%s: golden result has no content field: %s", name, w)
		}
	}
}
