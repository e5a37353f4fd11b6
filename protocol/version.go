package protocol

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ProtocolVersion and the list behind SupportedVersions are generated from
// the spec's data/versions.json into data_gen.go.

// ErrInvalidVersion is wrapped by the errors of ParseVersion and
// CompareVersions.
var ErrInvalidVersion = errors.New("protocol: invalid protocol version")

// Version is a parsed protocol version: MAJOR.MINOR.PATCH, with no
// pre-release or build suffix. The zero value is 0.0.0.
type Version struct {
	Major, Minor, Patch uint64
}

// maxVersionLen bounds the input ParseVersion looks at: three 20-digit
// numbers and two dots.
const maxVersionLen = 3*20 + 2

// ParseVersion parses a protocol version. It accepts exactly three
// dot-separated decimal numbers that fit in 64 bits, without signs, spaces,
// a "v" prefix, pre-release or build suffixes, or leading zeros (SemVer
// forbids them; "0" itself is fine).
func ParseVersion(s string) (Version, error) {
	if len(s) > maxVersionLen {
		return Version{}, versionError(s)
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return Version{}, versionError(s)
	}
	var nums [3]uint64
	for i, p := range parts {
		n, ok := parseVersionNumber(p)
		if !ok {
			return Version{}, versionError(s)
		}
		nums[i] = n
	}
	return Version{nums[0], nums[1], nums[2]}, nil
}

// parseVersionNumber parses one numeric part of a version.
func parseVersionNumber(s string) (uint64, bool) {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

func versionError(s string) error {
	return fmt.Errorf("%w: %q", ErrInvalidVersion, clip(s))
}

// String formats v as MAJOR.MINOR.PATCH. For a Version returned by
// ParseVersion it is the parsed string.
func (v Version) String() string {
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// Compare returns -1, 0 or +1 as v is older than, equal to or newer than w,
// comparing major, then minor, then patch numerically.
func (v Version) Compare(w Version) int {
	return cmp.Or(
		cmp.Compare(v.Major, w.Major),
		cmp.Compare(v.Minor, w.Minor),
		cmp.Compare(v.Patch, w.Patch),
	)
}

// CompatibleWith reports whether peers speaking v and w are guaranteed to
// interoperate: from 1.0.0 on they must share the major number; below 1.0.0
// they must share the minor number as well (0.X.y and 0.X.z are compatible,
// 0.X and 0.Y are not). The relation is symmetric.
func (v Version) CompatibleWith(w Version) bool {
	if v.Major != w.Major {
		return false
	}
	return v.Major > 0 || v.Minor == w.Minor
}

// SatisfiesCaret reports whether v lies in the caret range of base (what
// npm writes ^base): v is compatible with base and not older than it. A
// peer that implements base can therefore speak to a peer on v, whose only
// differences are additions the older side ignores.
func (v Version) SatisfiesCaret(base Version) bool {
	return v.CompatibleWith(base) && v.Compare(base) >= 0
}

// CompareVersions parses a and b and compares them as Version.Compare does.
// It fails if either is not a valid version.
func CompareVersions(a, b string) (int, error) {
	va, err := ParseVersion(a)
	if err != nil {
		return 0, err
	}
	vb, err := ParseVersion(b)
	if err != nil {
		return 0, err
	}
	return va.Compare(vb), nil
}

// SupportedVersions returns the protocol versions this package implements,
// most preferred (newest) first: ProtocolVersion, the 1.x-era baselines
// (1.0.0, 0.9.0) and the older versions of the 0.8.0 pack (0.8.0 down to
// 0.5.1). A client offers them in initialize. The caller owns the returned
// slice.
func SupportedVersions() []string {
	return slices.Clone(supportedVersions)
}

// LegacyVersions returns the versions before 0.9.0 this package still
// implements, newest first. Peers on them see the shapes of the 0.8.0 pack.
func LegacyVersions() []string {
	return slices.Clone(legacyVersions[:])
}

// AcceptedVersions returns what a host built on this package accepts, as
// SemVer versions and ranges, newest first: the data.supportedVersions of
// its UnsupportedProtocolVersion error. The caller owns the returned slice.
func AcceptedVersions() []string {
	out := make([]string, 0, len(accepted)+1)
	for _, r := range accepted {
		if r.exact {
			out = append(out, r.base.String())
		} else {
			out = append(out, "^"+r.base.String())
		}
	}
	return out
}

var supportedVersions = func() []string {
	out := []string{ProtocolVersion}
	for _, v := range append(baselineVersions[:], legacyVersions[:]...) {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}()

// versionRange is one entry of what a host accepts: the caret range of
// base, or base exactly.
type versionRange struct {
	base  Version
	exact bool
}

// accepted lists what a host accepts, newest first (versioning.md,
// "Negotiation"): the caret ranges of the 1.x baselines (>=1.0.0 <2.0.0 and
// >=0.9.0 <0.10.0); exactly 0.10.0, which VS Code offers and treats as the
// 1.0.0 wire contract although it was never released; and the caret range
// of each version of the 0.8.0 pack (0.8.x, 0.7.x, 0.6.x, and 0.5.x from
// 0.5.1 on), which ahpd served before 1.x and still does.
var accepted = func() []versionRange {
	var out []versionRange
	base := mustParseVersions(baselineVersions[:])
	out = append(out, versionRange{base: base[0]})
	for _, b := range base[1:] {
		out = append(out, versionRange{base: b})
	}
	out = slices.Insert(out, 1, versionRange{base: Version{0, 10, 0}, exact: true})
	for _, v := range mustParseVersions(legacyVersions[:]) {
		// 0.5.2 adds nothing to ^0.5.1.
		if last := out[len(out)-1]; !last.exact && v.CompatibleWith(last.base) {
			out[len(out)-1].base = v
			continue
		}
		out = append(out, versionRange{base: v})
	}
	return out
}()

func mustParseVersions(list []string) []Version {
	out := make([]Version, len(list))
	for i, s := range list {
		v, err := ParseVersion(s)
		if err != nil {
			panic(err) // the generator checks the list, so this is a bug
		}
		out[i] = v
	}
	return out
}

// Legacy reports whether v predates 0.9.0, the first version of the 1.x
// era: such a peer knows only what the 0.8.0 pack describes.
func (v Version) Legacy() bool { return v.Major == 0 && v.Minor < 9 }

// VersionAcceptable reports whether a host built on this package can speak
// version v: v is in the caret range of a 1.x baseline or of an older
// version it serves, or is exactly 0.10.0. So later patch releases of a
// supported 0.X line and later 1.x versions are acceptable (a newer
// client's additions are ignored), but a version older than the oldest
// supported one is not, even within its minor line, and neither is 2.0.0.
func VersionAcceptable(v Version) bool {
	for _, r := range accepted {
		if r.exact && v == r.base || !r.exact && v.SatisfiesCaret(r.base) {
			return true
		}
	}
	return false
}

// Negotiate picks the protocol version for a connection from the versions a
// client offered in initialize: the highest offered version that
// VersionAcceptable allows, whatever the order of the offer, returned
// exactly as the client spelled it. A malformed entry anywhere in the offer
// is an error wrapping ErrInvalidVersion, even beside a valid one
// (versioning.md: "Malformed versions produce an explicit error"); a host
// answers it with InvalidParams (-32602). When no entry is acceptable the
// error is an *UnsupportedVersionError, which the host turns into an
// UnsupportedProtocolVersion (-32005) reply before closing the connection.
func Negotiate(offered []string) (string, error) {
	best, found := "", false
	var bestV Version
	for _, s := range offered {
		v, err := ParseVersion(s)
		if err != nil {
			return "", fmt.Errorf("protocolVersions: %w", err)
		}
		if !VersionAcceptable(v) {
			continue
		}
		if !found || v.Compare(bestV) > 0 {
			best, bestV, found = s, v, true
		}
	}
	if !found {
		return "", &UnsupportedVersionError{
			Offered:   slices.Clone(offered),
			Supported: AcceptedVersions(),
		}
	}
	return best, nil
}

// UnsupportedVersionError reports that a client offered no protocol
// version the host can speak. On the wire it becomes the
// UnsupportedProtocolVersion error (-32005) whose data lists Supported as
// supportedVersions.
type UnsupportedVersionError struct {
	Offered   []string // the client's list, as received
	Supported []string // what the host accepts, versions and ranges, newest first
}

func (e *UnsupportedVersionError) Error() string {
	const maxShown = 8
	shown := make([]string, 0, maxShown+1)
	for i, s := range e.Offered {
		if i == maxShown {
			shown = append(shown, fmt.Sprintf("and %d more", len(e.Offered)-maxShown))
			break
		}
		shown = append(shown, strconv.Quote(clip(s)))
	}
	return fmt.Sprintf("protocol: no supported protocol version offered (offered [%s]; supported %s)",
		strings.Join(shown, ", "), strings.Join(e.Supported, ", "))
}

// RPCError returns the UnsupportedProtocolVersion (-32005) JSON-RPC error
// for e, whose data lists the supported versions.
func (e *UnsupportedVersionError) RPCError() *Error {
	data, _ := Marshal(struct {
		SupportedVersions []string `json:"supportedVersions"`
	}{e.Supported})
	return &Error{Code: CodeUnsupportedProtocolVersion, Message: e.Error(), Data: data}
}
