package api

import (
	"crypto/rand"
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
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/events"
)

// Security is the guard on every HTTP endpoint: loopback Host names only
// (DNS-rebinding protection), no cross-site Origin, and a token.
//
// The UI's credential is never a cookie. Browsers send a host's cookies to
// every port of it (RFC 6265 §8.5), so a cookie of the signed-in UI would
// also go to a dev server an agent started on 127.0.0.1 and asked the user
// to preview, whose process could then approve its own agent's calls with
// curl (found by a red-team review: the cookie was the UI token itself).
// The page keeps the token in its origin's localStorage, which browsers do
// keep apart by port, and sends it as a bearer header; its event stream,
// which cannot send headers, opens with a ticket the page gets that way.
type Security struct {
	uiHash [32]byte
	cookie string // the name of the cookie older versions set, to remove it
	// AllowedHosts are extra Host names accepted (for a non-loopback --addr).
	AllowedHosts []string

	ticketMu sync.Mutex
	tickets  map[[32]byte]time.Time // hashes of unused event-stream tickets, with their expiry
}

// NewSecurity returns a guard accepting uiToken for the UI of the Airlock
// listening on addr.
func NewSecurity(uiToken, addr string) *Security {
	return &Security{uiHash: sha256.Sum256([]byte(uiToken)), cookie: UICookie(addr), tickets: map[[32]byte]time.Time{}}
}

// UICookie is the name of the cookie that carried the UI token in earlier
// versions (one per port). It is no credential any more: a visit that still
// sends it gets it removed.
func UICookie(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return "airlock_ui_" + port
}

// Event-stream tickets: single use, short-lived, and few at a time (a page
// asks for one each time it opens its stream).
const (
	ticketTTL        = time.Minute
	maxUnusedTickets = 256
)

// newTicket makes a ticket that opens the event stream once.
func (s *Security) newTicket() string {
	t := rand.Text()
	now := time.Now()
	s.ticketMu.Lock()
	defer s.ticketMu.Unlock()
	for h, exp := range s.tickets {
		if now.After(exp) {
			delete(s.tickets, h)
		}
	}
	if len(s.tickets) >= maxUnusedTickets {
		// A page that keeps asking without opening: the oldest go first.
		var oldest [32]byte
		first := true
		for h, exp := range s.tickets {
			if first || exp.Before(s.tickets[oldest]) {
				oldest, first = h, false
			}
		}
		delete(s.tickets, oldest)
	}
	s.tickets[sha256.Sum256([]byte(t))] = now.Add(ticketTTL)
	return t
}

// useTicket reports whether t is an unused, unexpired ticket, and uses it.
// The map is keyed by the hash, so the lookup reveals nothing by timing.
func (s *Security) useTicket(t string) bool {
	if t == "" {
		return false
	}
	h := sha256.Sum256([]byte(t))
	s.ticketMu.Lock()
	defer s.ticketMu.Unlock()
	exp, ok := s.tickets[h]
	delete(s.tickets, h)
	return ok && time.Now().Before(exp)
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

// requireUI lets through requests carrying the UI token as a bearer
// header (never a cookie: see Security).
func (s *Security) requireUI(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !s.uiTokenOK(tok) {
			writeError(w, errNoUIToken())
			return
		}
		next.ServeHTTP(w, r)
	})
}

func errNoUIToken() *core.Error {
	return core.Errorf(core.EUnauthorized, "missing or invalid UI token").
		WithHint("open the URL printed by `airlock serve`")
}

// ticketHandler answers POST /api/events/ticket (behind requireUI) with a
// ticket that opens the event stream once.
func (s *Security) ticketHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeErrorStatus(w, http.StatusMethodNotAllowed, core.Errorf(core.EInvalid, "use POST"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(map[string]string{"ticket": s.newTicket()})
	})
}

// requireTicket lets through an event stream opened with a ticket (an
// EventSource cannot send headers), or with the bearer header (programs).
func (s *Security) requireTicket(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !s.uiTokenOK(tok) && !s.useTicket(r.URL.Query().Get("ticket")) {
			writeError(w, errNoUIToken())
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

// linkTokensOK reports whether every token a page could read from the
// query rawQuery is this run's: the page keeps the one its link carries in
// place of the one it had. The query is read as browsers read it (pairs
// split at & and ;, names and values unescaped, one that cannot be kept
// as it is), not as Go's parser, which drops a pair it cannot decode
// (found by a review: /?token=%ZZ served the page, which kept "%ZZ", so
// any web page could sign the user out).
func (s *Security) linkTokensOK(rawQuery string) bool {
	for _, pair := range strings.FieldsFunc(rawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		k, v, _ := strings.Cut(pair, "=")
		if name, err := url.QueryUnescape(k); err != nil || name != "token" {
			if err == nil || !strings.Contains(strings.ToLower(k), "token") {
				continue
			}
		}
		tok, err := url.QueryUnescape(v)
		if err != nil || !s.uiTokenOK(tok) {
			return false
		}
	}
	return true
}

// UIHandler serves the Svelte UI from dist. The page of a visit to
// /?token=T keeps T and asks the API with it (see Security).
func (s *Security) UIHandler(dist fs.FS) http.Handler {
	files := http.FileServerFS(dist)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The signed-in UI approves calls: no other page may frame it (a
		// page on another port of 127.0.0.1 counts as the same site).
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		if _, err := r.Cookie(s.cookie); err == nil {
			// An earlier version's credential: no longer read, and gone.
			http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
		}
		// The files are the UI's code, no secret: they are served to
		// anyone, and the page asks the API with the token it keeps
		// (Security). A link with a wrong token (an earlier run's) says so
		// at once; a right one is kept by the page, which takes it out of
		// the address bar.
		if !s.linkTokensOK(r.URL.RawQuery) {
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
	mux.Handle("/api/events", rt.Security.requireTicket(EventsHandler(rt.Hub)))
	mux.Handle("/api/events/ticket", rt.Security.requireUI(rt.Security.ticketHandler()))
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
