package reducer

import "github.com/ahp-go/ahp/protocol"

// ResourceWatch returns the state after applying a resource-watch action,
// which is always s itself.
//
// The state only describes what is watched and is fixed when the watch is
// created. resourceWatch/changed carries a batch of change events that
// subscribers read off the action stream; the state keeps no history of
// them.
func (r Reducer) ResourceWatch(s *protocol.ResourceWatchState, a protocol.StateAction) *protocol.ResourceWatchState {
	return s
}
