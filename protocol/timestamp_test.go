package protocol

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// The expected strings are what new Date(ms).toISOString() returns in
// JavaScript for the same instant.
func TestFormatTime(t *testing.T) {
	tests := []struct {
		t    time.Time
		want string
	}{
		{time.UnixMilli(0), "1970-01-01T00:00:00.000Z"},
		// The reducer fixtures freeze the clock at 9999 ms.
		{time.UnixMilli(9999), "1970-01-01T00:00:09.999Z"},
		{time.UnixMilli(-1), "1969-12-31T23:59:59.999Z"},
		{time.UnixMilli(1722772800123), "2024-08-04T12:00:00.123Z"},
		// Sub-millisecond digits are truncated, also before the epoch.
		{time.Unix(0, 1_999_999), "1970-01-01T00:00:00.001Z"},
		{time.Unix(0, -1), "1969-12-31T23:59:59.999Z"},
		{time.Unix(0, -1_000_001), "1969-12-31T23:59:59.998Z"},
		// Other zones are converted to UTC.
		{time.Date(2024, 8, 4, 14, 0, 0, 5e8, time.FixedZone("CEST", 2*3600)), "2024-08-04T12:00:00.500Z"},
		// Years around the four-digit range.
		{time.UnixMilli(253402300799999), "9999-12-31T23:59:59.999Z"},
		{time.UnixMilli(253402300800000), "+010000-01-01T00:00:00.000Z"},
		{time.UnixMilli(-62167219200000), "0000-01-01T00:00:00.000Z"},
		{time.UnixMilli(-62167219200001), "-000001-12-31T23:59:59.999Z"},
		// The limits of a JavaScript Date.
		{time.UnixMilli(8.64e15), "+275760-09-13T00:00:00.000Z"},
		{time.UnixMilli(-8.64e15), "-271821-04-20T00:00:00.000Z"},
		// Beyond them FormatTime keeps the same style.
		{time.Date(1234567, 1, 1, 0, 0, 0, 0, time.UTC), "+1234567-01-01T00:00:00.000Z"},
		{time.Time{}, "0001-01-01T00:00:00.000Z"},
	}
	for _, tt := range tests {
		if got := FormatTime(tt.t); got != tt.want {
			t.Errorf("FormatTime(%v) = %q, want %q", tt.t, got, tt.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
	}{
		{"1970-01-01T00:00:09.999Z", time.UnixMilli(9999)},
		{"1970-01-01T00:00:00Z", time.UnixMilli(0)},
		{"2024-08-04T12:00:00.123456789Z", time.Unix(1722772800, 123456789)},
		{"2024-02-29T12:00:00+02:00", time.UnixMilli(1709200800000)},
		{"+010000-01-01T00:00:00.000Z", time.UnixMilli(253402300800000)},
		{"-000001-12-31T23:59:59.999Z", time.UnixMilli(-62167219200001)},
		{"+002024-01-01T00:00:00Z", time.UnixMilli(1704067200000)},
		{"+275760-09-13T00:00:00.000Z", time.UnixMilli(8.64e15)},
		{"-271821-04-20T00:00:00.000Z", time.UnixMilli(-8.64e15)},
		// A leap day in an expanded year: 10400 is a leap year.
		{"+010400-02-29T00:00:00.000Z", time.Date(10400, 2, 29, 0, 0, 0, 0, time.UTC)},
		{"-000004-02-29T00:00:00.000Z", time.Date(-4, 2, 29, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		got, err := ParseTime(tt.in)
		if err != nil {
			t.Errorf("ParseTime(%q): %v", tt.in, err)
			continue
		}
		if !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, want %v in UTC", tt.in, got, tt.want.UTC())
		}
	}
}

func TestParseTimeRejects(t *testing.T) {
	for _, in := range []string{
		"",
		" ",
		"1970-01-01",
		"1970-01-01T00:00:00",
		"1970-01-01 00:00:00Z",
		" 1970-01-01T00:00:00Z",
		"1970-01-01T00:00:00Z ",
		"2023-02-29T00:00:00Z",
		"+10000-01-01T00:00:00Z",
		"+0100000-01-01T00:00:00Z",
		"-000000-01-01T00:00:00.000Z",
		"+010100-02-29T00:00:00Z", // 10100 is not a leap year
		"-",
		"+",
		"+01000",
		"yesterday",
		"1970-01-01T00:00:00.000Z" + string(make([]byte, 100)),
	} {
		if got, err := ParseTime(in); !errors.Is(err, ErrInvalidTime) {
			t.Errorf("ParseTime(%q) = %v, %v; want ErrInvalidTime", in, got, err)
		}
	}
}

func TestTimeRoundTrip(t *testing.T) {
	for _, ms := range []int64{0, 9999, -1, 1722772800123, 253402300800000, -62167219200001, 8.64e15, -8.64e15} {
		in := time.UnixMilli(ms)
		s := FormatTime(in)
		out, err := ParseTime(s)
		if err != nil || !out.Equal(in) {
			t.Errorf("ParseTime(FormatTime(%d ms)) = %v, %v (via %q)", ms, out, err, s)
		}
	}
}

func FuzzTimeRoundTrip(f *testing.F) {
	f.Add(int64(9999))
	f.Add(int64(-62167219200001))
	f.Fuzz(func(t *testing.T, ms int64) {
		// Stay within the years time.Time formats faithfully.
		const limit = 8.64e15 // the range of a JavaScript Date
		if ms > limit || ms < -limit {
			t.Skip()
		}
		in := time.UnixMilli(ms)
		s := FormatTime(in)
		out, err := ParseTime(s)
		if err != nil || !out.Equal(in) {
			t.Fatalf("ParseTime(FormatTime(%d ms)) = %v, %v (via %q)", ms, out, err, s)
		}
	})
}

func ExampleFormatTime() {
	fmt.Println(FormatTime(time.UnixMilli(9999)))
	fmt.Println(FormatTime(time.Date(2024, 8, 4, 14, 0, 0, 123456789, time.FixedZone("CEST", 2*3600))))
	// Output:
	// 1970-01-01T00:00:09.999Z
	// 2024-08-04T12:00:00.123Z
}
