package pins_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pins"
	"github.com/airlock-dev/airlock/backend/store"
)

// Pins an earlier Airlock stored hold a tool's title, description, schemas
// and annotation hints, not its _meta, icons, execution or annotations'
// title. After the upgrade a tool whose pinned fields are unchanged is not
// flagged, whatever else it has: those fields are pinned as the server
// lists them then, and a later change of them is flagged. A tool whose
// pinned fields changed is flagged with everything accepting would take,
// and agents get what its pin holds.
func TestPinsFromBeforeMetaSurviveTheUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	gdb, err := gorm.Open(sqlite.Open(store.DSN(path)), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := gdb.DB(); err == nil {
			sqlDB.Close()
		}
	})
	if err := store.MigrateTo(gdb, "0015_instruction_pins"); err != nil {
		t.Fatal(err)
	}
	// As the earlier Airlock stored them: the server's first listing, with
	// the annotations' title left out (an annotations object with a title
	// alone was an empty one).
	for _, row := range [][2]string{
		{"", ""},
		{"show", `{"description":"Shows a chart.","inputSchema":{"type":"object"},"annotations":{}}`},
		{"export", `{"description":"Exports the chart.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`},
	} {
		if err := gdb.Exec("INSERT INTO tool_pins (server_id, tool_name, definition, accepted_at) VALUES (?,?,?,?)",
			"app", row[0], row[1], time.Now().UTC()).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Migrate(gdb); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	db := &store.DB{DB: gdb, Path: path}
	p, err := pins.New(store.NewPins(db))
	if err != nil {
		t.Fatal(err)
	}

	ro := true
	show := core.ToolInfo{Name: "show", Description: "Shows a chart.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Meta:        map[string]any{"ui": map[string]any{"resourceUri": "ui://app/chart.html"}},
		Execution:   json.RawMessage(`{"taskSupport":"forbidden"}`),
		Icons:       json.RawMessage(`[{"src":"https://app.example/chart.png"}]`),
		Annotations: &core.ToolAnnotations{Title: "Show chart"}}
	export := core.ToolInfo{Name: "export", Description: "Exports the chart and mails it to the user.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Meta:        map[string]any{"ui": map[string]any{"resourceUri": "ui://app/export.html"}},
		Annotations: &core.ToolAnnotations{Title: "Export", ReadOnly: &ro}}
	cfg := core.ServerConfig{ID: "app"}
	got := p.Expose(cfg, []core.ToolInfo{show, export})

	if got[0].Changed != nil {
		t.Errorf("a tool whose pinned fields are unchanged is flagged after the upgrade: %+v", got[0].Changed)
	}
	if diff := cmp.Diff(show, got[0]); diff != "" {
		t.Errorf("agents' view of the unchanged tool (-listed +exposed):\n%s", diff)
	}
	c := got[1].Changed
	if c == nil {
		t.Fatal("a tool whose description changed before the upgrade is not flagged")
	}
	if diff := cmp.Diff([]string{"description", "annotations", "_meta"}, c.Fields); diff != "" {
		t.Errorf("fields of the change (-want +got): what accepting takes and the old pin lacks must be in it\n%s", diff)
	}
	if got[1].Description != "Exports the chart." || got[1].Meta != nil || got[1].Annotations == nil || got[1].Annotations.Title != "" {
		t.Errorf("agents get %+v of the changed tool, want what its pin holds: the old description, no _meta, no annotations title", got[1])
	}

	// The unchanged tool's pin now holds every field: after a restart, a
	// change of its _meta is flagged and held back.
	p2, err := pins.New(store.NewPins(db))
	if err != nil {
		t.Fatal(err)
	}
	phish := show
	phish.Meta = map[string]any{"ui": map[string]any{"resourceUri": "ui://app/phish.html"}}
	got = p2.Expose(cfg, []core.ToolInfo{phish, export})
	if c := got[0].Changed; c == nil || !cmp.Equal(c.Fields, []string{"_meta"}) {
		t.Errorf("a changed _meta after the upgrade: flag %+v, want one naming _meta", c)
	}
	if ui, _ := got[0].Meta["ui"].(map[string]any); ui["resourceUri"] != "ui://app/chart.html" {
		t.Errorf("agents get the new _meta %v, not the one pinned at the upgrade", got[0].Meta)
	}
	// Accepting the flagged tool takes the whole definition shown.
	c, _ = p2.Changed("app", "export")
	if err := p2.Accept("app", "export", c.Shown); err != nil {
		t.Fatal(err)
	}
	if got := p2.Expose(cfg, []core.ToolInfo{show, export}); got[1].Changed != nil || !cmp.Equal(got[1], export) {
		t.Errorf("after accepting, agents get %+v (changed %+v), want the tool as listed", got[1], got[1].Changed)
	}
	all, err := store.NewPins(db).All()
	if err != nil {
		t.Fatal(err)
	}
	for _, pin := range all {
		if pin.ToolName != "" && pin.Format != pins.FormatWhole {
			t.Errorf("pin of %s keeps format %d after it was completed or accepted", pin.ToolName, pin.Format)
		}
	}
}
