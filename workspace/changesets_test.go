package workspace_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/workspace"
	"github.com/ahp-go/ahp/workspace/files"
)

// gitRepo makes a repository in a new directory with one commit holding
// the files given.
func gitRepo(t *testing.T, content map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "config", "user.name", "Test")
	gitIn(t, dir, "config", "user.email", "test@example.com")
	gitIn(t, dir, "config", "commit.gpgsign", "false")
	for name, text := range content {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// changesetOf waits for the session's catalogue to offer a changeset of
// the kind and returns its URI.
func changesetOf(t *testing.T, h *host.Host, session, kind string) string {
	t.Helper()
	var uri string
	waitUntil(t, "a "+kind+" changeset in the catalogue", func() bool {
		st, _ := h.State(session).(*protocol.SessionState)
		if st == nil {
			return false
		}
		for _, c := range st.Changesets {
			if c.ChangeKind == kind {
				uri = c.URITemplate
				return true
			}
		}
		return false
	})
	return uri
}

// mirror applies what a client received on a channel to the snapshot it
// subscribed with, as a client's reducers would.
func mirror(snap *protocol.Snapshot, envs []protocol.ActionEnvelope) *protocol.ChangesetState {
	st := snap.State
	for _, e := range envs {
		if e.Channel == snap.Resource && e.ServerSeq > snap.FromSeq && e.RejectionReason == nil {
			st = reducer.Apply(st, e.Action)
		}
	}
	return st.(*protocol.ChangesetState)
}

func readyWith(snap *protocol.Snapshot, cond func(*protocol.ChangesetState) bool) func([]protocol.ActionEnvelope) bool {
	return func(envs []protocol.ActionEnvelope) bool {
		st := mirror(snap, envs)
		return st.Status == protocol.ChangesetStatusReady && cond(st)
	}
}

func fileNamed(st *protocol.ChangesetState, uri string) *protocol.ChangesetFile {
	i := slices.IndexFunc(st.Files, func(f protocol.ChangesetFile) bool { return f.ID == uri })
	if i < 0 {
		return nil
	}
	return &st.Files[i]
}

func readContent(t *testing.T, c *hosttest.Client, uri string) string {
	t.Helper()
	var res readResult
	c.Must("resourceRead", &protocol.ResourceReadParams{URI: uri}, &res)
	if res.Encoding != protocol.ContentEncodingUtf8 {
		t.Fatalf("read %s: encoding %s", uri, res.Encoding)
	}
	return res.Data
}

// The Done-when: a client creates a session in a git working
// directory; after a turn in which the agent (an ACP agent writing through
// fs/write_text_file) edits a file, the changeset lists that file with its
// diff and readable before and after content, and the revert operation
// restores it.
func TestChangesetAfterAgentTurn(t *testing.T) {
	dir := gitRepo(t, map[string]string{"notes.txt": "one\ntwo\nthree\n"})
	h, srv := startACPHost(t, nil)
	c, other := srv.Dial(t, "c1"), srv.Dial(t, "c2")
	initialize(t, c)
	initialize(t, other)
	sess := protocol.SessionURI("s1")
	st := createACPSession(t, srv, c, sess, dir)
	chat := *st.DefaultChat
	c.Subscribe(chat)
	csURI := changesetOf(t, h, sess, "uncommitted")
	// The spec's URI table: changesets are ahp-changeset: channels.
	if pc, err := protocol.ParseChannel(csURI); err != nil || pc.Kind != protocol.ChannelChangeset || !strings.HasPrefix(csURI, "ahp-changeset:/") {
		t.Fatalf("changeset URI %s is not an ahp-changeset: channel (%+v, %v)", csURI, pc, err)
	}
	// The chat's catalogue offers it too (it works in the session's
	// directory).
	waitUntil(t, "the chat's catalogue", func() bool {
		cs := h.State(chat).(*protocol.ChatState)
		return slices.ContainsFunc(cs.Changesets, func(c protocol.Changeset) bool { return c.URITemplate == csURI })
	})
	snap := other.Subscribe(csURI)
	other.WaitFor("the clean changeset", readyWith(snap, func(st *protocol.ChangesetState) bool { return len(st.Files) == 0 }))

	file := filepath.Join(dir, "notes.txt")
	c.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "t1", StartedAt: protocol.FormatTime(time.Now()), Message: hosttest.UserMessage("write " + file + " one TWO three")})
	c.WaitFor("the turn to end", func(envs []protocol.ActionEnvelope) bool {
		return hasAction[*protocol.ChatTurnCompleteAction](envs) || hasAction[*protocol.ChatErrorAction](envs)
	})
	if got, _ := os.ReadFile(file); string(got) != "one TWO three" {
		t.Fatalf("the agent wrote %q", got)
	}
	fileURI := files.URIOf(file)
	envs := other.WaitFor("the edited file in the changeset", readyWith(snap, func(st *protocol.ChangesetState) bool { return fileNamed(st, fileURI) != nil }))
	cs := mirror(snap, envs)
	if want := h.State(csURI).(*protocol.ChangesetState); !sameJSON(t, cs, want) {
		t.Fatalf("the subscriber's mirror differs from the host's state:\n%+v\n%+v", cs, want)
	}
	f := fileNamed(cs, fileURI)
	if d := f.Edit.Diff; d == nil || *d.Added != 1 || *d.Removed != 3 {
		t.Fatalf("diff stats %+v, want 1 added and 3 removed", f.Edit.Diff)
	}
	if f.Edit.Before == nil || f.Edit.After == nil || f.Edit.Before.URI != fileURI || f.Edit.After.URI != fileURI {
		t.Fatalf("edit sides %+v", f.Edit)
	}
	if got := readContent(t, other, f.Edit.Before.Content.URI); got != "one\ntwo\nthree\n" {
		t.Fatalf("before content %q", got)
	}
	if got := readContent(t, other, f.Edit.After.Content.URI); got != "one TWO three" {
		t.Fatalf("after content %q", got)
	}
	// The roll-ups: the chat's summary in the session catalog, the
	// session summary's chat entry and the session summary itself.
	waitUntil(t, "the changes roll-ups", func() bool {
		ss := h.State(sess).(*protocol.SessionState)
		ch := ss.Chats[0].Changes
		return ch != nil && *ch.Files == 1 && *ch.Additions == 1 && *ch.Deletions == 3
	})
	var list protocol.ListSessionsResult
	c.Must("listSessions", &protocol.ListSessionsParams{}, &list)
	sum := list.Items[0]
	if sum.Changes == nil || *sum.Changes.Files != 1 || *sum.Changes.Additions != 1 || len(sum.Chats) != 1 || sum.Chats[0].Changes == nil || *sum.Chats[0].Changes.Files != 1 {
		t.Fatalf("summary changes %+v, chats %+v", sum.Changes, sum.Chats)
	}

	// Revert restores the file, and the changeset empties.
	var res protocol.InvokeChangesetOperationResult
	c.Must("invokeChangesetOperation", &protocol.InvokeChangesetOperationParams{Channel: csURI, OperationID: "revert",
		Target: &protocol.ChangesetOperationTargetResource{Resource: fileURI}}, &res)
	if got, _ := os.ReadFile(file); string(got) != "one\ntwo\nthree\n" {
		t.Fatalf("after revert the file holds %q", got)
	}
	other.WaitFor("the reverted file gone from the changeset", readyWith(snap, func(st *protocol.ChangesetState) bool { return len(st.Files) == 0 }))
	waitUntil(t, "the roll-up back to zero", func() bool {
		ch := h.State(sess).(*protocol.SessionState).Chats[0].Changes
		return ch != nil && *ch.Files == 0
	})
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := protocol.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := protocol.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

// echoHost is a host with the built-in agent and a workspace, served on a
// real socket.
func echoHost(t *testing.T) (*host.Host, *hosttest.Client) {
	h, _, c := echoServer(t)
	return h, c
}

func echoServer(t *testing.T) (*host.Host, *hosttest.Server, *hosttest.Client) {
	t.Helper()
	h, err := host.New(&host.Options{Agents: []agent.Backend{echo.New(nil)}, Workspace: workspace.New(nil)})
	if err != nil {
		t.Fatal(err)
	}
	srv := hosttest.Serve(t, h)
	c := srv.Dial(t, "c1")
	initialize(t, c)
	return h, srv, c
}

// Edits made outside ahpd (here by the test, on disk) are picked up by the
// working directory's watch; a range revert restores only the hunk it
// touches; commit stages and commits, leaving the changeset empty.
func TestChangesetWatchRangeRevertAndCommit(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "gone.txt": "bye\n"})
	h, c := echoHost(t)
	sess := createSession(t, c, "s1", dir)
	csURI := changesetOf(t, h, sess, "uncommitted")
	snap := c.Subscribe(csURI)
	c.WaitFor("the clean changeset", readyWith(snap, func(st *protocol.ChangesetState) bool { return len(st.Files) == 0 }))

	a := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(a, []byte("1\nTWO\n3\n4\n5\n6\n7\nEIGHT\n9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("x\ny\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	aURI, goneURI, newURI := files.URIOf(a), files.URIOf(filepath.Join(dir, "gone.txt")), files.URIOf(filepath.Join(dir, "new.txt"))
	envs := c.WaitFor("the three changes", readyWith(snap, func(st *protocol.ChangesetState) bool { return len(st.Files) == 3 }))
	cs := mirror(snap, envs)
	if f := fileNamed(cs, goneURI); f == nil || f.Edit.After != nil || f.Edit.Before == nil {
		t.Fatalf("deleted file %+v", f)
	}
	if f := fileNamed(cs, newURI); f == nil || f.Edit.Before != nil || f.Edit.After == nil || *f.Edit.Diff.Added != 2 {
		t.Fatalf("new file %+v", f)
	}
	if !slices.Contains(recomputingSeen(envs, csURI), protocol.ChangesetStatusRecomputing) {
		t.Fatal("no recomputing status while the changeset was recomputed")
	}

	// A range on line 7 (0-based), the EIGHT line, reverts that hunk only.
	c.Must("invokeChangesetOperation", &protocol.InvokeChangesetOperationParams{Channel: csURI, OperationID: "revert",
		Target: &protocol.ChangesetOperationTargetRange{Resource: aURI, Range: protocol.TextRange{Start: protocol.TextPosition{Line: 7}, End: protocol.TextPosition{Line: 7, Character: 5}}}}, nil)
	if got, _ := os.ReadFile(a); string(got) != "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n" {
		t.Fatalf("after the range revert: %q", got)
	}
	// A range touching no change is refused.
	err := c.Call("invokeChangesetOperation", &protocol.InvokeChangesetOperationParams{Channel: csURI, OperationID: "revert",
		Target: &protocol.ChangesetOperationTargetRange{Resource: aURI, Range: protocol.TextRange{Start: protocol.TextPosition{Line: 4}, End: protocol.TextPosition{Line: 5}}}}, nil)
	if pe := rpcCode(t, err); pe.Code != protocol.CodeInvalidParams {
		t.Fatalf("range without changes: %v", pe)
	}

	// Commit everything.
	c.Must("invokeChangesetOperation", &protocol.InvokeChangesetOperationParams{Channel: csURI, OperationID: "commit",
		Meta: map[string]jsontext.Value{"ahp-go/message": jsontext.Value(`"agent work"`)}}, nil)
	if log := gitIn(t, dir, "log", "-1", "--format=%s"); strings.TrimSpace(log) != "agent work" {
		t.Fatalf("last commit %q", log)
	}
	if st := gitIn(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status after commit:\n%s", st)
	}
	c.WaitFor("the committed changeset empty", readyWith(snap, func(st *protocol.ChangesetState) bool { return len(st.Files) == 0 }))
}

// recomputingSeen lists the statuses the changeset went through.
func recomputingSeen(envs []protocol.ActionEnvelope, uri string) []protocol.ChangesetStatus {
	var out []protocol.ChangesetStatus
	for _, e := range envs {
		if a, ok := e.Action.(*protocol.ChangesetStatusChangedAction); ok && e.Channel == uri {
			out = append(out, a.Status)
		}
	}
	return out
}

// Bad input gets a clear JSON-RPC error and changes nothing.
func TestChangesetBadInput(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	otherDir := gitRepo(t, map[string]string{"secret.txt": "secret\n"})
	h, c := echoHost(t)
	sess := createSession(t, c, "s1", dir)
	sessB := createSession(t, c, "s2", otherDir)
	csURI := changesetOf(t, h, sess, "uncommitted")
	csB := changesetOf(t, h, sessB, "uncommitted")
	a := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(a, []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(otherDir, "secret.txt"), []byte("changed secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap := c.Subscribe(csURI)
	envs := c.WaitFor("the change", readyWith(snap, func(st *protocol.ChangesetState) bool { return len(st.Files) == 1 }))
	beforeA := fileNamed(mirror(snap, envs), files.URIOf(a)).Edit.Before.Content.URI
	snapB := c.Subscribe(csB)
	envs = c.WaitFor("B's change", readyWith(snapB, func(st *protocol.ChangesetState) bool { return len(st.Files) == 1 }))
	beforeB := mirror(snapB, envs).Files[0].Edit.Before.Content.URI

	invoke := func(p *protocol.InvokeChangesetOperationParams) *protocol.Error {
		t.Helper()
		return rpcCode(t, c.Call("invokeChangesetOperation", p, nil))
	}
	res := func(uri string) protocol.ChangesetOperationTarget {
		return &protocol.ChangesetOperationTargetResource{Resource: uri}
	}
	cases := []struct {
		name string
		p    *protocol.InvokeChangesetOperationParams
		code protocol.ErrorCode
	}{
		{"unknown changeset", &protocol.InvokeChangesetOperationParams{Channel: sess + "/changeset/uncommitted/nope", OperationID: "revert", Target: res(files.URIOf(a))}, protocol.CodeNotFound},
		{"not a changeset", &protocol.InvokeChangesetOperationParams{Channel: sess, OperationID: "revert"}, protocol.CodeInvalidParams},
		{"not a URI", &protocol.InvokeChangesetOperationParams{Channel: "../../etc", OperationID: "revert"}, protocol.CodeInvalidParams},
		{"a changeset this host does not have", &protocol.InvokeChangesetOperationParams{Channel: "ahp-changeset:/x", OperationID: "revert"}, protocol.CodeNotFound},
		{"unknown operation", &protocol.InvokeChangesetOperationParams{Channel: csURI, OperationID: "explode"}, protocol.CodeInvalidParams},
		{"scope not offered", &protocol.InvokeChangesetOperationParams{Channel: csURI, OperationID: "revert"}, protocol.CodeInvalidParams},
		{"unknown file", &protocol.InvokeChangesetOperationParams{Channel: csURI, OperationID: "revert", Target: res(files.URIOf(filepath.Join(dir, "missing.txt")))}, protocol.CodeNotFound},
		{"outside the repository", &protocol.InvokeChangesetOperationParams{Channel: csURI, OperationID: "revert", Target: res(files.URIOf("/etc/passwd"))}, protocol.CodeInvalidParams},
		{"another session's file", &protocol.InvokeChangesetOperationParams{Channel: csURI, OperationID: "revert", Target: res(files.URIOf(filepath.Join(otherDir, "secret.txt")))}, protocol.CodeInvalidParams},
		{"dot-dot", &protocol.InvokeChangesetOperationParams{Channel: csURI, OperationID: "revert", Target: res("file://" + dir + "/../" + filepath.Base(otherDir) + "/secret.txt")}, protocol.CodeInvalidParams},
		{"NUL", &protocol.InvokeChangesetOperationParams{Channel: csURI, OperationID: "revert", Target: res(files.URIOf(a) + "\x00x")}, protocol.CodeInvalidParams},
		{"bad message", &protocol.InvokeChangesetOperationParams{Channel: csURI, OperationID: "commit", Meta: map[string]jsontext.Value{"ahp-go/message": jsontext.Value(`42`)}}, protocol.CodeInvalidParams},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if pe := invoke(tc.p); pe.Code != tc.code || !strings.HasPrefix(pe.Message, "invokeChangesetOperation: ") {
				t.Fatalf("got %d %q, want code %d", pe.Code, pe.Message, tc.code)
			}
		})
	}
	if got, _ := os.ReadFile(a); string(got) != "changed\n" {
		t.Fatalf("a bad request changed the file: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(otherDir, "secret.txt")); string(got) != "changed secret\n" {
		t.Fatalf("a bad request changed the other session's file: %q", got)
	}

	// Content references: each reaches its own session's directory only.
	if got := readContent(t, c, beforeB); got != "secret\n" {
		t.Fatalf("B's before content %q", got)
	}
	// A's directory key with B's path and commit, .. segments, and a
	// session that is not there are refused.
	partsA := strings.SplitN(strings.TrimPrefix(beforeA, "ahp-changeset-content:/"), "/", 4)
	partsB := strings.SplitN(strings.TrimPrefix(beforeB, "ahp-changeset-content:/"), "/", 4)
	for name, uri := range map[string]string{
		"B's commit and path through A": "ahp-changeset-content:/" + partsA[0] + "/" + partsA[1] + "/" + partsB[2] + "/secret.txt",
		"B's directory key under A":     "ahp-changeset-content:/" + partsA[0] + "/" + partsB[1] + "/" + partsB[2] + "/secret.txt",
		"dot-dot":                       "ahp-changeset-content:/" + partsA[0] + "/" + partsA[1] + "/" + partsA[2] + "/../" + filepath.Base(otherDir) + "/secret.txt",
		"escaped dot-dot":               "ahp-changeset-content:/" + partsA[0] + "/" + partsA[1] + "/" + partsA[2] + "/%2e%2e/x",
		"escaped slash":                 "ahp-changeset-content:/" + partsA[0] + "/" + partsA[1] + "/" + partsA[2] + "/..%2fx",
		"not a commit":                  "ahp-changeset-content:/" + partsA[0] + "/" + partsA[1] + "/HEAD/a.txt",
		"no such session":               "ahp-changeset-content:/nope/" + partsA[1] + "/" + partsA[2] + "/a.txt",
	} {
		err := c.Call("resourceRead", &protocol.ResourceReadParams{URI: uri}, nil)
		var pe *protocol.Error
		if !errors.As(err, &pe) || (pe.Code != protocol.CodeInvalidParams && pe.Code != protocol.CodeNotFound) {
			t.Errorf("%s: got %v, want a refusal", name, err)
		}
	}
}

// On a branch with a base, a branch changeset lists the branch's commits
// against the fork point, both sides read from git.
func TestBranchChangeset(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	gitIn(t, dir, "checkout", "-q", "-b", "feature")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "commit", "-q", "-am", "feature work")
	h, c := echoHost(t)
	sess := createSession(t, c, "s1", dir)
	uri := changesetOf(t, h, sess, "branch")
	snap := c.Subscribe(uri)
	envs := c.WaitFor("the branch's file", readyWith(snap, func(st *protocol.ChangesetState) bool { return len(st.Files) == 1 }))
	f := mirror(snap, envs).Files[0]
	if f.Edit.Diff == nil || *f.Edit.Diff.Added != 1 || *f.Edit.Diff.Removed != 0 {
		t.Fatalf("branch diff %+v", f.Edit.Diff)
	}
	if got := readContent(t, c, f.Edit.Before.Content.URI); got != "a\n" {
		t.Fatalf("before %q", got)
	}
	if got := readContent(t, c, f.Edit.After.Content.URI); got != "a\nb\n" {
		t.Fatalf("after %q", got)
	}
	if len(mirror(snap, envs).Operations) != 0 {
		t.Fatal("the branch changeset offers operations")
	}
	// The uncommitted changeset is there too, and empty.
	un := c.Subscribe(changesetOf(t, h, sess, "uncommitted"))
	c.WaitFor("the clean working tree", readyWith(un, func(st *protocol.ChangesetState) bool { return len(st.Files) == 0 }))
}

// A client that negotiated 0.8.0 sees the changesets in 0.8.0's shapes:
// recomputing shows as computing, and chat/changesetsChanged (0.9.0)
// does not reach it.
func TestChangesetOlderVersion(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	h, srv, c := echoServer(t)
	old := srv.Dial(t, "old")
	old.Must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: old.ID}, nil)
	sess := createSession(t, c, "s1", dir)
	st := old.Subscribe(sess).State.(*protocol.SessionState)
	old.Subscribe(*st.DefaultChat)
	uri := changesetOf(t, h, sess, "uncommitted")
	snap := old.Subscribe(uri)
	old.WaitFor("ready", readyWith(snap, func(*protocol.ChangesetState) bool { return true }))
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	envs := old.WaitFor("the change", readyWith(snap, func(st *protocol.ChangesetState) bool { return len(st.Files) == 1 }))
	statuses := recomputingSeen(envs, uri)
	if slices.Contains(statuses, protocol.ChangesetStatusRecomputing) || !slices.Contains(statuses, protocol.ChangesetStatusComputing) {
		t.Fatalf("statuses seen at 0.8.0: %v", statuses)
	}
	for _, e := range envs {
		if _, ok := e.Action.(*protocol.ChatChangesetsChangedAction); ok {
			t.Fatal("a 0.8.0 client got chat/changesetsChanged")
		}
	}
}

// Disposing a session clears its changesets for their subscribers and
// closes them; its content references stop resolving.
func TestChangesetDisposedWithSession(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	h, c := echoHost(t)
	sess := createSession(t, c, "s1", dir)
	uri := changesetOf(t, h, sess, "uncommitted")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap := c.Subscribe(uri)
	envs := c.WaitFor("the change", readyWith(snap, func(st *protocol.ChangesetState) bool { return len(st.Files) == 1 }))
	before := mirror(snap, envs).Files[0].Edit.Before.Content.URI
	c.Must("disposeSession", &protocol.DisposeSessionParams{Channel: sess}, nil)
	c.WaitFor("changeset/cleared", hasAction[*protocol.ChangesetClearedAction])
	waitUntil(t, "the channel closed", func() bool { return h.State(uri) == nil })
	err := c.Call("resourceRead", &protocol.ResourceReadParams{URI: before}, nil)
	if pe := rpcCode(t, err); pe.Code != protocol.CodeNotFound {
		t.Fatalf("reading a disposed session's content: %v", pe)
	}
}

// The changesets advertise review: a client marks a file reviewed, the
// mark survives recomputes while the file stays the same, and the server
// resets it when the file changes (ChangesetFile.reviewed: "the server,
// which is the authority on what changed, resets review explicitly").
func TestChangesetReview(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	h, c := echoHost(t)
	sess := createSession(t, c, "s1", dir)
	uri := changesetOf(t, h, sess, "uncommitted")
	st := h.State(sess).(*protocol.SessionState)
	if i := slices.IndexFunc(st.Changesets, func(cs protocol.Changeset) bool { return cs.URITemplate == uri }); st.Changesets[i].Capabilities == nil || st.Changesets[i].Capabilities.Review == nil {
		t.Fatalf("the catalogue entry does not advertise review: %+v", st.Changesets[i])
	}
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	write := func(p, text string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(a, "A\n")
	snap := c.Subscribe(uri)
	c.WaitFor("a.txt changed", readyWith(snap, func(st *protocol.ChangesetState) bool { return len(st.Files) == 1 }))
	aURI := files.URIOf(a)
	reviewed := func(st *protocol.ChangesetState) bool {
		f := fileNamed(st, aURI)
		return f != nil && f.Reviewed != nil && *f.Reviewed
	}
	c.Dispatch(uri, &protocol.ChangesetFilesReviewChangedAction{Files: []string{aURI}, Reviewed: true})
	c.WaitFor("a.txt reviewed", readyWith(snap, reviewed))
	// Another file changes: a.txt keeps its review.
	write(b, "B\n")
	envs := c.WaitFor("b.txt changed", readyWith(snap, func(st *protocol.ChangesetState) bool { return len(st.Files) == 2 }))
	if !reviewed(mirror(snap, envs)) {
		t.Fatal("a.txt lost its review when another file changed")
	}
	// a.txt changes again: its review is reset.
	write(a, "AA\nmore\n")
	c.WaitFor("a.txt unreviewed with its new stats", readyWith(snap, func(st *protocol.ChangesetState) bool {
		f := fileNamed(st, aURI)
		return f != nil && !reviewed(st) && f.Edit.Diff != nil && *f.Edit.Diff.Added == 2
	}))
	// Nothing else is client-dispatchable.
	seq := c.Dispatch(uri, &protocol.ChangesetClearedAction{})
	c.WaitFor("the rejection", func(envs []protocol.ActionEnvelope) bool {
		return slices.ContainsFunc(envs, func(e protocol.ActionEnvelope) bool {
			return e.Origin != nil && e.Origin.ClientSeq == seq && e.RejectionReason != nil
		})
	})
	if len(h.State(uri).(*protocol.ChangesetState).Files) != 2 {
		t.Fatal("a client's changeset/cleared was applied")
	}
}

// A symlink in the working tree that leads to another session's directory
// is listed as the link it is: a range revert refuses it, a revert removes
// the link and never touches its target, and its content is not served
// through it.
func TestChangesetSymlinkOut(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	otherDir := gitRepo(t, map[string]string{"secret.txt": "secret\n"})
	secret := filepath.Join(otherDir, "secret.txt")
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	h, c := echoHost(t)
	sess := createSession(t, c, "s1", dir)
	uri := changesetOf(t, h, sess, "uncommitted")
	snap := c.Subscribe(uri)
	linkURI := files.URIOf(link)
	envs := c.WaitFor("the link listed", readyWith(snap, func(st *protocol.ChangesetState) bool { return fileNamed(st, linkURI) != nil }))
	f := fileNamed(mirror(snap, envs), linkURI)
	if f.Edit.Diff != nil {
		t.Fatalf("the link's target was counted: %+v", f.Edit.Diff)
	}
	err := c.Call("resourceRead", &protocol.ResourceReadParams{URI: f.Edit.After.Content.URI}, nil)
	if pe := rpcCode(t, err); pe.Code != protocol.CodePermissionDenied && pe.Code != protocol.CodeInvalidParams {
		t.Fatalf("reading through the link: %v", pe)
	}
	err = c.Call("invokeChangesetOperation", &protocol.InvokeChangesetOperationParams{Channel: uri, OperationID: "revert",
		Target: &protocol.ChangesetOperationTargetRange{Resource: linkURI, Range: protocol.TextRange{End: protocol.TextPosition{Line: 1}}}}, nil)
	if pe := rpcCode(t, err); pe.Code != protocol.CodeInvalidParams {
		t.Fatalf("range revert of a link: %v", pe)
	}
	c.Must("invokeChangesetOperation", &protocol.InvokeChangesetOperationParams{Channel: uri, OperationID: "revert",
		Target: &protocol.ChangesetOperationTargetResource{Resource: linkURI}}, nil)
	if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the link is still there: %v", err)
	}
	if got, err := os.ReadFile(secret); err != nil || string(got) != "secret\n" {
		t.Fatalf("the link's target changed: %q, %v", got, err)
	}
}

// A session read back from the store after a restart gets its changesets
// again when it is loaded.
func TestChangesetAfterRestart(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := store.NewMemory()
	t.Cleanup(func() { st.Close() })
	open := func() (*host.Host, *hosttest.Client) {
		h, err := host.New(&host.Options{Agents: []agent.Backend{echo.New(nil)}, Workspace: workspace.New(nil), Store: st})
		if err != nil {
			t.Fatal(err)
		}
		srv := hosttest.Serve(t, h)
		c := srv.Dial(t, "c1")
		initialize(t, c)
		return h, c
	}
	h1, c1 := open()
	sess := createSession(t, c1, "s1", dir)
	uri := changesetOf(t, h1, sess, "uncommitted")
	waitUntil(t, "the chat's changes saved in its summary", func() bool {
		ch := h1.State(sess).(*protocol.SessionState).Chats[0].Changes
		return ch != nil && *ch.Files == 1
	})
	if err := h1.Close(); err != nil {
		t.Fatal(err)
	}

	h2, c2 := open()
	c2.Subscribe(sess)
	waitUntil(t, "the changeset open again", func() bool { return h2.State(uri) != nil })
	snap := c2.Subscribe(uri)
	c2.WaitFor("the change", readyWith(snap, func(st *protocol.ChangesetState) bool { return len(st.Files) == 1 }))
}

// multiDir is the echo agent with several working directories per session.
type multiDir struct{ *echo.Backend }

func (m multiDir) Info() protocol.AgentInfo {
	info := m.Backend.Info()
	info.Capabilities = &protocol.AgentCapabilities{
		MultipleWorkingDirectories: &protocol.MultipleWorkingDirectoriesCapability{},
		MultipleChats:              &protocol.MultipleChatsCapability{},
	}
	return info
}

// A chat restricted to one of the session's directories lists only that
// directory's changesets, and its changes summary counts only them. The
// session summary reports the most expensive chat (SessionSummary's
// aggregation rules: "report the most expensive chat's stats").
func TestChangesetChatScope(t *testing.T) {
	dirA := gitRepo(t, map[string]string{"a.txt": "a\n"})
	dirB := gitRepo(t, map[string]string{"b.txt": "b\n"})
	h, err := host.New(&host.Options{Agents: []agent.Backend{multiDir{echo.New(nil)}}, Workspace: workspace.New(nil)})
	if err != nil {
		t.Fatal(err)
	}
	srv := hosttest.Serve(t, h)
	c := srv.Dial(t, "c1")
	initialize(t, c)
	sess := createSession(t, c, "s1", dirA, dirB)
	chatB := protocol.ChatURI("chat-b")
	c.Must("createChat", &protocol.CreateChatParams{Channel: sess, Chat: chatB, WorkingDirectories: []string{files.URIOf(dirB)}}, nil)
	if err := os.WriteFile(filepath.Join(dirA, "a.txt"), []byte("A\nA2\nA3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirB, "b.txt"), []byte("B\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	uA, uB := changesetOf(t, h, sess, "uncommitted"), ""
	waitUntil(t, "both directories' changesets", func() bool {
		n := 0
		for _, cs := range h.State(sess).(*protocol.SessionState).Changesets {
			if cs.ChangeKind == "uncommitted" {
				n++
				if cs.URITemplate != uA {
					uB = cs.URITemplate
				}
			}
		}
		return n == 2
	})
	waitUntil(t, "chat B's catalogue", func() bool {
		cs := h.State(chatB).(*protocol.ChatState).Changesets
		return len(cs) == 1 && cs[0].URITemplate == uB
	})
	def := *h.State(sess).(*protocol.SessionState).DefaultChat
	waitUntil(t, "the chats' changes", func() bool {
		ss := h.State(sess).(*protocol.SessionState)
		got := map[string]int64{}
		for _, ch := range ss.Chats {
			if ch.Changes != nil {
				got[ch.Resource] = *ch.Changes.Additions + *ch.Changes.Deletions
			}
		}
		// Default chat: A (3 added, 1 removed) and B (1 and 1); chat B: B.
		return got[def] == 6 && got[chatB] == 2
	})
	waitUntil(t, "the session summary", func() bool {
		var list protocol.ListSessionsResult
		c.Must("listSessions", &protocol.ListSessionsParams{}, &list)
		s := list.Items[0]
		return s.Changes != nil && *s.Changes.Additions == 4 && *s.Changes.Files == 2 && len(s.Chats) == 2
	})
	cs := h.State(def).(*protocol.ChatState).Changesets
	if !slices.ContainsFunc(cs, func(c protocol.Changeset) bool { return c.URITemplate == uA }) || !slices.ContainsFunc(cs, func(c protocol.Changeset) bool { return c.URITemplate == uB }) {
		t.Fatalf("the default chat's catalogue %+v", cs)
	}
}

// A working directory below the repository's top sees the changes inside
// it only, and commits only those.
func TestChangesetSubdirectory(t *testing.T) {
	repo := gitRepo(t, map[string]string{"top.txt": "top\n", "sub/in.txt": "in\n"})
	sub := filepath.Join(repo, "sub")
	for p, text := range map[string]string{"top.txt": "TOP\n", "sub/in.txt": "IN\n", "sub/new.txt": "new\n", "other.txt": "other\n"} {
		if err := os.WriteFile(filepath.Join(repo, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, c := echoHost(t)
	sess := createSession(t, c, "s1", sub)
	uri := changesetOf(t, h, sess, "uncommitted")
	snap := c.Subscribe(uri)
	envs := c.WaitFor("the subdirectory's changes", readyWith(snap, func(st *protocol.ChangesetState) bool { return st.Status == protocol.ChangesetStatusReady }))
	st := mirror(snap, envs)
	var ids []string
	for _, f := range st.Files {
		ids = append(ids, f.ID)
	}
	want := []string{files.URIOf(filepath.Join(sub, "in.txt")), files.URIOf(filepath.Join(sub, "new.txt"))}
	if !slices.Equal(ids, want) {
		t.Fatalf("files %v, want %v", ids, want)
	}
	if got := readContent(t, c, fileNamed(st, want[0]).Edit.Before.Content.URI); got != "in\n" {
		t.Fatalf("before content %q", got)
	}
	c.Must("invokeChangesetOperation", &protocol.InvokeChangesetOperationParams{Channel: uri, OperationID: "commit"}, nil)
	status := gitIn(t, repo, "status", "--porcelain")
	if status != " M top.txt\n?? other.txt\n" {
		t.Fatalf("after committing the subdirectory:\n%s", status)
	}
}

// A repository without commits: every file is new, and commit makes the
// first commit.
func TestChangesetUnbornBranch(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "config", "user.name", "Test")
	gitIn(t, dir, "config", "user.email", "test@example.com")
	if err := os.WriteFile(filepath.Join(dir, "first.txt"), []byte("1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, c := echoHost(t)
	sess := createSession(t, c, "s1", dir)
	uri := changesetOf(t, h, sess, "uncommitted")
	snap := c.Subscribe(uri)
	envs := c.WaitFor("the new file", readyWith(snap, func(st *protocol.ChangesetState) bool { return len(st.Files) == 1 }))
	if f := mirror(snap, envs).Files[0]; f.Edit.Before != nil || *f.Edit.Diff.Added != 2 {
		t.Fatalf("file %+v", f)
	}
	c.Must("invokeChangesetOperation", &protocol.InvokeChangesetOperationParams{Channel: uri, OperationID: "commit"}, nil)
	if n := strings.TrimSpace(gitIn(t, dir, "rev-list", "--count", "HEAD")); n != "1" {
		t.Fatalf("%s commits", n)
	}
	c.WaitFor("the clean tree", readyWith(snap, func(st *protocol.ChangesetState) bool { return len(st.Files) == 0 }))
}

// Past its file limit a changeset lists the first files, says how many
// there are with status error, and the summary still counts them all.
func TestChangesetFileLimit(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	for _, n := range []string{"1.txt", "2.txt", "3.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, err := host.New(&host.Options{Agents: []agent.Backend{echo.New(nil)}, Workspace: workspace.New(&workspace.Options{MaxChangesetFiles: 2})})
	if err != nil {
		t.Fatal(err)
	}
	srv := hosttest.Serve(t, h)
	c := srv.Dial(t, "c1")
	initialize(t, c)
	sess := createSession(t, c, "s1", dir)
	uri := changesetOf(t, h, sess, "uncommitted")
	snap := c.Subscribe(uri)
	envs := c.WaitFor("the limit reported", func(envs []protocol.ActionEnvelope) bool {
		return mirror(snap, envs).Status == protocol.ChangesetStatusError
	})
	st := mirror(snap, envs)
	if len(st.Files) != 2 || st.Error == nil || st.Error.ErrorType != "tooManyFiles" || !strings.Contains(st.Error.Message, "3 files") {
		t.Fatalf("state %+v, error %+v", st.Files, st.Error)
	}
	waitUntil(t, "the summary counting all three", func() bool {
		ch := h.State(sess).(*protocol.SessionState).Chats[0].Changes
		return ch != nil && *ch.Files == 3
	})
}
