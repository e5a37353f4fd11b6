package changeset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/files"
)

// The operations an uncommitted changeset offers.
const (
	// OpRevert restores a file (scope resource) or the changed lines of a
	// range (scope range) to HEAD.
	OpRevert = "revert"
	// OpCommit stages the changeset's changes (scope changeset) or one
	// file's (scope resource) and commits them.
	OpCommit = "commit"
)

// MessageMetaKey is the _meta key of invokeChangesetOperation under which
// a client may give the commit message of OpCommit, a string. Without it
// the message names the files committed.
const MessageMetaKey = "ahp-go/message"

// Invoke runs a changeset operation. State changes reach subscribers as
// changeset actions; the operation's status is running while it runs, and
// error (with the cause) when it fails.
func (m *Manager) Invoke(ctx context.Context, p *protocol.InvokeChangesetOperationParams) (*protocol.InvokeChangesetOperationResult, error) {
	t, s, err := m.lookup(p.Channel)
	if err != nil {
		return nil, err
	}
	st, _ := m.h.State(s.uri).(*protocol.ChangesetState)
	if st == nil {
		return nil, &protocol.Error{Code: protocol.CodeNotFound, Message: "no changeset " + clip(p.Channel)}
	}
	i := slices.IndexFunc(st.Operations, func(o protocol.ChangesetOperation) bool { return o.ID == p.OperationID })
	if i < 0 {
		return nil, invalid("the changeset has no operation %q", clip(p.OperationID))
	}
	op := st.Operations[i]
	scope := protocol.ChangesetOperationScopeChangeset
	if p.Target != nil {
		scope = protocol.ChangesetOperationScope(p.Target.Kind())
	}
	if !slices.Contains(op.Scopes, scope) {
		return nil, invalid("operation %q cannot be invoked with scope %q (it takes %v)", op.ID, scope, op.Scopes)
	}
	if op.Status == protocol.ChangesetOperationStatusDisabled {
		return nil, invalid("operation %q is disabled", op.ID)
	}
	var message string
	if raw, ok := p.Meta[MessageMetaKey]; ok {
		if err := protocol.Unmarshal(raw, &message); err != nil || strings.TrimSpace(message) == "" {
			return nil, invalid("_meta[%q] must be a non-empty string", MessageMetaKey)
		}
	}

	res, err := t.invoke(ctx, s, op, p.Target, message)
	// What the operation changed shows in the changeset before the answer
	// goes out.
	t.refresh(ctx)
	return res, err
}

// invoke runs one operation, with the tracker's work lock held.
func (t *tracker) invoke(ctx context.Context, s *set, op protocol.ChangesetOperation, tgt protocol.ChangesetOperationTarget, message string) (*protocol.InvokeChangesetOperationResult, error) {
	m := t.m
	t.work.Lock()
	defer t.work.Unlock()
	// The target must be a file of the changeset as last computed.
	var target *fileEntry
	var sideBefore bool
	var rng *protocol.TextRange
	var err error
	switch tg := tgt.(type) {
	case *protocol.ChangesetOperationTargetResource:
		if target, err = t.fileFor(s, tg.Resource); err != nil {
			return nil, err
		}
		sideBefore = tg.Side != nil && *tg.Side == "before"
	case *protocol.ChangesetOperationTargetRange:
		if target, err = t.fileFor(s, tg.Resource); err != nil {
			return nil, err
		}
		sideBefore = tg.Side != nil && *tg.Side == "before"
		rng = &tg.Range
		if rng.Start.Line < 0 || rng.End.Line < rng.Start.Line {
			return nil, invalid("the range's end is before its start")
		}
	case nil:
	default:
		return nil, invalid("unknown target kind %q", tgt.Kind())
	}

	m.h.Publish(s.uri, &protocol.ChangesetOperationStatusChangedAction{OperationID: op.ID, Status: protocol.ChangesetOperationStatusRunning})
	var res *protocol.InvokeChangesetOperationResult
	switch op.ID {
	case OpRevert:
		if rng != nil {
			res, err = s.revertRange(ctx, target, *rng, sideBefore)
		} else {
			res, err = s.revertFile(ctx, target)
		}
	case OpCommit:
		res, err = s.commit(ctx, target, message)
	default:
		err = invalid("operation %q is not known", op.ID)
	}
	if err != nil {
		var pe *protocol.Error
		if !errors.As(err, &pe) {
			pe = &protocol.Error{Code: protocol.CodeInternalError, Message: op.ID + ": " + err.Error()}
		}
		m.h.Publish(s.uri, &protocol.ChangesetOperationStatusChangedAction{OperationID: op.ID, Status: protocol.ChangesetOperationStatusError,
			Error: &protocol.ErrorInfo{ErrorType: "operationFailed", Message: pe.Message}})
		return nil, pe
	}
	m.h.Publish(s.uri, &protocol.ChangesetOperationStatusChangedAction{OperationID: op.ID, Status: protocol.ChangesetOperationStatusIdle})
	return res, nil
}

func invalid(format string, args ...any) error {
	return &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// fileFor finds the changeset's file a target URI names: the file's id or
// the URI of either of its sides. Anything else (a file outside the
// directory, a path with .. or NUL, a file that did not change) is
// refused.
func (t *tracker) fileFor(s *set, uri string) (*fileEntry, error) {
	if strings.ContainsRune(uri, 0) {
		return nil, invalid("the target resource has a NUL byte")
	}
	p, err := files.PathOf(uri)
	if err != nil {
		return nil, invalid("the target resource: %v", err)
	}
	if rel, err := filepath.Rel(s.dir, p); err != nil || !filepath.IsLocal(rel) {
		return nil, invalid("%s is outside the changeset's directory", clip(uri))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range s.files {
		f := &s.files[i]
		e := f.file.Edit
		if f.file.ID == uri || (e.After != nil && e.After.URI == uri) || (e.Before != nil && e.Before.URI == uri) {
			c := *f
			return &c, nil
		}
	}
	return nil, &protocol.Error{Code: protocol.CodeNotFound, Message: fmt.Sprintf("%s is not a file of the changeset", clip(uri))}
}

// revertFile restores one file to HEAD: a changed or deleted file gets its
// HEAD content back (in the index and the working tree), a new file is
// removed, a renamed one goes back to its old name.
func (s *set) revertFile(ctx context.Context, f *fileEntry) (*protocol.InvokeChangesetOperationResult, error) {
	if f == nil {
		return nil, invalid("revert needs a target file")
	}
	c := f.c
	g := s.g
	s.t.mu.Lock()
	head := s.from
	s.t.mu.Unlock()
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	remove := func(rel string) error {
		if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	switch {
	case c.status == untracked:
		if err := remove(c.path); err != nil {
			return nil, err
		}
	case c.status == added || c.oldMode == "000000":
		if _, err := g.run(ctx, nil, "rm", "-q", "--cached", "--ignore-unmatch", "--", c.path); err != nil {
			return nil, err
		}
		if err := remove(c.path); err != nil {
			return nil, err
		}
	case c.status == renamed || c.status == copied:
		if _, err := g.run(ctx, nil, "rm", "-q", "--cached", "--ignore-unmatch", "--", c.path); err != nil {
			return nil, err
		}
		if err := remove(c.path); err != nil {
			return nil, err
		}
		if c.status == renamed {
			if _, err := g.run(ctx, nil, "restore", "--source="+head, "--staged", "--worktree", "--", c.oldPath); err != nil {
				return nil, err
			}
		}
	default:
		if _, err := g.run(ctx, nil, "restore", "--source="+head, "--staged", "--worktree", "--", c.path); err != nil {
			return nil, err
		}
	}
	return &protocol.InvokeChangesetOperationResult{Message: protocol.Ptr(protocol.PlainText("Reverted " + filepath.ToSlash(c.path)))}, nil
}

// revertRange restores the changed lines a range touches: every hunk of
// the file's diff against HEAD that overlaps the range (in after-side
// lines, or before-side ones when sideBefore) gets its HEAD lines back;
// the rest of the file is left as it is.
func (s *set) revertRange(ctx context.Context, f *fileEntry, r protocol.TextRange, sideBefore bool) (*protocol.InvokeChangesetOperationResult, error) {
	c := f.c
	if c.status == deleted {
		return s.revertFile(ctx, f)
	}
	if c.binary {
		return nil, invalid("%s is binary: revert the whole file", filepath.ToSlash(c.path))
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	info, err := root.Lstat(c.path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, invalid("%s is not a regular file", filepath.ToSlash(c.path))
	}
	if info.Size() > s.t.m.opts.MaxContentBytes {
		return nil, invalid("%s is over the size limit for a range revert", filepath.ToSlash(c.path))
	}
	data, err := root.ReadFile(c.path)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var hunks []hunk
	if c.status == untracked || c.status == added || c.oldMode == "000000" {
		// The whole file is one added hunk.
		hunks = []hunk{{oldStart: 0, oldCount: 0, newStart: 1, newCount: len(lines)}}
	} else {
		s.t.mu.Lock()
		head := s.from
		s.t.mu.Unlock()
		var binary bool
		hunks, binary, err = s.g.hunks(ctx, head, c.path)
		if err != nil {
			return nil, err
		}
		if binary {
			return nil, invalid("%s is binary: revert the whole file", filepath.ToSlash(c.path))
		}
	}
	lo, hi := int(r.Start.Line), int(r.End.Line)
	if hi > lo && r.End.Character == 0 {
		hi-- // a range ending at the start of a line does not touch it
	}
	var out []string
	next, reverted := 0, 0 // next after-side line (0-based) not yet copied
	for _, h := range hunks {
		start, count := h.newStart-1, h.newCount // after-side, 0-based
		if count == 0 {
			start = h.newStart // a pure deletion sits after line newStart
		}
		var touches bool
		if sideBefore {
			ostart, ocount := h.oldStart-1, h.oldCount
			if ocount == 0 {
				touches = lo <= h.oldStart && h.oldStart-1 <= hi
			} else {
				touches = ostart <= hi && lo < ostart+ocount
			}
		} else if count == 0 {
			touches = lo <= start && start-1 <= hi
		} else {
			touches = start <= hi && lo < start+count
		}
		if !touches {
			continue
		}
		if start > len(lines) || start+count > len(lines) || start < next {
			return nil, fmt.Errorf("the file changed while its diff was read; try again")
		}
		out = append(out, lines[next:start]...)
		out = append(out, h.removed...)
		next = start + count
		reverted++
	}
	if reverted == 0 {
		return nil, invalid("the range touches no changed lines of %s", filepath.ToSlash(c.path))
	}
	out = append(out, lines[next:]...)
	// A reverted last hunk may leave the previous line without its
	// ending while more lines follow; git's hunks always carry their
	// endings, so this only matters for the file's own last line.
	if err := root.WriteFile(c.path, []byte(strings.Join(out, "")), info.Mode().Perm()); err != nil {
		return nil, err
	}
	return &protocol.InvokeChangesetOperationResult{Message: protocol.Ptr(protocol.PlainText(fmt.Sprintf("Reverted %d change(s) in %s", reverted, filepath.ToSlash(c.path))))}, nil
}

// commit stages the changeset's changes, or one file's, and commits them.
// Only paths inside the changeset's directory are committed, whatever
// else the index holds.
func (s *set) commit(ctx context.Context, f *fileEntry, message string) (*protocol.InvokeChangesetOperationResult, error) {
	s.t.mu.Lock()
	n := len(s.files)
	s.t.mu.Unlock()
	paths := []string{"."}
	if f != nil {
		paths = []string{f.c.path}
		if f.c.oldPath != f.c.path {
			paths = append(paths, f.c.oldPath)
		}
		n = 1
	}
	if n == 0 {
		return nil, invalid("there is nothing to commit")
	}
	if message == "" {
		if f != nil {
			message = "Update " + filepath.ToSlash(f.c.path)
		} else {
			message = fmt.Sprintf("Update %d file(s)", n)
		}
	}
	if _, err := s.g.run(ctx, nil, append([]string{"add", "-A", "--"}, paths...)...); err != nil {
		return nil, err
	}
	if _, err := s.g.run(ctx, []byte(message), append([]string{"commit", "-q", "-F", "-", "--"}, paths...)...); err != nil {
		return nil, err
	}
	head, _ := s.g.head(ctx)
	short := head
	if len(short) > 12 {
		short = short[:12]
	}
	return &protocol.InvokeChangesetOperationResult{Message: protocol.Ptr(protocol.PlainText("Committed " + short))}, nil
}
