package authz_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/tokenfile"

	"github.com/glebarez/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
)

// TestExistingSetupKeepsWorking upgrades a data directory of the version
// before agents (a 0004 database and the agent-token file): the old token
// authenticates as the agent "default" and sees every tool, prompt and
// resource it saw before; rotating the file keeps working; deleting the
// agent "default" ends it.
func TestExistingSetupKeepsWorking(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, store.FileName)
	gdb, err := gorm.Open(sqlite.Open(store.DSN(path)), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.MigrateTo(gdb, "0004_client"); err != nil {
		t.Fatal(err)
	}
	if sqlDB, err := gdb.DB(); err == nil {
		sqlDB.Close()
	}
	oldTok, err := tokenfile.AgentToken(dir, true) // what every earlier Airlock made at start
	if err != nil {
		t.Fatal(err)
	}

	db, err := store.Open(path) // the upgrade
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c := newClock()
	svc, err := authz.New(store.NewAgents(db), authz.Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.IdentifyToken(oldTok); core.ErrorCode(err) != core.EUnauthorized {
		t.Fatalf("before adoption the token is unknown: %v", err)
	}
	for i := 0; i < 2; i++ { // idempotent
		if err := svc.AdoptLegacyToken(oldTok); err != nil {
			t.Fatal(err)
		}
	}
	toks, err := svc.Tokens("default")
	if err != nil || len(toks) != 1 || !toks[0].Legacy {
		t.Fatalf("tokens of default after adopting twice: %+v %v", toks, err)
	}

	id, err := svc.IdentifyToken(oldTok)
	if err != nil || id.AgentID != authz.DefaultAgentID || id.AgentName != "default" {
		t.Fatalf("old token: %+v %v", id, err)
	}
	caller, err := svc.Resolve("mcp-1", id, "")
	if err != nil {
		t.Fatal(err)
	}
	if caller.Label() != "default" || caller.Purpose != core.PurposeTask {
		t.Errorf("caller %+v", caller)
	}
	// Whatever servers the user had configured: every kind of request.
	for _, target := range []core.Target{
		toolTarget("filesystem", "read_file"), toolTarget("everything", "echo"), toolTarget("file-write", "file_write"),
		{Kind: core.KindPromptGet, Server: "everything", Name: "simple_prompt"},
		{Kind: core.KindResourceRead, Server: "everything", Name: "test://static/resource/1"},
	} {
		if err := svc.Refusal(&caller, target); err != nil {
			t.Errorf("%+v: %v", target, err)
		}
	}

	// `airlock token --rotate` while Airlock runs: the wiring adopts the new file.
	newTok, err := tokenfile.RotateToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.AdoptLegacyToken(newTok); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.IdentifyToken(oldTok); core.ErrorCode(err) != core.EUnauthorized {
		t.Errorf("the rotated-away token: %v", err)
	}
	if id, err := svc.IdentifyToken(newTok); err != nil || id.AgentID != authz.DefaultAgentID {
		t.Errorf("the new token: %+v %v", id, err)
	}

	// A user who deletes "default" means it: adoption does not bring it back.
	if err := svc.DeleteAgent("default"); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second)
	if err := svc.AdoptLegacyToken(newTok); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.IdentifyToken(newTok); core.ErrorCode(err) != core.EUnauthorized {
		t.Errorf("token of the deleted agent: %v", err)
	}
	if err := svc.AdoptLegacyToken("not-a-token"); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("malformed legacy token: %v", err)
	}
}
