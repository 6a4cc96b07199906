package authz_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

func TestUnknownArguments(t *testing.T) {
	item := authz.Schema(authz.Param{Name: "title", Type: "string"}, authz.Param{Name: "assignee_id", Type: "string"})
	schema := authz.Schema(
		authz.Param{Name: "project_id", Type: "string"},
		authz.Param{Name: "tasks", Type: "array", Items: item},
	)
	for _, tt := range []struct {
		args, want, takes string // want: "" for no error, else a part of the message
	}{
		{`{"project_id":"p","tasks":[{"title":"a","assignee_id":"x"}]}`, "", ""},
		{``, "", ""},
		{`not json`, "", ""},
		{`{"project_id":"p","projectid":"q"}`, `create_tasks_batch has no argument "projectid"`, "project_id, tasks"},
		{`{"tasks":[{"title":"a"},{"title":"b","assignee":"alice"}]}`, `create_tasks_batch tasks[1] has no argument "assignee"`, "assignee_id, title"},
		// Any call may carry its session token (seed 000), but only at the top.
		{`{"project_id":"p","session_token":"als_x"}`, "", ""},
		{`{"tasks":[{"title":"a","session_token":"als_x"}]}`, `tasks[0] has no argument "session_token"`, "assignee_id, title"},
	} {
		err := authz.UnknownArguments("create_tasks_batch", schema, json.RawMessage(tt.args))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", tt.args, err)
		case tt.want != "" && (core.ErrorCode(err) != core.EInvalid || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.takes)):
			t.Errorf("%s: %v, want %s naming %q and the arguments it takes", tt.args, err, core.EInvalid, tt.want)
		}
	}
}
