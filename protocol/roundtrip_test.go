package protocol_test

import (
	"testing"

	"github.com/ahp-go/ahp/internal/fixture"
	"github.com/ahp-go/ahp/internal/specdir"
	"github.com/ahp-go/ahp/protocol"
)

// decodeAs decodes a fixture input as the named wire type.
func decodeAs(typeName string, data []byte) (any, error) {
	if typeName == "JsonRpcMessage" {
		var m protocol.JSONRPCMessage
		err := protocol.Unmarshal(data, &m)
		return &m, err
	}
	return protocol.Decode(typeName, data)
}

// TestRoundTrip runs every wire round-trip fixture: decode the input as the
// named type, encode it again and compare with acceptableOutputs[0], by
// value and key presence (null is not absent here). Group B fixtures carry
// unknown members that a typed decoder drops; they are judged the same way.
//
// The 0.8.0 pack's fixtures decode into the same types: their older shapes
// land in the members the generated types keep for older versions.
func TestRoundTrip(t *testing.T) {
	t.Run("0.8.0", func(t *testing.T) { testRoundTrips(t, fixture.Files(t, "round-trips"), 39) })
	t.Run("1.1.0", func(t *testing.T) { testRoundTrips(t, fixture.FilesIn(t, specdir.V1, "round-trips"), 15) })
}

func testRoundTrips(t *testing.T, files map[string]string, want int) {
	if len(files) != want {
		t.Errorf("%d round-trip fixtures, want %d", len(files), want)
	}
	for _, name := range fixture.Sorted(files) {
		t.Run(name, func(t *testing.T) {
			var fx fixture.RoundTrip
			fixture.Load(t, files[name], &fx)
			if len(fx.AcceptableOutputs) != 1 {
				t.Fatalf("fixture has %d acceptable outputs, want 1", len(fx.AcceptableOutputs))
			}
			v, err := decodeAs(fx.Type, fx.Input)
			if err != nil {
				t.Fatalf("decode %s: %v", fx.Type, err)
			}
			got, err := protocol.Marshal(v)
			if err != nil {
				t.Fatalf("encode %s: %v", fx.Type, err)
			}
			diff, err := fixture.Diff(fx.AcceptableOutputs[0], got, false)
			if err != nil {
				t.Fatal(err)
			}
			if diff != "" {
				t.Errorf("%s\nre-encoded %s differs (-want +got):\n%s", fx.Description, fx.Type, diff)
			}
		})
	}
}

// reducerStateTypes maps a reducer fixture's reducer name to the wire type
// of its state.
var reducerStateTypes = map[string]string{
	"root":          "RootState",
	"session":       "SessionState",
	"chat":          "ChatState",
	"terminal":      "TerminalState",
	"changeset":     "ChangesetState",
	"annotations":   "AnnotationsState",
	"resourceWatch": "ResourceWatchState",
}

// TestReducerFixtureStates checks that every reducer fixture's initial and
// expected states, and its actions, survive decode and re-encode, compared
// after removing null members.
func TestReducerFixtureStates(t *testing.T) {
	files := fixture.Files(t, "reducers")
	for _, name := range fixture.Sorted(files) {
		t.Run(name, func(t *testing.T) {
			var fx fixture.Reducer
			fixture.Load(t, files[name], &fx)
			typ, ok := reducerStateTypes[fx.Reducer]
			if !ok {
				t.Fatalf("unknown reducer %q", fx.Reducer)
			}
			check := func(what, typ string, data []byte) {
				t.Helper()
				v, err := protocol.Decode(typ, data)
				if err != nil {
					t.Fatalf("%s: decode %s: %v", what, typ, err)
				}
				got, err := protocol.Marshal(v)
				if err != nil {
					t.Fatalf("%s: encode: %v", what, err)
				}
				diff, err := fixture.Diff(data, got, true)
				if err != nil {
					t.Fatal(err)
				}
				if diff != "" {
					t.Errorf("%s %s changed by a round trip (-want +got):\n%s", what, typ, diff)
				}
			}
			check("initial", typ, fx.Initial)
			check("expected", typ, fx.Expected)
			for _, a := range fx.Actions {
				check("action", "StateAction", a)
			}
		})
	}
}

func TestUnmarshalIntoUnionPointer(t *testing.T) {
	var a protocol.StateAction
	if err := protocol.Unmarshal([]byte(`{"type":"chat/delta","turnId":"t","partId":"p","content":"x"}`), &a); err != nil {
		t.Fatal(err)
	}
	if d, ok := a.(*protocol.ChatDeltaAction); !ok || d.Content != "x" {
		t.Fatalf("got %#v", a)
	}
	var r protocol.ReconnectResult
	if err := protocol.Unmarshal([]byte(`{"type":"replay","actions":[],"missing":[]}`), &r); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.(*protocol.ReconnectReplayResult); !ok {
		t.Fatalf("got %T", r)
	}
}

// TestPartialChangesKeepNulls checks that a null member of a "changes"
// object (meaning: clear this field) survives decode and encode, apart
// from an absent one (meaning: unchanged).
func TestPartialChangesKeepNulls(t *testing.T) {
	in := `{"type":"session/chatUpdated","chat":"ahp-chat:/c","changes":{"activity":null,"title":"T"}}`
	a, err := protocol.UnmarshalStateAction([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	u := a.(*protocol.SessionChatUpdatedAction)
	if len(u.Changes.Cleared) != 1 || u.Changes.Cleared[0] != "activity" || u.Changes.Activity != nil {
		t.Fatalf("changes %+v", u.Changes)
	}
	out, err := protocol.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if diff, err := fixture.Diff([]byte(in), out, false); err != nil || diff != "" {
		t.Fatalf("re-encoded %s: %s %v", out, diff, err)
	}
}
