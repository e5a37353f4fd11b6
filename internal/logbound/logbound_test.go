package logbound

import (
	"strings"
	"testing"
	"time"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{strings.Repeat("a", 20), 4, "aaaa…(20 bytes)"},
		{"ééé", 3, "é…(6 bytes)"}, // never cuts a rune in two
	} {
		if got := Clip(tc.in, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestRepeats(t *testing.T) {
	r := Repeats{Burst: 2, Interval: time.Second}
	t0 := time.Unix(0, 0)
	var allowed []int
	for i, at := range []time.Duration{0, 1, 2, 3, 4, 1000, 1001, 2500} {
		if ok, n := r.Allow(t0.Add(at * time.Millisecond)); ok {
			allowed = append(allowed, i, n)
		}
	}
	// lines 0 and 1 (the burst), then 6 (the first a second after line
	// 1, carrying the 4 held back), then 7 (1.5 s after line 6)
	want := []int{0, 0, 1, 0, 6, 4, 7, 0}
	if len(allowed) != len(want) {
		t.Fatalf("allowed %v, want %v", allowed, want)
	}
	for i := range want {
		if allowed[i] != want[i] {
			t.Fatalf("allowed %v, want %v", allowed, want)
		}
	}
}
