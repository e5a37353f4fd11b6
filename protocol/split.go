package protocol

// ChatState and ActiveTurn keep most of their fields in a struct they
// embed by pointer (ChatStateFields, ActiveTurnFields), so that the
// states a stream of deltas goes through share them. Setting such a field
// on a plain copy would change the original too; Clone returns a copy
// that owns them.

// noCopy makes go vet report a copy of the struct holding it (the
// copylocks check), as sync does for its types.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// splitBlock holds a split struct and its fields in one allocation.
type splitBlock[S, F any] struct {
	s S
	f F
}

// Clone returns a copy of s with its own ChatStateFields, whose fields can
// be set without changing s. The copy shares everything the fields refer
// to (the active turn, the turns, the slices and maps): replace those, do
// not modify them. A nil ChatStateFields gives empty ones.
func (s *ChatState) Clone() *ChatState {
	b := new(splitBlock[ChatState, ChatStateFields])
	if s.ChatStateFields != nil {
		b.f = *s.ChatStateFields
	}
	b.s.ChatStateFields, b.s.ActiveTurn = &b.f, s.ActiveTurn
	return &b.s
}

// Clone returns a copy of t with its own ActiveTurnFields, whose fields can
// be set without changing t. It shares the list of response parts and
// everything the fields refer to. A nil ActiveTurnFields gives empty ones.
func (t *ActiveTurn) Clone() *ActiveTurn {
	b := new(splitBlock[ActiveTurn, ActiveTurnFields])
	if t.ActiveTurnFields != nil {
		b.f = *t.ActiveTurnFields
	}
	b.s.ActiveTurnFields, b.s.ResponseParts = &b.f, t.ResponseParts
	return &b.s
}
