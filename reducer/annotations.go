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
		return annotationsUpdate(s, a.AnnotationID, func(an *protocol.Annotation) {
			annotationsApplyUpdate(an, a)
		})
	case *protocol.AnnotationsRemovedAction:
		return annotationsRemoved(s, a)
	case *protocol.AnnotationsEntrySetAction:
		return annotationsUpdate(s, a.AnnotationID, func(an *protocol.Annotation) {
			an.Entries = annotationsUpsertEntry(an.Entries, a.Entry)
		})
	case *protocol.AnnotationsEntryRemovedAction:
		return annotationsEntryRemoved(s, a)
	}
	return s
}

// annotationsIndex returns the index of the annotation with id, or -1.
func annotationsIndex(list []protocol.Annotation, id string) int {
	return slices.IndexFunc(list, func(an protocol.Annotation) bool { return an.ID == id })
}

// annotationsSet replaces the annotation with the same id, entries and all,
// or appends it.
func annotationsSet(s *protocol.AnnotationsState, a *protocol.AnnotationsSetAction) *protocol.AnnotationsState {
	next := *s
	if i := annotationsIndex(s.Annotations, a.Annotation.ID); i >= 0 {
		next.Annotations = slices.Clone(s.Annotations)
		next.Annotations[i] = a.Annotation
	} else {
		next.Annotations = append(slices.Clip(s.Annotations), a.Annotation)
	}
	return &next
}

// annotationsUpdate applies change to a copy of the annotation with id and
// returns the state holding that copy, or s when there is no such
// annotation. change may replace the copy's fields but must not write into
// the slices, maps or pointees it shares with s.
func annotationsUpdate(s *protocol.AnnotationsState, id string, change func(*protocol.Annotation)) *protocol.AnnotationsState {
	i := annotationsIndex(s.Annotations, id)
	if i < 0 {
		return s
	}
	next := *s
	next.Annotations = slices.Clone(s.Annotations)
	change(&next.Annotations[i])
	return &next
}

// annotationsApplyUpdate writes the fields the action carries. Entries, id
// and _meta are never touched, and a range can be moved but not removed.
func annotationsApplyUpdate(an *protocol.Annotation, a *protocol.AnnotationsUpdatedAction) {
	if a.TurnID != nil {
		an.TurnID = *a.TurnID
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

// annotationsUpsertEntry returns a new slice in which e replaces the entry
// with the same id, or follows the existing entries.
func annotationsUpsertEntry(entries []protocol.AnnotationEntry, e protocol.AnnotationEntry) []protocol.AnnotationEntry {
	i := annotationsEntryIndex(entries, e.ID)
	if i < 0 {
		return append(slices.Clip(entries), e)
	}
	entries = slices.Clone(entries)
	entries[i] = e
	return entries
}

// annotationsEntryRemoved drops one entry from one annotation. The state is
// unchanged unless both exist.
func annotationsEntryRemoved(s *protocol.AnnotationsState, a *protocol.AnnotationsEntryRemovedAction) *protocol.AnnotationsState {
	i := annotationsIndex(s.Annotations, a.AnnotationID)
	if i < 0 {
		return s
	}
	entries := s.Annotations[i].Entries
	j := annotationsEntryIndex(entries, a.EntryID)
	if j < 0 {
		return s
	}
	return annotationsUpdate(s, a.AnnotationID, func(an *protocol.Annotation) {
		an.Entries = append(entries[:j:j], entries[j+1:]...)
	})
}
