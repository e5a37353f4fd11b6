// Package changeset serves a host's changesets: for each session working
// directory inside a git repository, the uncommitted changes against HEAD
// and, on a branch with a base, the branch's changes against its fork
// point. The session's and each chat's changesets catalogues advertise
// them, each is a changeset channel (ahp-changeset:/<session
// key>/<kind>/<key>, the session key a digest of the session's URI, so
// the same after a restart), and the chats' changes
// summaries roll up from them.
//
// Files carry before and after content references that resourceRead
// serves: working-tree files by their file: URI, git objects by
// ahp-changeset-content: URIs (see Manager.Read).
//
// Changesets are recomputed after every turn and when files in the
// working directory change, with the status recomputing while that runs.
// No git command or disk access happens under the host's lock: what the
// host reports (Manager's host.SessionObserver methods) is queued for one
// goroutine per session.
package changeset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/files"
	"github.com/ahp-go/ahp/workspace/watch"
)

// Defaults for Options.
const (
	DefaultDebounce        = 300 * time.Millisecond
	DefaultMaxContentBytes = 16 << 20
	DefaultMaxFiles        = 2000
	// maxCountBytes bounds how much of an untracked file is read to count
	// its lines; a larger file is listed without line counts.
	maxCountBytes = 8 << 20
	// maxCountTotal bounds what one computation reads to count the lines
	// of untracked files; files past it are listed without line counts.
	maxCountTotal = 64 << 20
)

// Kinds of changeset, as Changeset.changeKind names them.
const (
	KindUncommitted = "uncommitted"
	KindBranch      = "branch"
)

// Options configures a Manager.
type Options struct {
	// Git is the git executable. Empty means "git" on $PATH; without one
	// no changesets are offered.
	Git string
	// Debounce is how long file changes gather before a recompute. Zero
	// means DefaultDebounce.
	Debounce time.Duration
	// MaxContentBytes bounds one content read. Zero means
	// DefaultMaxContentBytes.
	MaxContentBytes int64
	// MaxFiles bounds the files a changeset lists, so that a tree with
	// thousands of untracked files cannot make a state too large to send.
	// Past it the first MaxFiles (by path) are listed and the status is
	// error, saying how many there are; the changes summaries still count
	// them all. Zero means DefaultMaxFiles.
	MaxFiles int
	// Logger receives the manager's logs. Nil discards them.
	Logger *slog.Logger
}

// Manager follows a host's sessions and keeps their changesets. Create one
// with New; its methods are safe for concurrent use.
type Manager struct {
	h    host.WorkspaceHost
	opts Options
	log  *slog.Logger
	git  string // "" when git is missing

	mu       sync.Mutex
	closed   bool
	sessions map[string]*tracker // by session URI
	byID     map[string]*tracker // by tracker.id
	stop     chan struct{}
	ctx      context.Context // ends with Close, and with it any git command
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// New returns a manager for h.
func New(h host.WorkspaceHost, opts *Options) *Manager {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.MaxContentBytes <= 0 {
		o.MaxContentBytes = DefaultMaxContentBytes
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	bin := o.Git
	if bin == "" {
		bin = "git"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		o.Logger.Info("changesets are off: git is not found", "git", bin, "err", err)
		path = ""
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{h: h, opts: o, log: o.Logger, git: path, sessions: map[string]*tracker{}, byID: map[string]*tracker{}, stop: make(chan struct{}), ctx: ctx, cancel: cancel}
}

// SessionOpened implements host.SessionObserver.
func (m *Manager) SessionOpened(session string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.git == "" {
		return
	}
	if _, ok := m.sessions[session]; ok {
		return
	}
	t := newTracker(m, session)
	m.sessions[session] = t
	m.byID[t.id] = t
	m.wg.Go(t.run)
	t.poke(false)
}

// SessionClosed implements host.SessionObserver.
func (m *Manager) SessionClosed(session string) {
	m.mu.Lock()
	t := m.sessions[session]
	delete(m.sessions, session)
	if t != nil {
		delete(m.byID, t.id)
	}
	m.mu.Unlock()
	if t != nil {
		t.goneOnce.Do(func() { close(t.gone) })
	}
}

// Committed implements host.SessionObserver: the end of a turn, and changes
// to working directories or to the chat catalog, ask for a recompute.
func (m *Manager) Committed(session, channel string, a protocol.StateAction) {
	if !triggers(a) {
		return
	}
	m.mu.Lock()
	t := m.sessions[session]
	m.mu.Unlock()
	if t != nil {
		t.poke(false)
	}
}

// triggers reports the actions after which changesets are recomputed.
func triggers(a protocol.StateAction) bool {
	switch a := a.(type) {
	case *protocol.ChatTurnCompleteAction, *protocol.ChatTurnCancelledAction, *protocol.ChatErrorAction,
		*protocol.SessionChatAddedAction, *protocol.SessionChatRemovedAction,
		*protocol.SessionWorkingDirectorySetAction, *protocol.SessionWorkingDirectoryRemovedAction,
		*protocol.SessionWorkingDirectoryReplacedAction,
		*protocol.ChatWorkingDirectorySetAction, *protocol.ChatWorkingDirectoryRemovedAction,
		*protocol.SessionReadyAction:
		return true
	case *protocol.SessionChatUpdatedAction:
		return a.Changes.WorkingDirectories != nil || slices.Contains(a.Changes.Cleared, "workingDirectories")
	}
	return false
}

// Close stops every session's goroutine and closes the changeset
// channels.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	close(m.stop)
	m.mu.Unlock()
	m.cancel()
	m.wg.Wait()
}

// tracker keeps one session's changesets.
type tracker struct {
	m       *Manager
	session string // the session's URI
	id      string // sessionKey(session), in the URIs of its changesets

	kick     chan struct{} // recompute now
	fsKick   chan struct{} // files changed: recompute after the debounce
	gone     chan struct{} // closed when the session is disposed
	goneOnce sync.Once

	// work serialises recomputes and operations.
	work sync.Mutex

	mu      sync.Mutex      // guards sets, read by content reads and operations
	sets    map[string]*set // by channel URI
	watches map[string]*watch.Watch
}

func newTracker(m *Manager, session string) *tracker {
	return &tracker{
		m: m, session: session, id: sessionKey(session),
		kick: make(chan struct{}, 1), fsKick: make(chan struct{}, 1), gone: make(chan struct{}),
		sets: map[string]*set{}, watches: map[string]*watch.Watch{},
	}
}

// poke asks for a recompute; it never blocks.
func (t *tracker) poke(fs bool) {
	c := t.kick
	if fs {
		c = t.fsKick
	}
	select {
	case c <- struct{}{}:
	default:
	}
}

func (t *tracker) run() {
	ctx, cancel := context.WithCancel(t.m.ctx)
	defer cancel()
	var debounce <-chan time.Time
	for {
		select {
		case <-t.m.stop:
			cancel()
			t.teardown(false)
			return
		case <-t.gone:
			cancel()
			t.teardown(true)
			return
		case <-t.kick:
		case <-t.fsKick:
			if debounce == nil {
				debounce = time.After(t.m.opts.Debounce)
			}
			continue
		case <-debounce:
		}
		debounce = nil
		t.refresh(ctx)
	}
}

// teardown stops the watches and closes the channels; when the session is
// gone its subscribers first hear changeset/cleared (the guide's
// lifecycle, step 5).
func (t *tracker) teardown(gone bool) {
	t.work.Lock()
	defer t.work.Unlock()
	t.mu.Lock()
	sets := t.sets
	watches := t.watches
	t.sets, t.watches = map[string]*set{}, map[string]*watch.Watch{}
	t.mu.Unlock()
	for _, w := range watches {
		w.Close()
	}
	for uri := range sets {
		if gone {
			t.m.h.Publish(uri, &protocol.ChangesetClearedAction{})
		}
		t.m.h.CloseChannel(uri)
	}
}

// set is one changeset: a kind over one working directory.
type set struct {
	t      *tracker
	uri    string
	kind   string
	dir    string // absolute
	dirURI string
	key    string
	g      *git

	// What the last computation found; guarded by tracker.mu.
	from, to string // the revisions compared; to "" is the working tree
	base     string // the base branch, for KindBranch
	files    []fileEntry
	err      error
	shown    bool // a full file list was published
}

// fileEntry is one file of a changeset with what it was computed from.
type fileEntry struct {
	c    change
	file protocol.ChangesetFile
}

// dirKey names a working directory inside a changeset URI.
func dirKey(dirURI string) string {
	sum := sha256.Sum256([]byte(dirURI))
	return hex.EncodeToString(sum[:6])
}

// sessionKey names a session inside its changesets' URIs: clients name
// sessions with URIs of any shape, so the key is a digest of the URI,
// the same for the same session after a restart.
func sessionKey(session string) string {
	sum := sha256.Sum256([]byte(session))
	return hex.EncodeToString(sum[:12])
}

// channelURI is the URI of a changeset channel of the session, as the
// spec's URI table gives them: ahp-changeset:/<session key>/<kind>/<key>.
func (t *tracker) channelURI(kind, key string) string {
	return protocol.ChangesetURI(t.id + "/" + kind + "/" + key)
}

// refresh replans the session's changesets from its working directories,
// recomputes each and publishes what changed.
func (t *tracker) refresh(ctx context.Context) {
	t.work.Lock()
	defer t.work.Unlock()
	h := t.m.h
	ss, ok := h.State(t.session).(*protocol.SessionState)
	if !ok {
		return
	}
	// Plan: which changesets the session's directories offer now.
	wanted := map[string]*set{}
	var order []string
	for _, d := range ss.WorkingDirectories {
		dir, err := files.PathOf(d)
		if err != nil {
			continue
		}
		g := &git{bin: t.m.git, dir: dir}
		if _, isRepo, err := g.repo(ctx); err != nil || !isRepo {
			if err != nil && ctx.Err() == nil {
				t.m.log.Debug("changeset: not reading a repository", "dir", dir, "err", err)
			}
			continue
		}
		key := dirKey(d)
		head, err := g.head(ctx)
		if err != nil {
			continue
		}
		kinds := []string{KindUncommitted}
		base, fork, hasBase := g.base(ctx, head)
		if hasBase {
			kinds = append(kinds, KindBranch)
		}
		for _, kind := range kinds {
			uri := t.channelURI(kind, key)
			if _, dup := wanted[uri]; dup {
				continue
			}
			s := &set{t: t, uri: uri, kind: kind, dir: dir, dirURI: d, key: key, g: g}
			if kind == KindBranch {
				s.from, s.to, s.base = fork, head, base
			} else {
				s.from = head
			}
			wanted[uri] = s
			order = append(order, uri)
		}
	}
	if ctx.Err() != nil {
		return
	}
	// Close the changesets no longer offered, open the new ones.
	t.mu.Lock()
	var gone []string
	for uri := range t.sets {
		if _, ok := wanted[uri]; !ok {
			gone = append(gone, uri)
			delete(t.sets, uri)
		}
	}
	var fresh []*set
	for _, uri := range order {
		s := wanted[uri]
		if old, ok := t.sets[uri]; ok {
			// Keep the published files; take the new revisions.
			old.from, old.to, old.base, old.g = s.from, s.to, s.base, s.g
			wanted[uri] = old
			continue
		}
		t.sets[uri] = s
		fresh = append(fresh, s)
	}
	t.mu.Unlock()
	for _, uri := range gone {
		h.Publish(uri, &protocol.ChangesetClearedAction{})
		h.CloseChannel(uri)
	}
	for _, s := range fresh {
		if err := h.OpenChannel(s.uri, &protocol.ChangesetState{Status: protocol.ChangesetStatusComputing, Files: []protocol.ChangesetFile{}}, s); err != nil {
			t.m.log.Debug("changeset: opening the channel failed", "channel", s.uri, "err", err)
		}
	}
	t.syncWatches(wanted)

	// The catalogues.
	sets := make([]*set, len(order))
	for i, uri := range order {
		sets[i] = wanted[uri]
	}
	if cat := catalogue(sets, nil); !sameCatalogue(ss.Changesets, cat) {
		h.PublishToSession(t.session, &protocol.SessionChangesetsChangedAction{Changesets: cat})
	}
	for _, c := range ss.Chats {
		dirs := c.WorkingDirectories
		if len(dirs) == 0 {
			dirs = ss.WorkingDirectories
		}
		cat := catalogue(sets, dirs)
		if cs, ok := h.State(c.Resource).(*protocol.ChatState); ok && !sameCatalogue(cs.Changesets, cat) {
			h.PublishToSession(c.Resource, &protocol.ChatChangesetsChangedAction{Changesets: cat})
		}
	}

	// Recompute every changeset.
	for _, s := range sets {
		if ctx.Err() != nil {
			return
		}
		s.recompute(ctx)
	}

	// The chats' changes summaries: the uncommitted changes of the
	// directories each chat works in.
	ss, ok = h.State(t.session).(*protocol.SessionState)
	if !ok {
		return
	}
	for _, c := range ss.Chats {
		dirs := c.WorkingDirectories
		if len(dirs) == 0 {
			dirs = ss.WorkingDirectories
		}
		sum := t.changes(sets, dirs)
		if !sameSummary(c.Changes, sum) {
			ch := protocol.SessionChatUpdatedActionChanges{Changes: sum}
			if sum == nil {
				ch.Cleared = []string{"changes"}
			}
			h.PublishToSession(t.session, &protocol.SessionChatUpdatedAction{Chat: c.Resource, Changes: ch})
		}
	}
}

// changes sums the uncommitted changes of the sets over dirs; nil when no
// directory has a changeset.
func (t *tracker) changes(sets []*set, dirs []string) *protocol.ChangesSummary {
	var add, del, n int64
	found := false
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range sets {
		if s.kind != KindUncommitted || !slices.Contains(dirs, s.dirURI) || s.err != nil {
			continue
		}
		found = true
		for _, f := range s.files {
			n++
			add += f.c.added
			del += f.c.removed
		}
	}
	if !found {
		return nil
	}
	return &protocol.ChangesSummary{Additions: &add, Deletions: &del, Files: &n}
}

func sameSummary(a, b *protocol.ChangesSummary) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	eq := func(x, y *int64) bool { return (x == nil && y == nil) || (x != nil && y != nil && *x == *y) }
	return eq(a.Additions, b.Additions) && eq(a.Deletions, b.Deletions) && eq(a.Files, b.Files)
}

// catalogue lists the sets over dirs (every set when dirs is nil).
func catalogue(sets []*set, dirs []string) []protocol.Changeset {
	out := []protocol.Changeset{}
	for _, s := range sets {
		if dirs != nil && !slices.Contains(dirs, s.dirURI) {
			continue
		}
		c := protocol.Changeset{URITemplate: s.uri, ChangeKind: s.kind,
			Capabilities: &protocol.ChangesetCapabilities{Review: map[string]jsontext.Value{}}}
		name := filepath.Base(s.dir)
		switch s.kind {
		case KindUncommitted:
			c.Label = "Uncommitted Changes"
			c.Description = protocol.Ptr("Changes in " + name + " not yet committed, against HEAD")
		case KindBranch:
			c.Label = "Branch Changes"
			c.Description = protocol.Ptr("Commits in " + name + " since the branch left " + s.base)
		}
		out = append(out, c)
	}
	return out
}

func sameCatalogue(a, b []protocol.Changeset) bool {
	return slices.EqualFunc(a, b, func(x, y protocol.Changeset) bool {
		return x.Label == y.Label && x.URITemplate == y.URITemplate && x.ChangeKind == y.ChangeKind &&
			((x.Description == nil && y.Description == nil) || (x.Description != nil && y.Description != nil && *x.Description == *y.Description)) &&
			(x.Capabilities == nil) == (y.Capabilities == nil)
	})
}

// syncWatches keeps one watch on each directory that has a changeset.
func (t *tracker) syncWatches(sets map[string]*set) {
	dirs := map[string]bool{}
	for _, s := range sets {
		dirs[s.dir] = true
	}
	t.mu.Lock()
	var stale []*watch.Watch
	for d, w := range t.watches {
		if !dirs[d] {
			stale = append(stale, w)
			delete(t.watches, d)
		}
	}
	var missing []string
	for d := range dirs {
		if _, ok := t.watches[d]; !ok {
			missing = append(missing, d)
		}
	}
	t.mu.Unlock()
	for _, w := range stale {
		w.Close()
	}
	for _, d := range missing {
		w, err := watch.Start(watch.Options{Root: d, Recursive: true, Excludes: []string{".git/objects", ".git/logs"}}, func([]watch.Change) { t.poke(true) })
		if err != nil {
			// Recomputing after turns still works; say why edits made
			// elsewhere are not seen.
			t.m.log.Warn("changeset: watching the working directory failed; changes are recomputed after turns only", "dir", d, "err", err)
			continue
		}
		t.mu.Lock()
		t.watches[d] = w
		t.mu.Unlock()
	}
}

// recompute computes a changeset's files and publishes the difference from
// what subscribers hold.
func (s *set) recompute(ctx context.Context) {
	h := s.t.m.h
	st, ok := h.State(s.uri).(*protocol.ChangesetState)
	if !ok {
		return
	}
	s.t.mu.Lock()
	first := !s.shown
	s.t.mu.Unlock()
	if !first && st.Status != protocol.ChangesetStatusRecomputing {
		h.Publish(s.uri, &protocol.ChangesetStatusChangedAction{Status: protocol.ChangesetStatusRecomputing})
	}
	entries, err := s.compute(ctx)
	if ctx.Err() != nil {
		return
	}
	s.t.mu.Lock()
	s.err = err
	if err == nil {
		s.files = entries
		s.shown = true
	}
	s.t.mu.Unlock()
	if err != nil {
		h.Publish(s.uri, &protocol.ChangesetStatusChangedAction{Status: protocol.ChangesetStatusError,
			Error: &protocol.ErrorInfo{ErrorType: "gitError", Message: err.Error()}})
		return
	}
	listed := entries
	if max := s.t.m.opts.MaxFiles; len(listed) > max {
		listed = listed[:max]
	}
	next := make([]protocol.ChangesetFile, len(listed))
	for i, e := range listed {
		next[i] = e.file
	}
	if first {
		h.Publish(s.uri, &protocol.ChangesetContentChangedAction{Files: next, Operations: s.operations()})
	} else {
		cur, _ := h.State(s.uri).(*protocol.ChangesetState)
		keepReviews(cur, next)
		publishDiff(h, s.uri, cur, next)
	}
	if len(listed) < len(entries) {
		h.Publish(s.uri, &protocol.ChangesetStatusChangedAction{Status: protocol.ChangesetStatusError, Error: &protocol.ErrorInfo{
			ErrorType: "tooManyFiles",
			Message:   fmt.Sprintf("%d files changed; the first %d are listed", len(entries), len(listed)),
		}})
		return
	}
	h.Publish(s.uri, &protocol.ChangesetStatusChangedAction{Status: protocol.ChangesetStatusReady})
}

// publishDiff sends the file removals and upserts that turn cur's files
// into next.
func publishDiff(h host.WorkspaceHost, uri string, cur *protocol.ChangesetState, next []protocol.ChangesetFile) {
	if cur == nil {
		return
	}
	keep := map[string]bool{}
	for _, f := range next {
		keep[f.ID] = true
	}
	for _, f := range cur.Files {
		if !keep[f.ID] {
			h.Publish(uri, &protocol.ChangesetFileRemovedAction{FileID: f.ID})
		}
	}
	for _, f := range next {
		i := slices.IndexFunc(cur.Files, func(o protocol.ChangesetFile) bool { return o.ID == f.ID })
		if i >= 0 && sameFile(cur.Files[i], f) {
			continue
		}
		h.Publish(uri, &protocol.ChangesetFileSetAction{File: f})
	}
}

// keepReviews carries the reviewed flag of each file that is the same as
// before (same edit: same sides, content nonces and stats) into next. A
// file whose content changed comes back unreviewed: the server resets
// review, as ChangesetFile.reviewed asks.
func keepReviews(cur *protocol.ChangesetState, next []protocol.ChangesetFile) {
	if cur == nil {
		return
	}
	for i := range next {
		j := slices.IndexFunc(cur.Files, func(o protocol.ChangesetFile) bool { return o.ID == next[i].ID })
		if j < 0 || cur.Files[j].Reviewed == nil {
			continue
		}
		x, err1 := protocol.Marshal(cur.Files[j].Edit)
		y, err2 := protocol.Marshal(next[i].Edit)
		if err1 == nil && err2 == nil && string(x) == string(y) {
			next[i].Reviewed = cur.Files[j].Reviewed
		}
	}
}

func sameFile(a, b protocol.ChangesetFile) bool {
	x, err1 := protocol.Marshal(a)
	y, err2 := protocol.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// compute lists the changeset's files.
func (s *set) compute(ctx context.Context) ([]fileEntry, error) {
	s.t.mu.Lock()
	from, to, g := s.from, s.to, s.g
	s.t.mu.Unlock()
	if from == "" {
		// No commit yet: everything is new against the empty tree.
		empty, err := g.emptyTree(ctx)
		if err != nil {
			return nil, err
		}
		from = empty
		s.t.mu.Lock()
		s.from = empty
		s.t.mu.Unlock()
	}
	changes, err := g.diff(ctx, from, to)
	if err != nil {
		return nil, err
	}
	if s.kind == KindUncommitted {
		paths, err := g.untracked(ctx)
		if err != nil {
			return nil, err
		}
		budget := int64(maxCountTotal)
		for _, p := range paths {
			c := change{status: untracked, path: p, oldPath: p, oldMode: "000000"}
			if budget > 0 {
				var read int64
				c.added, c.binary, c.counted, read = countLines(s.dir, p)
				budget -= read
			}
			changes = append(changes, c)
		}
	}
	slices.SortFunc(changes, func(a, b change) int { return strings.Compare(a.path, b.path) })
	var root *os.Root
	if to == "" {
		if root, err = os.OpenRoot(s.dir); err != nil {
			return nil, err
		}
		defer root.Close()
	}
	entries := make([]fileEntry, 0, len(changes))
	for _, c := range changes {
		entries = append(entries, fileEntry{c: c, file: s.fileOf(root, c, from, to)})
	}
	return entries, nil
}

// fileOf builds the changeset entry of one changed file.
//
// A working-tree side names its content by the file's own URI, with a
// nonce that changes whenever the file does (its size and modification
// time), so that a client can tell a cached copy is stale and the
// changeset can keep a file's review across recomputes only while the
// file stays the same.
func (s *set) fileOf(root *os.Root, c change, from, to string) protocol.ChangesetFile {
	var edit protocol.FileEdit
	newFile := c.status == added || c.status == untracked || c.oldMode == "000000"
	if !newFile {
		edit.Before = &protocol.FileEditSide{
			URI:     files.URIOf(filepath.Join(s.dir, c.oldPath)),
			Content: protocol.ContentRef{URI: contentURI(s.t.id, s.key, from, c.oldPath)},
		}
	}
	if c.status != deleted {
		uri := files.URIOf(filepath.Join(s.dir, c.path))
		ref := protocol.ContentRef{URI: uri}
		if to != "" {
			ref.URI = contentURI(s.t.id, s.key, to, c.path)
		} else if info, err := root.Lstat(c.path); err == nil {
			ref.Nonce = protocol.Ptr(fmt.Sprintf("%x-%x", info.Size(), info.ModTime().UnixNano()))
			ref.SizeHint = protocol.Ptr(info.Size())
		}
		edit.After = &protocol.FileEditSide{URI: uri, Content: ref}
	}
	if c.counted && !c.binary {
		edit.Diff = &protocol.FileEditDiffStats{Added: protocol.Ptr(c.added), Removed: protocol.Ptr(c.removed)}
	}
	id := ""
	if edit.After != nil {
		id = edit.After.URI
	} else {
		id = edit.Before.URI
	}
	return protocol.ChangesetFile{ID: id, Edit: edit}
}

// operations are what the changeset offers: the working tree's changes can
// be reverted and committed; a branch's commits are for reading.
func (s *set) operations() []protocol.ChangesetOperation {
	if s.kind != KindUncommitted {
		return nil
	}
	return []protocol.ChangesetOperation{
		{
			ID: OpRevert, Label: "Revert", Icon: protocol.Ptr("discard"),
			Description:  protocol.Ptr("Restore the file, or the changed lines in the range, to HEAD"),
			Scopes:       []protocol.ChangesetOperationScope{protocol.ChangesetOperationScopeResource, protocol.ChangesetOperationScopeRange},
			Confirmation: protocol.Ptr(protocol.PlainText("Discard these changes? This cannot be undone.")),
			Status:       protocol.ChangesetOperationStatusIdle,
		},
		{
			ID: OpCommit, Label: "Commit", Icon: protocol.Ptr("check"),
			Description: protocol.Ptr("Stage the changes (all of them, or the one file) and commit them"),
			Scopes:      []protocol.ChangesetOperationScope{protocol.ChangesetOperationScopeChangeset, protocol.ChangesetOperationScopeResource},
			Status:      protocol.ChangesetOperationStatusIdle,
		},
	}
}

// ValidateAction implements host.ChannelOwner: clients may mark files
// reviewed (the changesets advertise review), and do nothing else.
func (s *set) ValidateAction(_ host.Client, _ protocol.SnapshotState, a protocol.StateAction) string {
	if _, ok := a.(*protocol.ChangesetFilesReviewChangedAction); ok {
		return ""
	}
	return "clients may only mark a changeset's files reviewed (changeset/filesReviewChanged)"
}

// ActionAccepted implements host.ChannelOwner.
func (s *set) ActionAccepted(host.Client, protocol.StateAction) {}

// Unsubscribed implements host.ChannelOwner; changesets live as long as
// their session's directories offer them.
func (s *set) Unsubscribed(host.Client, int) {}

// lookup returns the session's set with the channel URI.
func (m *Manager) lookup(uri string) (*tracker, *set, error) {
	ch, err := protocol.ParseChannel(uri)
	if err != nil || ch.Kind != protocol.ChannelChangeset {
		return nil, nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("%q is not a changeset channel", clip(uri))}
	}
	id, _, _ := strings.Cut(ch.ID, "/")
	m.mu.Lock()
	t := m.byID[id]
	m.mu.Unlock()
	if t != nil {
		t.mu.Lock()
		s := t.sets[uri]
		t.mu.Unlock()
		if s != nil {
			return t, s, nil
		}
	}
	return nil, nil, &protocol.Error{Code: protocol.CodeNotFound, Message: fmt.Sprintf("no changeset %s", clip(uri))}
}

// clip shortens a value a client sent for an error message.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
