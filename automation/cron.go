package automation

import (
	"archive/zip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// The AHP cron grammar (AutomationSchedule): five fields, each "*", a
// value, an inclusive range, a list of values and ranges, or a step on "*"
// or on a range. Names for months and weekdays, case-insensitive; weekday
// 7 is Sunday like 0. No seconds, macros or Quartz extensions.

type cronField struct {
	name     string
	min, max int
	names    []string // names[i] is the value min+i (months) or i (weekdays)
}

var cronFields = [5]cronField{
	{name: "minute", min: 0, max: 59},
	{name: "hour", min: 0, max: 23},
	{name: "day of month", min: 1, max: 31},
	{name: "month", min: 1, max: 12, names: []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
	{name: "day of week", min: 0, max: 7, names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}},
}

// cronParser reads the normalized five-field expressions normalizeCron
// writes. It is robfig/cron's standard parser without descriptors.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// normalizeCron checks expr against the AHP grammar and returns it in the
// form robfig/cron reads with the same meaning: names become numbers and
// a restricted day-of-week field is spelled out as a list of 0-6 (robfig
// knows no weekday 7).
func normalizeCron(expr string) (string, error) {
	fields := strings.Fields(expr)
	if len(fields) != 5 {
		return "", fmt.Errorf("a cron expression has exactly five fields (minute hour day-of-month month day-of-week), %q has %d", expr, len(fields))
	}
	out := make([]string, 5)
	for i, f := range fields {
		vals, err := cronFields[i].parse(f)
		if err != nil {
			return "", fmt.Errorf("cron expression %q: %s field %q: %w", expr, cronFields[i].name, f, err)
		}
		switch {
		case f == "*":
			out[i] = "*"
		case i == 4:
			days := map[int]bool{}
			for _, v := range vals {
				days[v%7] = true
			}
			list := make([]string, 0, len(days))
			for d := range 7 {
				if days[d] {
					list = append(list, strconv.Itoa(d))
				}
			}
			out[i] = strings.Join(list, ",")
		default:
			list := make([]string, len(vals))
			for j, v := range vals {
				list[j] = strconv.Itoa(v)
			}
			out[i] = strings.Join(list, ",")
		}
	}
	norm := strings.Join(out, " ")
	if _, err := cronParser.Parse(norm); err != nil {
		return "", fmt.Errorf("cron expression %q: %w", expr, err)
	}
	return norm, nil
}

// parse returns the values a field selects, ascending.
func (cf cronField) parse(f string) ([]int, error) {
	set := map[int]bool{}
	for item := range strings.SplitSeq(f, ",") {
		if item == "" {
			return nil, fmt.Errorf("an empty list item")
		}
		rng, stepText, stepped := strings.Cut(item, "/")
		step := 1
		if stepped {
			n, err := strconv.Atoi(stepText)
			if err != nil || n <= 0 || !isDigits(stepText) {
				return nil, fmt.Errorf("the step %q is not a positive integer", stepText)
			}
			step = n
		}
		var lo, hi int
		if rng == "*" {
			lo, hi = cf.min, cf.max
			if cf.max == 7 {
				hi = 6 // * is every day once
			}
		} else {
			a, b, isRange := strings.Cut(rng, "-")
			if stepped && !isRange {
				return nil, fmt.Errorf("a step applies to * or to a range, not to the single value %q", rng)
			}
			var err error
			if lo, err = cf.value(a); err != nil {
				return nil, err
			}
			hi = lo
			if isRange {
				if hi, err = cf.value(b); err != nil {
					return nil, err
				}
				if hi < lo {
					return nil, fmt.Errorf("the range %q runs backwards", rng)
				}
			}
		}
		for v := lo; v <= hi; v += step {
			set[v] = true
		}
	}
	vals := make([]int, 0, len(set))
	for v := range set {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	return vals, nil
}

func (cf cronField) value(s string) (int, error) {
	if isDigits(s) && s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < cf.min || v > cf.max {
			return 0, fmt.Errorf("%q is outside %d-%d", s, cf.min, cf.max)
		}
		return v, nil
	}
	for i, n := range cf.names {
		if strings.EqualFold(s, n) {
			if cf.max == 7 {
				return i, nil
			}
			return cf.min + i, nil
		}
	}
	if cf.names != nil {
		return 0, fmt.Errorf("%q is neither a number in %d-%d nor a name (%s)", s, cf.min, cf.max, strings.Join(cf.names, ", "))
	}
	return 0, fmt.Errorf("%q is not a number in %d-%d", s, cf.min, cf.max)
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// schedule is a checked cron expression in its time zone.
type schedule struct {
	spec cron.Schedule
}

// newSchedule parses a normalized expression (normalizeCron) in loc.
func newSchedule(norm string, loc *time.Location) (*schedule, error) {
	s, err := cronParser.Parse(norm)
	if err != nil {
		return nil, err
	}
	if spec, ok := s.(*cron.SpecSchedule); ok {
		spec.Location = loc
	}
	return &schedule{spec: s}, nil
}

// next returns the first occurrence strictly after t, or the zero time
// when there is none in the next five years (30 February).
func (s *schedule) next(t time.Time) time.Time { return s.spec.Next(t) }

// zoneName is the shape of an IANA zone name: components starting with a
// letter ("America/Argentina/Buenos_Aires", "Etc/GMT+5", "UTC").
var zoneName = regexp.MustCompile(`^[A-Z][A-Za-z0-9_+\-]*(/[A-Z][A-Za-z0-9_+\-]*)*$`)

// knownZones lists the time zones time.LoadLocation can load, from the
// same places it looks (ZONEINFO, a directory or a zip, and the system's
// zoneinfo directories), so that a zone is checked without reading a file while
// the host is locked. It reads the directories once, when the service
// starts.
func knownZones() map[string]bool {
	zones := map[string]bool{"UTC": true}
	dirs := []string{"/usr/share/zoneinfo/", "/usr/share/lib/zoneinfo/", "/usr/lib/locale/TZ/", "/etc/zoneinfo/"}
	if z := os.Getenv("ZONEINFO"); z != "" {
		dirs = append([]string{z}, dirs...)
	}
	for _, dir := range dirs {
		if strings.HasSuffix(dir, ".zip") {
			zipZones(dir, zones)
			continue
		}
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(dir, path)
			if err == nil && zoneName.MatchString(filepath.ToSlash(rel)) {
				zones[filepath.ToSlash(rel)] = true
			}
			return nil
		})
	}
	return zones
}

func zipZones(path string, zones map[string]bool) {
	r, err := zip.OpenReader(path)
	if err != nil {
		return
	}
	defer r.Close()
	for _, f := range r.File {
		if zoneName.MatchString(f.Name) {
			zones[f.Name] = true
		}
	}
}
