package host

import (
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// TestMissingReasonByVersion: the members 1.x made required (here
// session/customizationToggled's enablement) may be absent only from
// clients speaking the 0.x shapes (before 0.9.0). 0.9.x already carries
// the 1.x shapes, so a 0.9.0 client leaving one out is rejected like a
// 1.x client.
func TestMissingReasonByVersion(t *testing.T) {
	a := &protocol.SessionCustomizationToggledAction{}
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
		got := missingReason(tc.version, a, missing)
		if (got != "") != tc.reject {
			t.Errorf("%s: reason %q, want rejected=%v", tc.version, got, tc.reject)
		}
	}
}
