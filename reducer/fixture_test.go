package reducer_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ahp-go/ahp/internal/fixture"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
	"github.com/ahp-go/ahp/reducer"
)

// frozen is the clock of the reference fixture suite: 9999 ms after the
// epoch, formatted 1970-01-01T00:00:09.999Z.
var frozen = reducer.Reducer{Now: func() time.Time { return time.UnixMilli(9999) }}

var stateTypes = map[string]string{
	"root":          "RootState",
	"session":       "SessionState",
	"chat":          "ChatState",
	"terminal":      "TerminalState",
	"changeset":     "ChangesetState",
	"annotations":   "AnnotationsState",
	"resourceWatch": "ResourceWatchState",
}

// legacy is the view of the version the fixtures were written for: they
// are 0.8.0 shapes. Each fixture's states and actions come up to 1.x
// through it before reducing and the result goes back down before the
// comparison, so the fixtures check the 1.x reducers and the conversions
// of the changed shapes together.
var legacy = view.For("0.8.0")

// fixtureChannel is the channel the fixtures' values are taken to belong
// to, for conversions that need one (an annotation's origin names its
// session).
func fixtureChannel(reducer string) string {
	if reducer == "annotations" {
		return protocol.AnnotationsURI("fixture")
	}
	return ""
}

type loaded struct {
	fx       fixture.Reducer
	initial  protocol.SnapshotState
	actions  []protocol.StateAction
	expected []byte
}

func load(t *testing.T, path string) loaded {
	t.Helper()
	var l loaded
	fixture.Load(t, path, &l.fx)
	typ, ok := stateTypes[l.fx.Reducer]
	if !ok {
		t.Fatalf("unknown reducer %q", l.fx.Reducer)
	}
	v, err := protocol.Decode(typ, l.fx.Initial)
	if err != nil {
		t.Fatalf("decode initial: %v", err)
	}
	ch := fixtureChannel(l.fx.Reducer)
	l.initial = legacy.UpState(ch, v.(protocol.SnapshotState))
	for i, raw := range l.fx.Actions {
		a, err := protocol.UnmarshalStateAction(raw)
		if err != nil {
			t.Fatalf("decode action %d: %v", i, err)
		}
		l.actions = append(l.actions, legacy.UpAction(ch, a))
	}
	l.expected = l.fx.Expected
	return l
}

// TestFixtures runs every reducer conformance fixture: the actions applied
// in order to the initial state, with the clock frozen at 9999 ms, must give
// the expected state, compared after removing null members on both sides.
// Fixtures with action types the reducer does not know expect the state
// unchanged.
func TestFixtures(t *testing.T) {
	files := fixture.Files(t, "reducers")
	for _, name := range fixture.Sorted(files) {
		t.Run(name, func(t *testing.T) {
			l := load(t, files[name])
			state := l.initial
			for _, a := range l.actions {
				state = frozen.Apply(state, a)
			}
			got, err := protocol.Marshal(legacy.State(state))
			if err != nil {
				t.Fatal(err)
			}
			want := l.expected
			if l.fx.Reducer == "chat" {
				want, got = withoutClockStamp(t, want, got)
			}
			diff, err := fixture.Diff(want, got, true)
			if err != nil {
				t.Fatal(err)
			}
			if diff != "" {
				t.Errorf("%s (-want +got):\n%s", l.fx.Description, diff)
			}
		})
	}
}

// frozenStamp is modifiedAt as the frozen clock writes it.
const frozenStamp = "1970-01-01T00:00:09.999Z"

// withoutClockStamp drops modifiedAt from both chat states when the fixture
// expects the stamp of a local clock. Since 0.9.0 the chat reducer takes
// modifiedAt from the actions' own data instead ("Chat reducers now derive
// modifiedAt from turn action data instead of local wall clocks",
// spec-1.1/CHANGELOG.md, 0.9.0, Fixed): a turn's start for chat/turnStarted,
// its start plus duration when it ends, and no change otherwise. That rule
// has table tests of its own (TestChatModifiedAt).
func withoutClockStamp(t *testing.T, want, got []byte) ([]byte, []byte) {
	t.Helper()
	var w, g map[string]any
	if json.Unmarshal(want, &w) != nil || json.Unmarshal(got, &g) != nil || w["modifiedAt"] != frozenStamp {
		return want, got
	}
	delete(w, "modifiedAt")
	delete(g, "modifiedAt")
	want, _ = json.Marshal(w)
	got, _ = json.Marshal(g)
	return want, got
}

// TestFixturesDoNotMutate runs every fixture again and checks that no
// reducer modified a state it was given: each intermediate state must
// encode the same after the whole sequence as it did when it was produced.
func TestFixturesDoNotMutate(t *testing.T) {
	files := fixture.Files(t, "reducers")
	for _, name := range fixture.Sorted(files) {
		t.Run(name, func(t *testing.T) {
			l := load(t, files[name])
			states := []protocol.SnapshotState{l.initial}
			var snapshots [][]byte
			for _, a := range l.actions {
				prev := states[len(states)-1]
				b, err := protocol.Marshal(prev)
				if err != nil {
					t.Fatal(err)
				}
				snapshots = append(snapshots, b)
				states = append(states, frozen.Apply(prev, a))
			}
			for i, want := range snapshots {
				got, err := protocol.Marshal(states[i])
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(want) {
					t.Errorf("state %d was modified by applying action %d:\nbefore %s\nafter  %s", i, i, want, got)
				}
			}
		})
	}
}
