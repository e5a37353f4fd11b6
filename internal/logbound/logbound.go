// Package logbound keeps what peers send from blowing up the log: it clips
// the values a peer controls and thins out lines that repeat.
package logbound

import (
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// MaxValue is how many bytes of a peer-controlled value (an id, a method
// name, a header, an error quoting input) go into one log line.
const MaxValue = 128

// Clip shortens s to at most n bytes, cutting on a rune boundary and
// saying how long it was.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// Value clips s to MaxValue bytes.
func Value(s string) string { return Clip(s, MaxValue) }

// Repeats thins out a line that repeats: the first Burst pass, then at
// most one per Interval, which carries how many were held back since the
// last. The zero value allows 5 lines, then one every 10 s. It is safe for
// concurrent use.
type Repeats struct {
	Burst    int
	Interval time.Duration

	mu         sync.Mutex
	seen       int
	last       time.Time
	suppressed int
}

// Allow reports whether the line may be logged now and, if so, how many
// were held back before it.
func (r *Repeats) Allow(now time.Time) (ok bool, suppressed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	burst, every := r.Burst, r.Interval
	if burst <= 0 {
		burst = 5
	}
	if every <= 0 {
		every = 10 * time.Second
	}
	r.seen++
	if r.seen <= burst || now.Sub(r.last) >= every {
		r.last = now
		suppressed, r.suppressed = r.suppressed, 0
		return true, suppressed
	}
	r.suppressed++
	return false, 0
}
