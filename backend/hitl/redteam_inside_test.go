package hitl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/backend/core"
)

// Red team: an "inside" condition resolves ".." after following symlinks
// (the kernel's way), but the file servers behind Airlock normalise a path
// lexically first: server-filesystem runs path.resolve() on it and then
// writes to that path. With a link in the project that points deeper into
// it (project/lnk -> project/a/b, as repositories and node_modules have),
// project/lnk/../../x is judged inside the project by the rule, and the
// server writes ../x, beside it. Given a server whose folder is wider than
// the rule's (the README's `server-filesystem ~` with a rule `$.path inside
// ~/project`), an agent writes ~/.bashrc without anyone asked. A path is
// inside only when it is inside both ways.
func TestRedTeamInsideConditionLexicalEscapeThroughDeeperLink(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "project")
	deep := filepath.Join(project, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(deep, filepath.Join(project, "lnk")); err != nil {
		t.Fatal(err)
	}
	p := project + "/lnk/../../.bashrc" // lexically: root/.bashrc
	if lexical := filepath.Clean(p); lexical != filepath.Join(root, ".bashrc") {
		t.Fatalf("test setup: %s cleans to %s", p, lexical)
	}
	r := mkRule("r", 1, true, "", "", "", 0)
	r.Conditions = []Condition{{"$.path", OpInside, project}}
	e := mustEngine(t, r)
	args, _ := json.Marshal(map[string]string{"path": p})
	call := Call{Server: "filesystem", Tool: "write_file", Args: args}
	if e.DecideAt(call.Request(), call.At()).Outcome == core.Allow {
		t.Errorf("%s (which server-filesystem writes as %s) was auto-approved as inside %s", p, filepath.Clean(p), project)
	}
}
