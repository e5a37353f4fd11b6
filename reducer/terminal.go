package reducer

import "github.com/ahp-go/ahp/protocol"

// Terminal returns the state after applying a. Not yet implemented: every action
// leaves the state unchanged.
func (r Reducer) Terminal(s *protocol.TerminalState, a protocol.StateAction) *protocol.TerminalState {
	return s
}
