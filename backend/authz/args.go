package authz

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
)

// UnknownArguments refuses arguments that the tool's schema does not name,
// at every depth the schema describes (objects with properties, and arrays
// of them): a misspelt argument (message for initial_message, assignee for
// assignee_id) was otherwise dropped without a word and the call did less
// than the agent meant. A top-level session_token always passes: any call
// may carry one (seed 000's style; the gateway reads it). Arguments that
// are not valid JSON pass: the tool reports those itself.
func UnknownArguments(tool string, schema, args json.RawMessage) error {
	if len(args) == 0 || len(schema) == 0 {
		return nil
	}
	var s schemaNode
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return nil
	}
	return s.check(tool, "", v)
}

type schemaNode struct {
	Properties map[string]*schemaNode `json:"properties"`
	Items      *schemaNode            `json:"items"`
}

// check looks at v, found at where ("" for the arguments themselves).
func (s *schemaNode) check(tool, where string, v any) error {
	if s == nil {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		if s.Properties == nil {
			return nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p, ok := s.Properties[k]
			if !ok && where == "" && k == sessionTokenArg {
				continue
			}
			if !ok {
				known := make([]string, 0, len(s.Properties))
				for name := range s.Properties {
					known = append(known, name)
				}
				slices.Sort(known)
				in := tool
				if where != "" {
					in = tool + " " + where
				}
				return (&core.Error{Code: core.EInvalid, Message: fmt.Sprintf("%s has no argument %q", in, k)}).
					WithHint("the arguments it takes: " + strings.Join(known, ", "))
			}
			at := k
			if where != "" {
				at = where + "." + k
			}
			if err := p.check(tool, at, x[k]); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := s.Items.check(tool, fmt.Sprintf("%s[%d]", where, i), e); err != nil {
				return err
			}
		}
	}
	return nil
}

// sessionTokenArg is the argument a call may carry its session token in.
const sessionTokenArg = "session_token"
