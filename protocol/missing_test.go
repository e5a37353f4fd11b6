package protocol_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// TestUnmarshalStrictReportsMissingMembers checks that decoding tells an
// absent required member from an empty one, names it by its path, and still
// decodes everything else.
func TestUnmarshalStrictReportsMissingMembers(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // nil: nothing missing
	}{
		{"complete", `{"channel":"ahp-chat:/c","clientSeq":1,"action":{"type":"chat/turnStarted","turnId":"t","startedAt":"x","message":{"text":"hi","origin":{"kind":"user"}}}}`, nil},
		{"empty but present", `{"channel":"","clientSeq":0,"action":{"type":"chat/turnStarted","turnId":"","startedAt":"","message":{"text":"","origin":{"kind":"user"}}}}`, nil},
		{"action member", `{"channel":"ahp-chat:/c","clientSeq":1,"action":{"type":"chat/turnStarted","startedAt":"x","message":{"text":"hi","origin":{"kind":"user"}}}}`, []string{"action.turnId"}},
		{"tag after members", `{"channel":"ahp-chat:/c","clientSeq":1,"action":{"startedAt":"x","type":"chat/turnStarted","message":{"origin":{"kind":"user"}}}}`, []string{"action.message.text", "action.turnId"}},
		{"top level", `{"action":{"type":"chat/turnCancelled","turnId":"t","duration":1}}`, []string{"channel", "clientSeq"}},
		{"whole action", `{"channel":"ahp-chat:/c","clientSeq":1}`, []string{"action"}},
		// A member required at 1.x that older versions lack stays optional
		// in Go but is still reported.
		{"required since 1.0", `{"channel":"ahp-chat:/c","clientSeq":1,"action":{"type":"chat/error","turnId":"t","duration":1}}`, []string{"action.part"}},
		// Unknown variants carry nothing to check.
		{"unknown action", `{"channel":"ahp-chat:/c","clientSeq":1,"action":{"type":"x-chat/thing"}}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p protocol.DispatchActionParams
			err := protocol.UnmarshalStrict([]byte(tc.in), &p)
			var m *protocol.MissingError
			if tc.want == nil {
				if err != nil {
					t.Fatalf("UnmarshalStrict: %v", err)
				}
			} else {
				if !errors.As(err, &m) {
					t.Fatalf("UnmarshalStrict = %v, want a *MissingError", err)
				}
				got := slices.Sorted(slices.Values(m.Paths))
				if !slices.Equal(got, tc.want) {
					t.Fatalf("missing %q, want %q", got, tc.want)
				}
				for _, p := range tc.want {
					if !m.Has(p) {
						t.Errorf("Has(%q) = false", p)
					}
				}
			}
			// The lenient decoder accepts the same input and decodes the same value.
			var q protocol.DispatchActionParams
			if err := protocol.Unmarshal([]byte(tc.in), &q); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			a, _ := protocol.Marshal(p)
			b, _ := protocol.Marshal(q)
			if string(a) != string(b) {
				t.Errorf("strict and lenient decodes differ:\n%s\n%s", a, b)
			}
		})
	}
}

func TestMissingPathsInArraysAndMaps(t *testing.T) {
	in := `{"resource":"ahp-chat:/c","title":"t","status":1,"modifiedAt":"m","turns":[` +
		`{"id":"a","message":{"text":"x","origin":{"kind":"user"}},"responseParts":[],"state":"complete"},` +
		`{"message":{"text":"x","origin":{"kind":"user"}},"responseParts":[],"state":"complete"}]}`
	var st protocol.ChatState
	err := protocol.UnmarshalStrict([]byte(in), &st)
	var m *protocol.MissingError
	if !errors.As(err, &m) || !slices.Equal(m.Paths, []string{"turns[1].id"}) {
		t.Fatalf("UnmarshalStrict = %v, want turns[1].id missing", err)
	}
	if len(st.Turns) != 2 || st.Turns[0].ID != "a" || st.Turns[1].State != protocol.TurnStateComplete {
		t.Errorf("value not decoded completely: %+v", st.Turns)
	}
	if rest := m.Without(func(p string) bool { return p == "turns[1].id" }); rest != nil {
		t.Errorf("Without = %v, want nil", rest)
	}
	// Malformed input is still a plain error, not a *MissingError.
	err = protocol.UnmarshalStrict([]byte(`{"turns":[{"id":7}]}`), &st)
	if err == nil || errors.As(err, &m) {
		t.Errorf("malformed input: %v", err)
	}
}
