package reducer

import "github.com/ahp-go/ahp/protocol"

// Changeset returns the state after applying a. Not yet implemented: every action
// leaves the state unchanged.
func (r Reducer) Changeset(s *protocol.ChangesetState, a protocol.StateAction) *protocol.ChangesetState {
	return s
}
