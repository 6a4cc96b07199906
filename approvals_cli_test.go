package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// On `airlock serve` with no browser at hand (over SSH, say), a call that
// waits for a person can be decided only in the UI: there is no
// `airlock approvals` command to list, approve or decline waiting calls,
// though every other screen has one (found by a new-user test: "rules",
// "servers", "agents"… but "airlock approvals list" is an unknown command).
func TestApprovalsCommandExists(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"approvals", "list", "--data-dir", t.TempDir()}, func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
	if err != nil && strings.Contains(err.Error(), "unknown command") {
		t.Errorf("airlock approvals list: %v; want a command that lists the calls waiting for a person (and approve/decline ID)", err)
	}
}
