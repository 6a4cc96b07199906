package gateway

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// plainErrors passes a response through, except an error the SDK answers
// with a line of plain text (http.Error: a malformed body, a wrong
// Content-Type or Accept, an unknown session): that becomes JSON with a
// reason code and a hint, in the shape of Airlock's own refusals, and a
// JSON-RPC error without an id (the request's could not be read), as MCP's
// Streamable HTTP transport asks (found by an interop test: plain text, no
// reason code, no -32700 for a body that is not JSON).
type plainErrors struct {
	http.ResponseWriter
	sse    bool // the legacy SSE transport's endpoint
	status int  // the status of a plain-text error, held until its text comes
	done   bool // one error was rewritten: the rest passes as it is
}

func (w *plainErrors) WriteHeader(code int) {
	if code >= 400 && !w.done && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *plainErrors) Write(b []byte) (int, error) {
	if w.status == 0 {
		return w.ResponseWriter.Write(b)
	}
	w.rewrite(strings.TrimSpace(string(b)))
	return len(b), nil
}

// finish writes a held error that got no text.
func (w *plainErrors) finish() {
	if w.status != 0 {
		w.rewrite(http.StatusText(w.status))
	}
}

func (w *plainErrors) rewrite(text string) {
	status := w.status
	w.status, w.done = 0, true
	e, code := sdkError(status, text, w.sse)
	body := map[string]any{"code": e.Code, "message": e.Message, "jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": code, "message": "Airlock: " + e.Message + " [" + e.Code + "]", "data": e}}
	if e.Hint != "" {
		body["hint"] = e.Hint
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("X-Content-Type-Options")
	w.ResponseWriter.WriteHeader(status)
	json.NewEncoder(w.ResponseWriter).Encode(body)
}

func (w *plainErrors) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *plainErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// sdkError is the reason code, hint and JSON-RPC code of an error the SDK
// answered over HTTP with status and text.
func sdkError(status int, text string, sse bool) (*core.Error, int64) {
	e := &core.Error{Code: core.EInvalid, Message: text}
	code := int64(jsonrpc.CodeInvalidRequest)
	switch {
	case status == http.StatusBadRequest && (strings.HasPrefix(text, "malformed payload") || strings.HasPrefix(text, "failed to parse body")):
		if !strings.Contains(text, "version tag") { // JSON, but not JSON-RPC 2.0: Invalid Request
			code = jsonrpc.CodeParseError
		}
		e.Hint = `send one JSON-RPC 2.0 message ({"jsonrpc":"2.0", ...}; before 2025-06-18 also a batch) as JSON`
	case status == http.StatusNotFound:
		e.Code = core.ENotFound
		e.Hint = "the session has ended: initialize a new one (a POST without Mcp-Session-Id)"
		if sse {
			e.Hint = "the session has ended: open a new one (GET /sse)"
		}
	case status == http.StatusUnsupportedMediaType:
		e.Hint = "send the message with Content-Type: application/json"
	case status == http.StatusMethodNotAllowed:
		e.Hint = "POST JSON-RPC messages; GET opens a session's event stream, DELETE ends a session"
	case status == http.StatusConflict:
		e.Code = core.EConflict
	case status == http.StatusForbidden:
		e.Code = core.EForbidden
	case status == http.StatusRequestEntityTooLarge:
		e.Code = ERequestTooLarge
		e.Hint = "send less at once (a file in parts, a shorter argument)"
	case status >= 500:
		e.Code = core.EInternal
		code = jsonrpc.CodeInternalError
	}
	return e, code
}
