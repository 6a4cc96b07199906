package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

// Airlock patch: SEP-1330's titled multi-select (items of "type": "string"
// with "anyOf" of const and title) is a valid elicitation schema, as the
// specification's TitledMultiSelectEnumSchema and the TypeScript SDK say;
// upstream refused it as an untitled enum without "enum".
func TestValidateElicitTitledMultiSelect(t *testing.T) {
	for _, tc := range []struct {
		items   string
		wantErr string
	}{
		{items: `{"type":"string","anyOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]}`},
		{items: `{"anyOf":[{"const":"r","title":"Red"}]}`},
		{items: `{"type":"string","enum":["r","g"]}`},
		{items: `{"type":"string"}`, wantErr: "must specify enum"},
		{items: `{"type":"string","anyOf":[{"const":"r"}]}`, wantErr: "title is required"},
		{items: `{"type":"string","anyOf":[{"title":"Red"}]}`, wantErr: "const is required"},
		{items: `{"type":"string","anyOf":[{"const":"","title":"Red"}]}`, wantErr: "const cannot be empty"},
	} {
		var schema map[string]any
		if err := json.Unmarshal([]byte(`{"type":"object","properties":{"colors":{"type":"array","items":`+tc.items+`}}}`), &schema); err != nil {
			t.Fatal(err)
		}
		_, err := validateElicitSchema(schema)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("items %s: %v, want it accepted", tc.items, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("items %s: %v, want an error with %q", tc.items, err, tc.wantErr)
		}
	}
}
