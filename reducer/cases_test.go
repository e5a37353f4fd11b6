package reducer_test

import (
	"testing"

	"github.com/ahp-go/ahp/internal/fixture"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// channelCase is one table test written like a conformance fixture: JSON
// actions applied in order to a JSON state must give the wanted JSON
// state. With same, every action must return its input state itself.
type channelCase struct {
	name    string
	initial string
	actions []string
	want    string
	same    bool
}

// runChannelCases runs cases against states of the wire type typ (such as
// "TerminalState"). Besides the wanted result it checks that no action
// modified the state it was given.
func runChannelCases(t *testing.T, typ string, cases []channelCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := protocol.Decode(typ, []byte(tc.initial))
			if err != nil {
				t.Fatalf("decode initial: %v", err)
			}
			state := v.(protocol.SnapshotState)
			for i, raw := range tc.actions {
				a, err := protocol.UnmarshalStateAction([]byte(raw))
				if err != nil {
					t.Fatalf("decode action %d: %v", i, err)
				}
				before := channelMarshal(t, state)
				next := reducer.Apply(state, a)
				if after := channelMarshal(t, state); after != before {
					t.Errorf("action %d modified its input:\nbefore %s\nafter  %s", i, before, after)
				}
				if tc.same && next != state {
					t.Errorf("action %d returned a new state, want the input itself", i)
				}
				state = next
			}
			diff, err := fixture.Diff([]byte(tc.want), []byte(channelMarshal(t, state)), false)
			if err != nil {
				t.Fatal(err)
			}
			if diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func channelMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := protocol.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
