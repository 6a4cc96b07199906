package hitl_test

import (
	"fmt"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
)

func ExampleEngine_Explain() {
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	e := hitl.NewEngine()
	_, err := e.Load([]hitl.Rule{
		{ID: "read", ServerID: sp("filesystem"), ToolPattern: sp("read_*"), AutoApprove: true, Priority: 100, CreatedAt: created},
		{ID: "delete", ServerID: sp("filesystem"), ToolPattern: sp("delete_*"), Priority: 100, CreatedAt: created.Add(time.Second)},
		{ID: "global", Priority: 0, CreatedAt: created},
	})
	if err != nil {
		panic(err)
	}
	del := &core.Request{Kind: core.KindToolCall, Server: "filesystem", Name: "delete_file"}
	ex := e.Explain(del, time.Now())
	fmt.Println(ex.Reason)
	for _, s := range ex.Skipped {
		fmt.Printf("skipped %s: %s\n", s.Rule.ID, s.Why)
	}
	read := &core.Request{Kind: core.KindToolCall, Server: "filesystem", Name: "READ_FILE"}
	fmt.Println(e.Decide(read).Reason)
	// Output:
	// rule #2 [delete] (priority 100, server filesystem, pattern delete_*) requires approval
	// skipped read: tool delete_file does not match pattern read_*
	// rule #1 [read] (priority 100, server filesystem, pattern read_*) auto-approves
}
