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
// most preferred (newest) first; the first is ProtocolVersion. A client
// offers them in initialize, and a host lists them when it refuses a
// client. The caller owns the returned slice.
func SupportedVersions() []string {
	return slices.Clone(supportedVersions[:])
}

// supportedVersions are the versions negotiated today: those of the 0.8.0
// pack.
var supportedVersions = legacyVersions

// supported is supportedVersions parsed, in the same order.
var supported = mustParseVersions(supportedVersions[:])

// Legacy reports whether v predates 0.9.0, the first version of the 1.x
// era: such a peer knows only what the 0.8.0 pack describes.
func (v Version) Legacy() bool { return v.Major == 0 && v.Minor < 9 }

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

// VersionAcceptable reports whether a host built on this package can speak
// version v: v must be in the caret range of one of the supported versions.
// So every supported version is acceptable, and so are later patch
// releases of a supported 0.X line (a newer client's additions are ignored),
// but a version older than the oldest supported one is not, even within
// its minor line, and neither is any unknown minor or major line.
func VersionAcceptable(v Version) bool {
	for _, s := range supported {
		if v.SatisfiesCaret(s) {
			return true
		}
	}
	return false
}

// Negotiate picks the protocol version for a connection from the versions a
// client offered in initialize. It returns the newest offered version that
// VersionAcceptable allows, exactly as the client spelled it (the result
// must be one of the offered entries). Offered entries that are not valid
// versions are skipped. When none is acceptable the error is an
// *UnsupportedVersionError, which the host turns into an
// UnsupportedProtocolVersion (-32005) reply before closing the connection.
//
// Negotiate prefers the newest acceptable version over the client's own
// order, since a client lists older versions only as fallbacks for older
// hosts.
func Negotiate(offered []string) (string, error) {
	best, found := "", false
	var bestV Version
	for _, s := range offered {
		v, err := ParseVersion(s)
		if err != nil || !VersionAcceptable(v) {
			continue
		}
		if !found || v.Compare(bestV) > 0 {
			best, bestV, found = s, v, true
		}
	}
	if !found {
		return "", &UnsupportedVersionError{
			Offered:   slices.Clone(offered),
			Supported: SupportedVersions(),
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
	Supported []string // the versions the host speaks, newest first
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
