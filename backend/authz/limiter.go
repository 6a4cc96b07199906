package authz

import (
	"sync"
	"time"
)

// Limits slow down guessing passkeys with authenticate. After Free failures
// for one agent id (or GlobalFree failures over all ids), the next attempt
// is refused until a delay has passed that doubles with each failure, from
// Base up to Max (GlobalMax). Failures are forgotten after Forget without
// one. Attempts are refused at once, never held: a held request would let
// a guesser tie up Airlock instead.
type Limits struct {
	Free       int
	GlobalFree int
	Base       time.Duration
	Max        time.Duration
	GlobalMax  time.Duration
	Forget     time.Duration
}

// DefaultLimits are the limits of a zero Limits.
var DefaultLimits = Limits{Free: 3, GlobalFree: 20, Base: time.Second, Max: 5 * time.Minute, GlobalMax: 30 * time.Second, Forget: 15 * time.Minute}

// maxLimiterKeys bounds the memory the per-id counters take when a guesser
// makes up agent ids; the global counter still slows such a guesser.
const maxLimiterKeys = 10000

type failures struct {
	count int
	last  time.Time
	until time.Time
}

type limiter struct {
	l      Limits
	mu     sync.Mutex
	keys   map[string]*failures
	global failures
}

func newLimiter(l Limits) *limiter {
	d := DefaultLimits
	if l.Free <= 0 {
		l.Free = d.Free
	}
	if l.GlobalFree <= 0 {
		l.GlobalFree = d.GlobalFree
	}
	if l.Base <= 0 {
		l.Base = d.Base
	}
	if l.Max <= 0 {
		l.Max = d.Max
	}
	if l.GlobalMax <= 0 {
		l.GlobalMax = d.GlobalMax
	}
	if l.Forget <= 0 {
		l.Forget = d.Forget
	}
	return &limiter{l: l, keys: map[string]*failures{}}
}

// wait returns how long attempts for key must wait; zero when one may be
// made now.
func (l *limiter) wait(key string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var w time.Duration
	if f := l.keys[key]; f != nil && f.until.After(now) {
		w = f.until.Sub(now)
	}
	if l.global.until.After(now) {
		if g := l.global.until.Sub(now); g > w {
			w = g
		}
	}
	return w
}

// fail records a failed attempt for key.
func (l *limiter) fail(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.keys[key]
	if f == nil {
		if len(l.keys) >= maxLimiterKeys {
			l.pruneLocked(now)
		}
		f = &failures{}
		l.keys[key] = f
	}
	l.bump(f, now, l.l.Free, l.l.Max)
	l.bump(&l.global, now, l.l.GlobalFree, l.l.GlobalMax)
}

func (l *limiter) bump(f *failures, now time.Time, free int, max time.Duration) {
	if now.Sub(f.last) > l.l.Forget {
		f.count = 0
	}
	f.count++
	f.last = now
	if f.count < free {
		return
	}
	// The free-th failure starts the delay: the attempt after it waits.
	d := l.l.Base
	for i := free; i < f.count && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	f.until = now.Add(d)
}

// succeed forgets key's failures: the right passkey ends the slowdown for
// that agent (not the global one).
func (l *limiter) succeed(key string) {
	l.mu.Lock()
	delete(l.keys, key)
	l.mu.Unlock()
}

func (l *limiter) pruneLocked(now time.Time) {
	for k, f := range l.keys {
		if now.Sub(f.last) > l.l.Forget && !f.until.After(now) {
			delete(l.keys, k)
		}
	}
	if len(l.keys) >= maxLimiterKeys {
		l.keys = map[string]*failures{}
	}
}
