package protocol_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ahp-go/ahp/internal/specdir"
	"github.com/ahp-go/ahp/protocol"
)

func mustVersion(t *testing.T, s string) protocol.Version {
	t.Helper()
	v, err := protocol.ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// specification/versioning.md, "Version Format": MAJOR.MINOR.PATCH strings
// such as "0.1.0", without pre-release or build metadata.
func TestParseVersion(t *testing.T) {
	valid := []struct {
		in   string
		want protocol.Version
	}{
		{"0.1.0", protocol.Version{Minor: 1}},
		{"0.8.0", protocol.Version{Minor: 8}},
		{"0.10.0", protocol.Version{Minor: 10}},
		{"1.2.3", protocol.Version{Major: 1, Minor: 2, Patch: 3}},
		{"18446744073709551615.0.0", protocol.Version{Major: 1<<64 - 1}},
	}
	for _, tt := range valid {
		got, err := protocol.ParseVersion(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		if got.String() != tt.in {
			t.Errorf("ParseVersion(%q).String() = %q", tt.in, got.String())
		}
	}
	invalid := []string{
		"", " ", "0", "0.8", "0.8.", ".8.0", "0..0", "0.8.0.1", "v0.8.0", "V0.8.0",
		"0.8.0-beta", "0.8.0+build.1", "0.8.0-rc.1+b", "+0.8.0", "-0.8.0", "0.-8.0",
		"0.+8.0", " 0.8.0", "0.8.0 ", "0.8.0\n", "00.8.0", "0.08.0", "0.8.00",
		"0.8.x", "0.8.*", "^0.8.0", "0x1.0.0", "1_0.0.0", "٠.٨.٠",
		"18446744073709551616.0.0", strings.Repeat("9", 1000) + ".0.0",
	}
	for _, in := range invalid {
		if v, err := protocol.ParseVersion(in); !errors.Is(err, protocol.ErrInvalidVersion) {
			t.Errorf("ParseVersion(%q) = %v, %v; want ErrInvalidVersion", in, v, err)
		}
	}
}

// specification/versioning.md, "Compatibility Guarantee".
func TestCompatibleWith(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		// X.y.z and X.y'.z' with the same MAJOR >= 1 are compatible.
		{"1.0.0", "1.9.3", true},
		{"2.4.1", "2.0.0", true},
		{"1.2.3", "1.2.3", true},
		// 0.X.y and 0.X.y' with the same pre-1.0 MINOR are compatible.
		{"0.5.1", "0.5.2", true},
		{"0.8.0", "0.8.7", true},
		{"0.0.1", "0.0.2", true},
		// Anything else is not.
		{"1.0.0", "2.0.0", false},
		{"0.7.0", "0.8.0", false},
		{"0.1.0", "1.1.0", false},
		{"0.0.1", "0.1.1", false},
	}
	for _, tt := range tests {
		a, b := mustVersion(t, tt.a), mustVersion(t, tt.b)
		if got := a.CompatibleWith(b); got != tt.want {
			t.Errorf("%s.CompatibleWith(%s) = %v, want %v", a, b, got, tt.want)
		}
		if got := b.CompatibleWith(a); got != tt.want {
			t.Errorf("%s.CompatibleWith(%s) = %v, want %v (not symmetric)", b, a, got, tt.want)
		}
	}
}

// specification/versioning.md, "Release Model", mentions a consumer range
// ^0.2.0: it admits later 0.2 patches only.
func TestSatisfiesCaret(t *testing.T) {
	base := mustVersion(t, "0.2.0")
	for in, want := range map[string]bool{
		"0.2.0": true, "0.2.9": true, "0.3.0": false, "0.1.9": false, "1.2.0": false,
	} {
		if got := mustVersion(t, in).SatisfiesCaret(base); got != want {
			t.Errorf("%s.SatisfiesCaret(0.2.0) = %v, want %v", in, got, want)
		}
	}
	base = mustVersion(t, "1.4.2")
	for in, want := range map[string]bool{
		"1.4.2": true, "1.4.3": true, "1.9.0": true, "1.4.1": false, "2.0.0": false,
	} {
		if got := mustVersion(t, in).SatisfiesCaret(base); got != want {
			t.Errorf("%s.SatisfiesCaret(1.4.2) = %v, want %v", in, got, want)
		}
	}
}

func TestSupportedVersions(t *testing.T) {
	got := protocol.SupportedVersions()
	want := []string{"1.1.0", "1.0.0", "0.9.0", "0.8.0", "0.7.0", "0.6.0", "0.5.2", "0.5.1"}
	if !slices.Equal(got, want) {
		t.Fatalf("SupportedVersions() = %v, want %v", got, want)
	}
	if protocol.ProtocolVersion != "1.1.0" || got[0] != protocol.ProtocolVersion {
		t.Errorf("ProtocolVersion = %q, want 1.1.0 at the head of the list", protocol.ProtocolVersion)
	}
	for i := 1; i < len(got); i++ {
		if mustVersion(t, got[i-1]).Compare(mustVersion(t, got[i])) <= 0 {
			t.Errorf("SupportedVersions() not strictly descending at %q", got[i])
		}
	}
	got[0] = "changed"
	if protocol.SupportedVersions()[0] != protocol.ProtocolVersion {
		t.Error("SupportedVersions() returned the package's own slice")
	}
	if l := protocol.LegacyVersions(); !slices.Equal(l, want[3:]) {
		t.Errorf("LegacyVersions() = %v", l)
	}
	if a := protocol.AcceptedVersions(); !slices.Equal(a, []string{"^1.0.0", "0.10.0", "^0.9.0", "^0.8.0", "^0.7.0", "^0.6.0", "^0.5.1"}) {
		t.Errorf("AcceptedVersions() = %v", a)
	}
}

// spec-1.1 versioning.md, "Negotiation": the caret ranges of the baselines
// 1.0.0 and 0.9.0; exactly 0.10.0 (VS Code's 1.0.0 wire contract); and the
// versions ahpd served before 1.x, 0.5.1 to 0.8.0, with later patches of
// those minor lines.
func TestVersionAcceptable(t *testing.T) {
	for in, want := range map[string]bool{
		"1.0.0": true, "1.1.0": true, "1.8.3": true, "0.9.0": true, "0.9.4": true, "0.10.0": true,
		"0.8.0": true, "0.7.0": true, "0.6.0": true, "0.5.2": true, "0.5.1": true,
		"0.8.3": true, "0.7.1": true, "0.6.9": true, "0.5.3": true,
		"2.0.0": false, "0.10.1": false, "0.11.0": false,
		"0.5.0": false, "0.4.0": false, "0.3.0": false, "0.1.0": false, "0.0.0": false,
	} {
		if got := protocol.VersionAcceptable(mustVersion(t, in)); got != want {
			t.Errorf("VersionAcceptable(%s) = %v, want %v", in, got, want)
		}
	}
}

// spec-1.1 specification/versioning.md, "Negotiation", "Client and Host
// Update Cadence", "Forward Compatibility"; lifecycle.md for ["0.3.0"].
func TestNegotiate(t *testing.T) {
	const invalid = "invalid"
	tests := []struct {
		name    string
		offered []string
		want    string // "" means UnsupportedVersionError; invalid an ErrInvalidVersion
	}{
		{"VS Code's offer", []string{"1.0.0", "0.10.0", "0.9.0"}, "1.0.0"},
		{"upstream SDK's offer", []string{"1.0.0", "0.9.0"}, "1.0.0"},
		{"0.9.0 alone", []string{"0.9.0"}, "0.9.0"},
		{"development version first", []string{"1.1.0", "1.0.0"}, "1.1.0"},
		{"0.10.0 alone", []string{"0.10.0"}, "0.10.0"},
		{"0.8.0 client", []string{"0.8.0"}, "0.8.0"},
		{"client offering the whole supported list", protocol.SupportedVersions(), "1.1.0"},
		{"later 1.x", []string{"1.7.2", "1.0.0"}, "1.7.2"},
		{"older client, newest it knows", []string{"0.6.0", "0.5.2", "0.5.1"}, "0.6.0"},
		{"oldest supported", []string{"0.5.1"}, "0.5.1"},
		{"lifecycle.md example offer", []string{"0.3.0"}, ""},
		{"too old", []string{"0.5.0", "0.4.0"}, ""},
		{"highest acceptable wins over client order", []string{"0.5.1", "0.9.0", "0.8.0", "1.0.0", "0.6.0"}, "1.0.0"},
		{"later patch of a supported line", []string{"0.8.2"}, "0.8.2"},
		{"next major", []string{"2.0.0"}, ""},
		{"0.10.x beyond 0.10.0", []string{"0.10.1"}, ""},
		{"duplicates", []string{"0.6.0", "0.6.0"}, "0.6.0"},
		{"empty offer", []string{}, ""},
		{"nil offer", nil, ""},
		// "Malformed versions produce an explicit error", even beside a
		// valid one.
		{"malformed beside a valid one", []string{"1.0.0", "nonsense"}, invalid},
		{"prefixed", []string{"v1.0.0"}, invalid},
		{"short", []string{"0.8"}, invalid},
		{"prerelease", []string{"0.7.0-rc.1", "0.7.0"}, invalid},
		{"leading zero", []string{"01.0.0"}, invalid},
		{"empty string", []string{""}, invalid},
	}
	for _, tt := range tests {
		got, err := protocol.Negotiate(tt.offered)
		switch tt.want {
		case invalid:
			if !errors.Is(err, protocol.ErrInvalidVersion) || got != "" {
				t.Errorf("%s: Negotiate(%q) = %q, %v; want ErrInvalidVersion", tt.name, tt.offered, got, err)
			}
			continue
		case "":
		default:
			if err != nil || got != tt.want {
				t.Errorf("%s: Negotiate(%q) = %q, %v; want %q", tt.name, tt.offered, got, err, tt.want)
			}
			continue
		}
		var uerr *protocol.UnsupportedVersionError
		if !errors.As(err, &uerr) || got != "" {
			t.Errorf("%s: Negotiate(%q) = %q, %v; want UnsupportedVersionError", tt.name, tt.offered, got, err)
			continue
		}
		if !slices.Equal(uerr.Supported, protocol.AcceptedVersions()) || !slices.Equal(uerr.Offered, tt.offered) {
			t.Errorf("%s: error carries %+v", tt.name, uerr)
		}
	}
}

func TestUnsupportedVersionErrorMessage(t *testing.T) {
	offered := make([]string, 1000)
	for i := range offered {
		offered[i] = "0.4." + strconv.Itoa(i)
	}
	_, err := protocol.Negotiate(offered)
	if err == nil {
		t.Fatal("Negotiate accepted versions it does not speak")
	}
	msg := err.Error()
	if len(msg) > 1000 || !strings.Contains(msg, "^1.0.0, 0.10.0, ^0.9.0, ^0.8.0") {
		t.Errorf("error message (%d bytes) = %.300s...", len(msg), msg)
	}
	_, err = protocol.Negotiate([]string{strings.Repeat("x", 100000)})
	if !errors.Is(err, protocol.ErrInvalidVersion) || len(err.Error()) > 200 {
		t.Errorf("a huge malformed version: %.300v", err)
	}
}

// data/versions.json carries sample comparisons and rejected inputs from
// the reference implementation; this package must agree with them.
func TestCompareVersionsSamples(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(specdir.ForTest(t, "data"), "versions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Samples []struct {
			A    string `json:"a"`
			B    string `json:"b"`
			Sign int    `json:"sign"`
		} `json:"compareProtocolVersionsSamples"`
		Invalid map[string]string `json:"compareProtocolVersionsInvalidInputs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Samples) == 0 || len(doc.Invalid) == 0 {
		t.Fatal("versions.json has no samples")
	}
	for _, s := range doc.Samples {
		got, err := protocol.CompareVersions(s.A, s.B)
		if err != nil || got != s.Sign {
			t.Errorf("CompareVersions(%q, %q) = %d, %v; want %d", s.A, s.B, got, err, s.Sign)
		}
	}
	for in := range doc.Invalid {
		if _, err := protocol.CompareVersions(in, "0.8.0"); !errors.Is(err, protocol.ErrInvalidVersion) {
			t.Errorf("CompareVersions(%q, 0.8.0) error = %v, want ErrInvalidVersion", in, err)
		}
		if _, err := protocol.CompareVersions("0.8.0", in); !errors.Is(err, protocol.ErrInvalidVersion) {
			t.Errorf("CompareVersions(0.8.0, %q) error = %v, want ErrInvalidVersion", in, err)
		}
	}
}

func ExampleNegotiate() {
	// A client newer than this package offers its own version first and
	// older ones as fallbacks.
	v, err := protocol.Negotiate([]string{"1.2.0", "1.0.0", "0.9.0", "0.8.0"})
	fmt.Println(v, err)

	// A client that only speaks an old version is refused.
	_, err = protocol.Negotiate([]string{"0.3.0"})
	var unsupported *protocol.UnsupportedVersionError
	if errors.As(err, &unsupported) {
		fmt.Println("refused; supported:", unsupported.Supported)
	}
	// Output:
	// 1.2.0 <nil>
	// refused; supported: [^1.0.0 0.10.0 ^0.9.0 ^0.8.0 ^0.7.0 ^0.6.0 ^0.5.1]
}
