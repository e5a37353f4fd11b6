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

// cloneSplit returns a split struct in a new block with a copy of the
// fields f (empty ones when f is nil), set on it by own, which also copies
// the struct's own members.
func cloneSplit[S, F any](f *F, own func(*S, *F)) *S {
	b := new(splitBlock[S, F])
	if f != nil {
		b.f = *f
	}
	own(&b.s, &b.f)
	return &b.s
}

// Clone returns a copy of s with its own ChatStateFields, whose fields can
// be set without changing s. The copy shares everything the fields refer
// to (the active turn, the turns, the slices and maps): replace those, do
// not modify them. A nil ChatStateFields gives empty ones.
func (s *ChatState) Clone() *ChatState {
	return cloneSplit(s.ChatStateFields, func(c *ChatState, f *ChatStateFields) {
		c.ChatStateFields, c.ActiveTurn = f, s.ActiveTurn
	})
}

// Clone returns a copy of t with its own ActiveTurnFields, whose fields can
// be set without changing t. It shares the list of response parts and
// everything the fields refer to. A nil ActiveTurnFields gives empty ones.
func (t *ActiveTurn) Clone() *ActiveTurn {
	return cloneSplit(t.ActiveTurnFields, func(c *ActiveTurn, f *ActiveTurnFields) {
		c.ActiveTurnFields, c.ResponseParts = f, t.ResponseParts
	})
}
