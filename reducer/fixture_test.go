package reducer_test

import (
	"testing"
	"time"

	"github.com/ahp-go/ahp/internal/fixture"
	"github.com/ahp-go/ahp/protocol"
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
	l.initial = v.(protocol.SnapshotState)
	for i, raw := range l.fx.Actions {
		a, err := protocol.UnmarshalStateAction(raw)
		if err != nil {
			t.Fatalf("decode action %d: %v", i, err)
		}
		l.actions = append(l.actions, a)
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
			got, err := protocol.Marshal(state)
			if err != nil {
				t.Fatal(err)
			}
			diff, err := fixture.Diff(l.expected, got, true)
			if err != nil {
				t.Fatal(err)
			}
			if diff != "" {
				t.Errorf("%s (-want +got):\n%s", l.fx.Description, diff)
			}
		})
	}
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
