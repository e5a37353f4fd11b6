package check

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// kindOf returns the kind of err's Rejection, and whether it is one.
func kindOf(err error) (Kind, bool) {
	var rej *Rejection
	if errors.As(err, &rej) {
		return rej.Kind, true
	}
	return 0, false
}

// TestMembersByVersion: the members 1.x made required (here
// session/customizationToggled's enablement) may be absent only from
// clients speaking the 0.x shapes (before 0.9.0). 0.9.x already carries
// the 1.x shapes, so a 0.9.0 client leaving one out is rejected like a
// 1.x client.
func TestMembersByVersion(t *testing.T) {
	missing := &protocol.MissingError{Paths: []string{"action.enablement"}}
	for _, tc := range []struct {
		version string
		reject  bool
	}{
		{"0.8.0", false},
		{"0.5.1", false},
		{"0.9.0", true},
		{"0.10.0", true},
		{"1.0.0", true},
		{"1.1.0", true},
	} {
		err := Members(tc.version, "session/customizationToggled", missing)
		if k, ok := kindOf(err); ok != tc.reject || (ok && k != Member) {
			t.Errorf("%s: %v, want rejected=%v", tc.version, err, tc.reject)
		}
	}
}

// TestMembers: the reason names every missing member; a missing member
// that only old clients may leave out still counts for another action.
func TestMembers(t *testing.T) {
	for _, tc := range []struct {
		name, version, typ string
		missing            *protocol.MissingError
		want               string // "" means accepted
	}{
		{"nothing missing", "1.1.0", "chat/titleChanged", nil, ""},
		{"empty", "1.1.0", "chat/titleChanged", &protocol.MissingError{}, ""},
		{"one", "1.1.0", "chat/titleChanged", &protocol.MissingError{Paths: []string{"action.title"}}, "required member action.title is missing"},
		{"two", "1.1.0", "chat/titleChanged", &protocol.MissingError{Paths: []string{"action.a", "action.b"}}, "required members action.a, action.b are missing"},
		{"soft for another type", "0.8.0", "chat/titleChanged", &protocol.MissingError{Paths: []string{"action.enablement"}}, "action.enablement"},
		{"only the soft one dropped", "0.8.0", "terminal/claimed", &protocol.MissingError{Paths: []string{"action.claim.chat", "action.terminal"}}, "required member action.terminal is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Members(tc.version, tc.typ, tc.missing)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			if k, ok := kindOf(err); !ok || k != Member || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want a member rejection with %q", err, tc.want)
			}
		})
	}
}

// TestChannelURI: AHP channel URIs and other absolute URIs pass; the
// rest is a URI rejection.
func TestChannelURI(t *testing.T) {
	for _, tc := range []struct {
		uri string
		ok  bool
	}{
		{"ahp-root://", true},
		{"ahp-root:///", false},
		{"copilot:/0b0c5f8e-3a1e-4b7e-9c39-6f2a0e5d8a11", true},
		{"", false},
		{"no scheme", false},
		{"/relative/path", false},
	} {
		err := ChannelURI(tc.uri)
		if tc.ok != (err == nil) {
			t.Errorf("ChannelURI(%q) = %v, want ok=%v", tc.uri, err, tc.ok)
		}
		if k, ok := kindOf(err); err != nil && (!ok || k != URI) {
			t.Errorf("ChannelURI(%q) = %T, want a URI rejection", tc.uri, err)
		}
	}
}

// TestProvider: a provider must be a lower-case URI scheme the host does
// not reserve.
func TestProvider(t *testing.T) {
	for _, tc := range []struct {
		provider string
		ok       bool
	}{
		{"echo", true},
		{"claude-code", true},
		{"a1+b.c", true},
		{"Claude", false},
		{"my_agent", false},
		{"1agent", false},
		{"", false},
		{"ahp-session", false},
		{"file", false},
	} {
		err := Provider(tc.provider)
		if tc.ok != (err == nil) {
			t.Errorf("Provider(%q) = %v, want ok=%v", tc.provider, err, tc.ok)
		}
		if k, ok := kindOf(err); err != nil && (!ok || k != Name) {
			t.Errorf("Provider(%q) = %T, want a name rejection", tc.provider, err)
		}
	}
}

// TestReject: an empty reason is no rejection; the others are rule
// rejections with their reason.
func TestReject(t *testing.T) {
	if err := Reject(""); err != nil {
		t.Fatalf("Reject(\"\") = %v", err)
	}
	for _, err := range []error{Reject("no"), Rejectf("n%s", "o"), fmt.Errorf("wrapped: %w", Reject("no"))} {
		if k, ok := kindOf(err); !ok || k != Rule || !strings.HasSuffix(err.Error(), "no") {
			t.Errorf("%v: kind %v, %v", err, k, ok)
		}
	}
}
