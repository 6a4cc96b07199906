package core

import "encoding/json"

// MetaCaller is the _meta key under which Airlock tells its own in-process
// servers (its tools, the built-in file and shell servers) who is calling.
// The dispatcher sets it on every request to an in-process server; nothing
// an agent sends is forwarded under it, and downstream servers never get it.
const MetaCaller = "airlock.dev/caller"

// CallerFromMeta reads the caller the dispatcher put in a request's _meta.
func CallerFromMeta(meta map[string]any) (Caller, bool) {
	v, ok := meta[MetaCaller]
	if !ok || v == nil {
		return Caller{}, false
	}
	var c Caller
	switch v := v.(type) {
	case Caller:
		return v, true
	case *Caller:
		return *v, v != nil
	default:
		b, err := json.Marshal(v)
		if err != nil || json.Unmarshal(b, &c) != nil {
			return Caller{}, false
		}
	}
	return c, true
}
