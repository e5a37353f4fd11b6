package reducer

import "github.com/ahp-go/ahp/protocol"

// Annotations returns the state after applying a. Not yet implemented: every action
// leaves the state unchanged.
func (r Reducer) Annotations(s *protocol.AnnotationsState, a protocol.StateAction) *protocol.AnnotationsState {
	return s
}
