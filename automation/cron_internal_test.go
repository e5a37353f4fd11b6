package automation

import (
	"testing"
	"time"
)

// TestCronOccurrences: the AHP grammar's meaning, computed in a named
// zone: names, Sunday as 7, steps on ranges, either day field when both
// are restricted, and wall-clock times across a daylight-saving change.
func TestCronOccurrences(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		tm, err := time.ParseInLocation("2006-01-02 15:04", s, berlin)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	tests := []struct {
		expr  string
		after string
		want  []string
	}{
		{"0 9 * * 7", "2026-12-02 00:00", []string{"2026-12-06 09:00", "2026-12-13 09:00"}},
		{"0 9 * * sun", "2026-12-02 00:00", []string{"2026-12-06 09:00", "2026-12-13 09:00"}},
		{"0 9 * * 5-7", "2026-12-02 00:00", []string{"2026-12-04 09:00", "2026-12-05 09:00", "2026-12-06 09:00", "2026-12-11 09:00"}},
		{"*/20 10-11 * * *", "2026-12-02 00:00", []string{"2026-12-02 10:00", "2026-12-02 10:20", "2026-12-02 10:40", "2026-12-02 11:00"}},
		{"0 0-12/6 * * *", "2026-12-02 00:30", []string{"2026-12-02 06:00", "2026-12-02 12:00", "2026-12-03 00:00"}},
		// Both day fields restricted: the 1st of the month or a Monday.
		{"0 8 1 * MON", "2026-11-28 00:00", []string{"2026-11-30 08:00", "2026-12-01 08:00", "2026-12-07 08:00"}},
		{"15 3 * FEB-mar *", "2026-12-31 00:00", []string{"2027-02-01 03:15"}},
		// 02:30 does not exist on 2027-03-28 in Berlin.
		{"30 2 * * *", "2027-03-27 12:00", []string{"2027-03-29 02:30"}},
	}
	for _, tc := range tests {
		norm, err := normalizeCron(tc.expr)
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		s, err := newSchedule(norm, berlin)
		if err != nil {
			t.Fatal(err)
		}
		n := at(tc.after)
		for _, w := range tc.want {
			n = s.next(n)
			if !n.Equal(at(w)) {
				t.Errorf("%q after %s: got %s, want %s", tc.expr, tc.after, n.In(berlin).Format("2006-01-02 15:04"), w)
				break
			}
		}
	}
}

// TestCronRefused: what is outside the grammar is refused.
func TestCronRefused(t *testing.T) {
	for _, expr := range []string{
		"", "* * * *", "0 0 * * * *", "@hourly", "0 0 ? * *", "0 0 L * *", "0 0 * * 1#2", "0 0 1W * *",
		"60 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *", "* * * 13 *", "* * * * 8",
		"5/15 * * * *", "*/0 * * * *", "*/-1 * * * *", "10-5 * * * *", "1,,2 * * * *", "* * * FOO *", "* * * * MONDAY",
		"TZ=UTC 0 0 * *",
	} {
		if norm, err := normalizeCron(expr); err == nil {
			t.Errorf("%q accepted as %q", expr, norm)
		}
	}
}
