package teams

import "testing"

// A full pin table pins no new session and keeps the ones it has; a
// session's pins go when it ends, which makes room again (found by a red
// team: the table was cleared whole when full, taking every open session
// off its project).
func TestPinsKeepTheirSessionsWhenFull(t *testing.T) {
	old := maxPins
	maxPins = 3
	defer func() { maxPins = old }()
	s := &Service{}
	s.pin("s1", "ag_a", "p1")
	s.pin("s1", "ag_a", "p2") // a session keeps its first project
	s.pin("s2", "ag_b", "p1")
	s.pin("s3", "ag_c", "p1")
	s.pin("s4", "ag_d", "p1") // the table is full
	for sid, want := range map[string]string{"s1": "p1", "s2": "p1", "s3": "p1"} {
		if p, ok := s.pinOf(sid, map[string]string{"s1": "ag_a", "s2": "ag_b", "s3": "ag_c"}[sid]); !ok || p != want {
			t.Errorf("pin of %s = %q, %v; want %s kept", sid, p, ok, want)
		}
	}
	if _, ok := s.pinOf("s4", "ag_d"); ok {
		t.Error("a session was pinned past the table's bound")
	}
	s.SessionEnded("s2")
	if _, ok := s.pinOf("s2", "ag_b"); ok {
		t.Error("an ended session's pin is kept")
	}
	s.pin("s4", "ag_d", "p1")
	if p, ok := s.pinOf("s4", "ag_d"); !ok || p != "p1" {
		t.Errorf("after a session ended, a new one is not pinned: %q, %v", p, ok)
	}
}
