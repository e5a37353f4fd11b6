package reducer

import (
	"slices"

	"github.com/ahp-go/ahp/protocol"
)

// Changeset returns the state after applying a changeset-channel action.
//
// Files and operations are kept in the order they first appeared: an
// upsert of a known id replaces the entry in place, a new id is appended.
// Actions that name a file or operation the changeset does not hold,
// actions of other channels, unknown actions and a nil state return s
// itself.
func (r Reducer) Changeset(s *protocol.ChangesetState, a protocol.StateAction) *protocol.ChangesetState {
	if s == nil {
		return s
	}
	switch a := a.(type) {
	case *protocol.ChangesetStatusChangedAction:
		return changesetStatusChanged(s, a)
	case *protocol.ChangesetFileSetAction:
		return changesetFileSet(s, a)
	case *protocol.ChangesetFileRemovedAction:
		return changesetFileRemoved(s, a)
	case *protocol.ChangesetFilesReviewChangedAction:
		return changesetFilesReviewChanged(s, a)
	case *protocol.ChangesetContentChangedAction:
		return changesetContentChanged(s, a)
	case *protocol.ChangesetOperationsChangedAction:
		// Full replacement; an absent list removes every operation.
		next := *s
		next.Operations = a.Operations
		return &next
	case *protocol.ChangesetOperationStatusChangedAction:
		return changesetOperationStatusChanged(s, a)
	case *protocol.ChangesetClearedAction:
		if len(s.Files) == 0 {
			return s
		}
		next := *s
		next.Files = []protocol.ChangesetFile{}
		return &next
	}
	return s
}

// changesetStatusChanged sets the status. The error travels with it: it is
// kept only when the new status is error, so a changeset that recovers
// drops its stale error.
func changesetStatusChanged(s *protocol.ChangesetState, a *protocol.ChangesetStatusChangedAction) *protocol.ChangesetState {
	next := *s
	next.Status = a.Status
	next.Error = nil
	if a.Status == protocol.ChangesetStatusError {
		next.Error = a.Error
	}
	return &next
}

// changesetFileIndex returns the index of the file with id, or -1.
func changesetFileIndex(files []protocol.ChangesetFile, id string) int {
	return slices.IndexFunc(files, func(f protocol.ChangesetFile) bool { return f.ID == id })
}

// changesetFileSet replaces the file with the same id, or appends it. The
// replacement is taken whole, so a file re-sent without reviewed is no
// longer reviewed.
func changesetFileSet(s *protocol.ChangesetState, a *protocol.ChangesetFileSetAction) *protocol.ChangesetState {
	next := *s
	if i := changesetFileIndex(s.Files, a.File.ID); i >= 0 {
		next.Files = slices.Clone(s.Files)
		next.Files[i] = a.File
	} else {
		next.Files = append(slices.Clip(s.Files), a.File)
	}
	return &next
}

// changesetFileRemoved drops the file with the given id.
func changesetFileRemoved(s *protocol.ChangesetState, a *protocol.ChangesetFileRemovedAction) *protocol.ChangesetState {
	i := changesetFileIndex(s.Files, a.FileID)
	if i < 0 {
		return s
	}
	next := *s
	next.Files = append(s.Files[:i:i], s.Files[i+1:]...)
	return &next
}

// changesetFilesReviewChanged sets reviewed on every listed file the
// changeset holds, touching nothing else of those files. Unknown ids are
// ignored.
func changesetFilesReviewChanged(s *protocol.ChangesetState, a *protocol.ChangesetFilesReviewChangedAction) *protocol.ChangesetState {
	ids := make(map[string]bool, len(a.Files))
	for _, id := range a.Files {
		ids[id] = true
	}
	var files []protocol.ChangesetFile
	for i, f := range s.Files {
		if !ids[f.ID] {
			continue
		}
		if files == nil {
			files = slices.Clone(s.Files)
		}
		files[i].Reviewed = protocol.Ptr(a.Reviewed)
	}
	if files == nil {
		return s
	}
	next := *s
	next.Files = files
	return &next
}

// changesetContentChanged replaces the files, and the operations when the
// action carries them. The error is replaced too: an action without one
// clears it. The status is left alone.
func changesetContentChanged(s *protocol.ChangesetState, a *protocol.ChangesetContentChangedAction) *protocol.ChangesetState {
	next := *s
	next.Files = a.Files
	if next.Files == nil {
		next.Files = []protocol.ChangesetFile{}
	}
	if a.Operations != nil {
		next.Operations = a.Operations
	}
	next.Error = a.Error
	return &next
}

// changesetOperationStatusChanged sets the status of one operation. As
// with the changeset status, the error is kept only for the error status.
func changesetOperationStatusChanged(s *protocol.ChangesetState, a *protocol.ChangesetOperationStatusChangedAction) *protocol.ChangesetState {
	i := slices.IndexFunc(s.Operations, func(op protocol.ChangesetOperation) bool { return op.ID == a.OperationID })
	if i < 0 {
		return s
	}
	op := s.Operations[i]
	op.Status = a.Status
	op.Error = nil
	if a.Status == protocol.ChangesetOperationStatusError {
		op.Error = a.Error
	}
	next := *s
	next.Operations = slices.Clone(s.Operations)
	next.Operations[i] = op
	return &next
}
