package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/events"
)

// Security is the guard on every HTTP endpoint: loopback Host names only
// (DNS-rebinding protection), no cross-site Origin, and a token.
type Security struct {
	uiHash [32]byte
	cookie string
	// AllowedHosts are extra Host names accepted (for a non-loopback --addr).
	AllowedHosts []string
}

// NewSecurity returns a guard accepting uiToken for the UI of the Airlock
// listening on addr.
func NewSecurity(uiToken, addr string) *Security {
	return &Security{uiHash: sha256.Sum256([]byte(uiToken)), cookie: UICookie(addr)}
}

// UICookie is the name of the cookie that carries the UI token after the
// first visit. Browsers share cookies across the ports of one host, so the
// name carries the port: two Airlocks on one machine keep their own.
func UICookie(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return "airlock_ui_" + port
}

func (s *Security) uiTokenOK(tok string) bool {
	h := sha256.Sum256([]byte(tok))
	return tok != "" && subtle.ConstantTimeCompare(h[:], s.uiHash[:]) == 1
}

func isLoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Security) hostOK(host string) bool {
	if isLoopbackHost(host) {
		return true
	}
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	for _, a := range s.AllowedHosts {
		if strings.EqualFold(a, h) {
			return true
		}
	}
	return false
}

// originOK accepts requests without an Origin (agents, CLIs) and browser
// requests from the page's own origin only.
func (s *Security) originOK(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	// The Wails webview's own origin (wails://wails; no web page can
	// send another scheme, yet only that one is let in).
	if u.Scheme == "wails" {
		return u.Host == "wails" || u.Host == "wails.localhost"
	}
	return strings.EqualFold(u.Host, r.Host) && s.hostOK(u.Host)
}

// Guard wraps next with the Host and Origin checks.
func (s *Security) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostOK(r.Host) {
			writeError(w, core.Errorf(core.EForbidden, "host %q is not allowed (DNS-rebinding protection)", r.Host))
			return
		}
		if !s.originOK(r) {
			writeError(w, core.Errorf(core.EForbidden, "origin %q is not allowed", r.Header.Get("Origin")))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireUI lets through requests carrying the UI token as a cookie or a
// bearer header.
func (s *Security) requireUI(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := ""
		if c, err := r.Cookie(s.cookie); err == nil {
			tok = c.Value
		} else if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			tok = b
		}
		if !s.uiTokenOK(tok) {
			writeError(w, core.Errorf(core.EUnauthorized, "missing or invalid UI token").
				WithHint("open the URL printed by `airlock serve`"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func statusOf(code string) int {
	switch code {
	case core.EInvalid:
		return http.StatusBadRequest
	case core.ENotFound:
		return http.StatusNotFound
	case core.EConflict:
		return http.StatusConflict
	case core.EUnauthorized:
		return http.StatusUnauthorized
	case core.EForbidden:
		return http.StatusForbidden
	case core.ETooLarge:
		return http.StatusRequestEntityTooLarge
	case core.EUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// ToError turns any error into the *core.Error the UI shows.
func ToError(err error) *core.Error {
	var e *core.Error
	if errors.As(err, &e) {
		return e
	}
	return &core.Error{Code: core.EInternal, Message: err.Error()}
}

// writeMethodError writes the error a method returned. Its code is the
// product's reason, not the HTTP layer's: an "unauthorized" refusal of a
// team rule is 403 (401 means the UI token is gone, and the UI signs out),
// a refusal such as invalid_status_transition is a 4xx, and only a failure
// is 500.
func writeMethodError(w http.ResponseWriter, err error) {
	e := ToError(err)
	status := statusOf(e.Code)
	switch {
	case e.Code == core.EUnauthorized:
		status = http.StatusForbidden
	case e.Code == core.EInternal:
		status = http.StatusInternalServerError
	case status != http.StatusInternalServerError:
	case strings.HasSuffix(e.Code, "_not_found"):
		status = http.StatusNotFound
	default:
		status = http.StatusConflict // a refusal with its own code: the request is valid, the state forbids it
	}
	writeErrorStatus(w, status, e)
}

func writeError(w http.ResponseWriter, err error) {
	e := ToError(err)
	writeErrorStatus(w, statusOf(e.Code), e)
}

func writeErrorStatus(w http.ResponseWriter, status int, e *core.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(e)
}

// maxRPCBody bounds a UI request (an imported config or rules file fits).
const maxRPCBody = 8 << 20

var errorType = reflect.TypeFor[error]()

// RPCHandler serves POST /api/rpc/<Area>.<Method>: the body is a JSON
// array of the method's arguments, the reply its result or a
// {code,message,hint} error.
func RPCHandler(areas []Area) http.Handler {
	byName := map[string]reflect.Value{}
	for _, a := range areas {
		byName[a.Name] = reflect.ValueOf(a.Value)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeError(w, core.Errorf(core.EInvalid, "use POST"))
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/api/rpc/")
		area, method, _ := strings.Cut(name, ".")
		v, ok := byName[area]
		var m reflect.Value
		if ok && method != "" && isExported(method) {
			m = v.MethodByName(method)
		}
		if !m.IsValid() {
			writeError(w, core.Errorf(core.ENotFound, "no method %q (methods are Area.Method)", name))
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxRPCBody+1))
		if err != nil {
			writeError(w, core.Errorf(core.EInvalid, "read body: %v", err))
			return
		}
		if len(body) > maxRPCBody {
			writeError(w, core.Errorf(core.ETooLarge, "request over %d bytes", maxRPCBody))
			return
		}
		var raw []json.RawMessage
		if len(strings.TrimSpace(string(body))) > 0 {
			if err := json.Unmarshal(body, &raw); err != nil {
				writeError(w, core.Errorf(core.EInvalid, "body must be a JSON array of arguments: %v", err))
				return
			}
		}
		mt := m.Type()
		if len(raw) > mt.NumIn() {
			writeError(w, core.Errorf(core.EInvalid, "%s takes %d arguments, got %d", name, mt.NumIn(), len(raw)))
			return
		}
		args := make([]reflect.Value, mt.NumIn())
		for i := range args {
			p := reflect.New(mt.In(i))
			if i < len(raw) {
				if err := json.Unmarshal(raw[i], p.Interface()); err != nil {
					writeError(w, core.Errorf(core.EInvalid, "argument %d of %s: %v", i+1, name, err))
					return
				}
			}
			args[i] = p.Elem()
		}
		out := m.Call(args)
		var result any
		for _, o := range out {
			if o.Type() == errorType {
				if !o.IsNil() {
					writeMethodError(w, o.Interface().(error))
					return
				}
				continue
			}
			result = o.Interface()
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(result)
	})
}

func isExported(name string) bool { return name[0] >= 'A' && name[0] <= 'Z' }

// EventsHandler streams hub events as server-sent events. The query
// parameter topics (comma-separated, e.g. topics=approval,activity) limits
// the stream to what a screen shows. A stream that fell behind gets
// events:lagged, and its page reloads what it shows.
func EventsHandler(h *events.Hub) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fl, ok := w.(http.Flusher)
		if !ok {
			writeError(w, core.Errorf(core.EInternal, "streaming unsupported"))
			return
		}
		var topics []string
		if t := r.URL.Query().Get("topics"); t != "" {
			topics = strings.Split(t, ",")
		}
		sub := h.Subscribe(topics)
		defer sub.Close()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, ": connected\n\n")
		fl.Flush()
		ping := time.NewTicker(20 * time.Second)
		defer ping.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-ping.C:
				fmt.Fprint(w, ": ping\n\n")
			case ev := <-sub.C():
				if data, err := ev.JSON(); err == nil { // else nothing the UI could read
					fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Name, data)
				}
				if len(sub.C()) == 0 {
					if n := sub.Lagged(); n > 0 {
						fmt.Fprintf(w, "event: %s\ndata: {\"dropped\":%d}\n\n", events.EventLagged, n)
					}
				}
			}
			fl.Flush()
		}
	})
}

const loginPage = `<!doctype html><meta charset="utf-8"><title>Airlock</title>
<body style="font:15px system-ui;margin:15vh auto;max-width:34em;color:#222">
<h1>Airlock</h1><p>This page needs the link that <code>airlock serve</code> printed when it started
(it carries the UI token of this run; a link from an earlier run no longer works). Open that link instead.</p></body>`

// UIHandler serves the Svelte UI from dist. A visit to /?token=T with the
// right token sets the UI cookie and redirects to a clean URL.
func (s *Security) UIHandler(dist fs.FS) http.Handler {
	files := http.FileServerFS(dist)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The signed-in UI approves calls: no other page may frame it (a
		// page on another port of 127.0.0.1 counts as the same site).
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		if tok := r.URL.Query().Get("token"); tok != "" {
			if !s.uiTokenOK(tok) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, loginPage)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		if c, err := r.Cookie(s.cookie); err != nil || !s.uiTokenOK(c.Value) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, loginPage)
			return
		}
		files.ServeHTTP(w, r)
	})
}

// Routes are every HTTP endpoint of Airlock, in one place.
type Routes struct {
	Security *Security
	API      *Facade
	Hub      *events.Hub
	MCP      http.Handler // Streamable HTTP, agent token checked inside
	SSE      http.Handler // legacy SSE, agent token checked inside
	UI       fs.FS        // nil: no UI (desktop mode serves it through Wails)
	Instance http.Handler // POST /instance/*, its own token checked inside
	Debug    http.Handler // GET /debug/vars and /debug/pprof/ (runtime counters and profiles for benchmarks), loopback and an agent token checked inside
}

// Handler assembles the routes behind the Host/Origin guard.
func (rt Routes) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", rt.MCP)
	mux.Handle("/sse", rt.SSE)
	mux.Handle("/api/rpc/", rt.Security.requireUI(RPCHandler(rt.API.Areas())))
	mux.Handle("/api/events", rt.Security.requireUI(EventsHandler(rt.Hub)))
	if rt.Instance != nil {
		mux.Handle("/instance/", rt.Instance)
	}
	if rt.Debug != nil {
		mux.Handle("/debug/", rt.Debug)
	}
	if rt.UI != nil {
		mux.Handle("/", rt.Security.UIHandler(rt.UI))
	}
	return rt.Security.Guard(mux)
}
