// Package events fans backend events out to the UI: the event streams of
// browser UIs and the desktop window. Emitting never blocks the emitter — a
// request waiting on an approval or writing its audit record must never
// wait for a slow window or a stalled browser — and a receiver that fell
// behind is told so (EventLagged), so it reloads instead of silently
// showing a stale screen. Receivers choose topics (the part of an event's
// name before the colon), so a screen gets only what it shows.
//
// It imports core only.
package events

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/airlock-dev/airlock/backend/core"
)

// EventLagged tells a receiver that events were dropped because it fell
// behind: it must reload what it shows. Payload: Lagged.
const EventLagged = "events:lagged"

// Lagged is the payload of EventLagged.
type Lagged struct {
	Dropped int `json:"dropped"`
}

// Event is one event. Its JSON is encoded at most once, by the first
// stream that writes it: receivers inside the process (the runner follows
// activity) read Payload, and an event only they receive is never encoded.
type Event struct {
	Name    string
	Payload any
	enc     *encoding
}

type encoding struct {
	once sync.Once
	data []byte
	err  error
}

// JSON is the payload as JSON.
func (e Event) JSON() ([]byte, error) {
	if e.enc == nil {
		return json.Marshal(e.Payload)
	}
	e.enc.once.Do(func() { e.enc.data, e.enc.err = json.Marshal(e.Payload) })
	return e.enc.data, e.enc.err
}

// Topic is the topic of an event name: the part before the colon
// ("approval" for "approval:requested").
func Topic(name string) string {
	t, _, _ := strings.Cut(name, ":")
	return t
}

// QueueSize is how many events a receiver may fall behind before it is
// told to reload.
const QueueSize = 512

// Hub fans events out. The zero value is not usable; use NewHub.
type Hub struct {
	mu   sync.Mutex
	subs map[*Sub]struct{}
}

var _ core.EventSink = (*Hub)(nil)

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{subs: map[*Sub]struct{}{}} }

// Sub is one receiver: a bounded queue of the events of its topics.
type Sub struct {
	hub    *Hub
	topics map[string]bool // nil: every topic
	ch     chan Event

	mu      sync.Mutex
	dropped int
}

// Subscribe returns a receiver of the events of topics (all of them when
// topics is empty). Close it when done.
func (h *Hub) Subscribe(topics []string) *Sub {
	s := &Sub{hub: h, ch: make(chan Event, QueueSize)}
	for _, t := range topics {
		if t = strings.TrimSpace(t); t != "" {
			if s.topics == nil {
				s.topics = map[string]bool{}
			}
			s.topics[t] = true
		}
	}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	return s
}

// C is the receiver's queue.
func (s *Sub) C() <-chan Event { return s.ch }

// Lagged returns how many events were dropped since the last call, and
// resets the count. A receiver checks it after draining its queue and, when
// it is not zero, tells its client to reload.
func (s *Sub) Lagged() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.dropped
	s.dropped = 0
	return n
}

// Close unsubscribes.
func (s *Sub) Close() {
	s.hub.mu.Lock()
	delete(s.hub.subs, s)
	s.hub.mu.Unlock()
}

func (s *Sub) wants(topic string) bool { return s.topics == nil || s.topics[topic] }

// Emit sends an event to every receiver of its topic. It never blocks: a
// receiver whose queue is full loses the event and is marked lagged.
func (h *Hub) Emit(name string, payload any) {
	if !h.Wants(name) {
		return // nobody would read it: do not encode it
	}
	ev := Event{Name: name, Payload: payload, enc: &encoding{}}
	topic := Topic(name)
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if !s.wants(topic) {
			continue
		}
		select {
		case s.ch <- ev:
		default:
			s.mu.Lock()
			s.dropped++
			s.mu.Unlock()
		}
	}
}

// Wants reports whether any receiver takes events named name, so that an
// emitter can skip building what nobody reads (Airlock serving agents with
// no UI open).
func (h *Hub) Wants(name string) bool {
	topic := Topic(name)
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.wants(topic) {
			return true
		}
	}
	return false
}

// AddSink forwards every event to sink on a goroutine of its own, so that a
// slow sink (the desktop window, which may raise itself and show a
// notification) never holds up an emitter. When the sink falls behind it
// gets EventLagged. Stop it with the returned function.
func (h *Hub) AddSink(sink core.EventSink) (stop func()) {
	s := h.Subscribe(nil)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case ev := <-s.C():
				sink.Emit(ev.Name, ev.Payload)
				if len(s.C()) == 0 {
					if n := s.Lagged(); n > 0 {
						sink.Emit(EventLagged, Lagged{Dropped: n})
					}
				}
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { s.Close(); close(done) }) }
}
