package core

import "encoding/json"

// MetaCaller is the _meta key under which Airlock's dispatcher hands the
// resolved Caller to the handlers of Airlock's own MCP tools (authenticate,
// logout, help, the team tools). The dispatcher sets it on every call it
// forwards in-process and strips it from anything an agent sends, so a
// handler can trust it; a handler that finds none must refuse.
const MetaCaller = "airlock.dev/caller"

// CallerFromMeta returns the Caller stored under MetaCaller in meta. The
// value may be a Caller or *Caller (handed over in-process) or the decoded
// JSON of one (map[string]any, json.RawMessage), because an in-process MCP
// transport may or may not serialise _meta. ok is false when there is no
// caller or it cannot be read.
func CallerFromMeta(meta map[string]any) (Caller, bool) {
	v, found := meta[MetaCaller]
	if !found || v == nil {
		return Caller{}, false
	}
	switch c := v.(type) {
	case Caller:
		return c, true
	case *Caller:
		if c == nil {
			return Caller{}, false
		}
		return *c, true
	case json.RawMessage:
		return decodeCaller(c)
	case []byte:
		return decodeCaller(c)
	case map[string]any:
		b, err := json.Marshal(c)
		if err != nil {
			return Caller{}, false
		}
		return decodeCaller(b)
	}
	return Caller{}, false
}

func decodeCaller(b []byte) (Caller, bool) {
	var c Caller
	if err := json.Unmarshal(b, &c); err != nil {
		return Caller{}, false
	}
	return c, true
}
