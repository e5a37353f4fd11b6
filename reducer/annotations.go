package reducer

import (
	"slices"

	"github.com/ahp-go/ahp/protocol"
)

// Annotations returns the state after applying an annotations-channel
// action.
//
// Annotations, and the entries inside each, keep the order in which they
// were first set: an upsert of a known id replaces in place, a new id is
// appended. The reducer applies actions as given and does not enforce the
// rule that an annotation keeps at least one entry; that is up to whoever
// dispatches (annotations/removed, not annotations/entryRemoved, drops the
// last entry). Actions naming an annotation or entry that does not exist,
// actions of other channels, unknown actions and a nil state return s
// itself.
func (r Reducer) Annotations(s *protocol.AnnotationsState, a protocol.StateAction) *protocol.AnnotationsState {
	if s == nil {
		return s
	}
	switch a := a.(type) {
	case *protocol.AnnotationsSetAction:
		return annotationsSet(s, a)
	case *protocol.AnnotationsUpdatedAction:
		return annotationsUpdated(s, a)
	case *protocol.AnnotationsRemovedAction:
		return annotationsRemoved(s, a)
	case *protocol.AnnotationsEntrySetAction:
		return annotationsEntrySet(s, a)
	case *protocol.AnnotationsEntryRemovedAction:
		return annotationsEntryRemoved(s, a)
	}
	return s
}

// annotationsIndex returns the index of the annotation with id, or -1.
func annotationsIndex(list []protocol.Annotation, id string) int {
	return slices.IndexFunc(list, func(an protocol.Annotation) bool { return an.ID == id })
}

// annotationsReplace returns a copy of s in which an takes the place of
// the annotation at index i.
func annotationsReplace(s *protocol.AnnotationsState, i int, an protocol.Annotation) *protocol.AnnotationsState {
	next := *s
	next.Annotations = slices.Clone(s.Annotations)
	next.Annotations[i] = an
	return &next
}

// annotationsSet replaces the annotation with the same id, entries and all,
// or appends it.
func annotationsSet(s *protocol.AnnotationsState, a *protocol.AnnotationsSetAction) *protocol.AnnotationsState {
	if i := annotationsIndex(s.Annotations, a.Annotation.ID); i >= 0 {
		return annotationsReplace(s, i, a.Annotation)
	}
	next := *s
	next.Annotations = append(slices.Clip(s.Annotations), a.Annotation)
	return &next
}

// annotationsUpdated writes the fields the action carries. Entries, id and
// _meta are never touched, and a range can be moved but not removed.
func annotationsUpdated(s *protocol.AnnotationsState, a *protocol.AnnotationsUpdatedAction) *protocol.AnnotationsState {
	i := annotationsIndex(s.Annotations, a.AnnotationID)
	if i < 0 {
		return s
	}
	an := s.Annotations[i]
	if a.Origin != nil {
		an.Origin = a.Origin
	}
	if a.TurnID != nil {
		an.TurnID = a.TurnID
	}
	if a.Resource != nil {
		an.Resource = *a.Resource
	}
	if a.Range != nil {
		an.Range = a.Range
	}
	if a.Resolved != nil {
		an.Resolved = *a.Resolved
	}
	return annotationsReplace(s, i, an)
}

// annotationsRemoved drops the annotation with the given id and all its
// entries.
func annotationsRemoved(s *protocol.AnnotationsState, a *protocol.AnnotationsRemovedAction) *protocol.AnnotationsState {
	i := annotationsIndex(s.Annotations, a.AnnotationID)
	if i < 0 {
		return s
	}
	next := *s
	next.Annotations = append(s.Annotations[:i:i], s.Annotations[i+1:]...)
	return &next
}

// annotationsEntryIndex returns the index of the entry with id, or -1.
func annotationsEntryIndex(entries []protocol.AnnotationEntry, id string) int {
	return slices.IndexFunc(entries, func(e protocol.AnnotationEntry) bool { return e.ID == id })
}

// annotationsEntrySet replaces the entry with the same id in the named
// annotation, or appends it there.
func annotationsEntrySet(s *protocol.AnnotationsState, a *protocol.AnnotationsEntrySetAction) *protocol.AnnotationsState {
	i := annotationsIndex(s.Annotations, a.AnnotationID)
	if i < 0 {
		return s
	}
	an := s.Annotations[i]
	if j := annotationsEntryIndex(an.Entries, a.Entry.ID); j >= 0 {
		an.Entries = slices.Clone(an.Entries)
		an.Entries[j] = a.Entry
	} else {
		an.Entries = append(slices.Clip(an.Entries), a.Entry)
	}
	return annotationsReplace(s, i, an)
}

// annotationsEntryRemoved drops one entry from one annotation. The state is
// unchanged unless both exist.
func annotationsEntryRemoved(s *protocol.AnnotationsState, a *protocol.AnnotationsEntryRemovedAction) *protocol.AnnotationsState {
	i := annotationsIndex(s.Annotations, a.AnnotationID)
	if i < 0 {
		return s
	}
	an := s.Annotations[i]
	j := annotationsEntryIndex(an.Entries, a.EntryID)
	if j < 0 {
		return s
	}
	an.Entries = append(an.Entries[:j:j], an.Entries[j+1:]...)
	return annotationsReplace(s, i, an)
}
