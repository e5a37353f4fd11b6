package protocol

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// isoMillis is the layout of a timestamp whose year fits in four digits.
const isoMillis = "2006-01-02T15:04:05.000Z"

// FormatTime formats t the way the protocol's timestamps are written and the
// way JavaScript's Date.prototype.toISOString writes them: in UTC, with
// exactly three fractional digits and a "Z", as in 1970-01-01T00:00:09.999Z.
// Sub-millisecond precision is dropped by truncation towards the past, as a
// JavaScript Date holds whole milliseconds since the epoch. A year outside
// 0000-9999 is written with a sign and at least six digits
// (+010000-01-01T00:00:00.000Z, -000001-12-31T23:59:59.999Z). JavaScript
// cannot represent dates more than 100 million days from the epoch; FormatTime
// keeps writing them in the same style instead of failing.
func FormatTime(t time.Time) string {
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return formatExtendedYear(t)
	}
	return t.Format(isoMillis)
}

// formatExtendedYear formats a time whose year needs the expanded form.
func formatExtendedYear(t time.Time) string {
	y := t.Year()
	sign := byte('+')
	if y < 0 {
		sign, y = '-', -y
	}
	digits := strconv.Itoa(y)
	if len(digits) < 6 {
		digits = strings.Repeat("0", 6-len(digits)) + digits
	}
	// The rest of the layout does not depend on the year.
	return string(sign) + digits + t.Format(isoMillis[len("2006"):])
}

// ParseTime parses a protocol timestamp. It accepts what FormatTime
// produces and, more generally, any RFC 3339 date-time with or without
// fractional seconds and with any UTC offset, as well as a year written with
// a sign and six digits. The result is in UTC. Precision finer than a
// millisecond is kept.
func ParseTime(s string) (time.Time, error) {
	if len(s) > 64 {
		return time.Time{}, timeError(s)
	}
	if s != "" && (s[0] == '+' || s[0] == '-') {
		return parseExtendedYear(s)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, timeError(s)
	}
	return t.UTC(), nil
}

// parseExtendedYear parses a timestamp whose year is written as a sign and
// six digits. It parses the rest with a stand-in year that has the same
// place in the 400-year Gregorian cycle, so leap days are checked
// correctly, and then moves the result to the real year.
func parseExtendedYear(s string) (time.Time, error) {
	if len(s) < 7 || !isDigits(s[1:7]) {
		return time.Time{}, timeError(s)
	}
	year, _ := strconv.Atoi(s[1:7])
	if s[0] == '-' {
		if year == 0 { // -000000 is not a valid year, as in JavaScript
			return time.Time{}, timeError(s)
		}
		year = -year
	}
	standIn := 2000 + ((year%400)+400)%400
	t, err := time.Parse(time.RFC3339Nano, strconv.Itoa(standIn)+s[7:])
	if err != nil {
		return time.Time{}, timeError(s)
	}
	return t.AddDate(year-standIn, 0, 0).UTC(), nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ErrInvalidTime is wrapped by the errors of ParseTime.
var ErrInvalidTime = errors.New("protocol: invalid timestamp")

func timeError(s string) error {
	return fmt.Errorf("%w: %q", ErrInvalidTime, clip(s))
}
