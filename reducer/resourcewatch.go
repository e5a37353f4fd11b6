package reducer

import "github.com/ahp-go/ahp/protocol"

// ResourceWatch returns the state after applying a. Not yet implemented: every action
// leaves the state unchanged.
func (r Reducer) ResourceWatch(s *protocol.ResourceWatchState, a protocol.StateAction) *protocol.ResourceWatchState {
	return s
}
