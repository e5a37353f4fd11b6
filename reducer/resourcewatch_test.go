package reducer_test

import "testing"

// The resource-watch channel spec, "State": the descriptor never changes
// over the life of a watch, and change events are not kept in state.
func TestResourceWatch(t *testing.T) {
	const state = `{"root":"file:///w","recursive":false,"excludes":{"items":["node_modules"]},"includes":{"items":["*.go"]}}`
	runChannelCases(t, "ResourceWatchState", []channelCase{{
		name:    "changed returns the same state with its filters",
		initial: state,
		actions: []string{
			`{"type":"resourceWatch/changed","changes":{"items":[{"uri":"file:///w/a.go","type":"deleted"}]}}`,
			`{"type":"resourceWatch/changed","changes":{"items":[{"uri":"file:///w/b.go","type":"renamed"}]}}`,
		},
		want: state,
		same: true,
	}, {
		name:    "actions of other channels return the same state",
		initial: state,
		actions: []string{`{"type":"terminal/cleared"}`, `{"type":"changeset/cleared"}`},
		want:    state,
		same:    true,
	}})
}
