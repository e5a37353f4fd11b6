package workspace

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/files"
	"github.com/ahp-go/ahp/workspace/terminal"
)

// DefaultScrollback is how many bytes of output a terminal keeps for
// clients that subscribe later.
const DefaultScrollback = 1 << 20

// term is one terminal channel and its process.
type term struct {
	w       *Workspace
	uri     string
	proc    *terminal.Process
	capture *capture // output kept for an agent's terminal/output; nil for client terminals
	// claimedBy is the session that claims the terminal, "" for a
	// client's, and claimedChat the session's chat that does, if any; the
	// terminal is disposed with them. Guarded by w.mu.
	claimedBy, claimedChat string
	doomed                 bool // its session went: it is being disposed; guarded by w.mu

	// Owned by the process's output goroutine.
	retained  int
	detected  bool
	cmdSeq    int
	cmdID     string
	cmdStart  time.Time
	published chan struct{} // closed once the exit has been published
	onExit    func()        // called before the exit is published; set before the process starts
	flow      *flow         // set before the process starts
}

// createTerminal starts a shell on a PTY in the requested directory, which
// must be inside the scope of the terminal's claim: the session's when a
// session claims it, the client's otherwise.
func createTerminal(ctx context.Context, w *Workspace, c host.Client, p *protocol.CreateTerminalParams) (any, error) {
	parsed, err := protocol.ParseChannel(p.Channel)
	if err != nil || parsed.Kind != protocol.ChannelTerminal {
		return nil, invalid("createTerminal: channel must be a terminal URI (ahp-terminal:/<id>), got %q", p.Channel)
	}
	if raw, ok := p.Meta[SignInMeta]; ok {
		return createLoginTerminal(w, c, p, raw)
	}
	scope, defaultDir, err := w.claimScope(c, p.Claim)
	if err != nil {
		return nil, err
	}
	cwd := defaultDir
	if p.Cwd != nil {
		cwd = *p.Cwd
	}
	if cwd == "" {
		return nil, invalid("createTerminal: cwd is required when the claim's scope has no working directory")
	}
	if err := w.ConfineDirectory(cwd); err != nil {
		return nil, invalid("createTerminal: cwd %v", err)
	}
	info, err := w.files.Resolve(ctx, scope, cwd, true)
	if err != nil {
		return nil, wireError("createTerminal", err)
	}
	if info.Type != "directory" {
		return nil, invalid("createTerminal: cwd %s is not a directory", cwd)
	}
	dir, _ := files.PathOf(info.URI)
	if err := w.confinePath(dir); err != nil {
		return nil, invalid("createTerminal: cwd %v", err)
	}
	cols, rows, err := terminalSize(p, 80, 24)
	if err != nil {
		return nil, err
	}
	title := "Terminal"
	if p.Name != nil && *p.Name != "" {
		title = *p.Name
	}
	state := &protocol.TerminalState{
		Title:     title,
		Cwd:       protocol.Ptr(info.URI),
		Cols:      &cols,
		Rows:      &rows,
		Content:   []protocol.TerminalContentPart{},
		Lifecycle: &protocol.TerminalRunningLifecycleState{},
		Claim:     p.Claim,
		IsPty:     protocol.Ptr(true),
	}
	t := &term{w: w, uri: p.Channel, published: make(chan struct{})}
	t.claimedBy, t.claimedChat = claimOf(p.Claim)
	if err := w.startTerm(t, state, terminal.Spec{Command: w.opts.Shell, Dir: dir, Cols: int(cols), Rows: int(rows)}); err != nil {
		return nil, err
	}
	return nil, nil
}

// startTerm registers a terminal, opens its channel, starts its process
// and announces it in the root list.
func (w *Workspace) startTerm(t *term, state *protocol.TerminalState, spec terminal.Spec) error {
	if err := terminal.Supported(); err != nil {
		// Not served on this platform (Windows): nothing is opened.
		return &protocol.Error{Code: protocol.CodeMethodNotFound, Message: "createTerminal: " + err.Error()}
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return &protocol.Error{Code: protocol.CodeInternalError, Message: "createTerminal: the host is shutting down"}
	}
	if _, dup := w.terms[t.uri]; dup {
		w.mu.Unlock()
		return &protocol.Error{Code: protocol.CodeAlreadyExists, Message: "createTerminal: " + t.uri + " already exists"}
	}
	w.terms[t.uri] = t
	w.termOrder = append(w.termOrder, t.uri)
	w.mu.Unlock()
	if err := w.h.OpenChannel(t.uri, state, t); err != nil {
		w.forget(t.uri)
		return &protocol.Error{Code: protocol.CodeAlreadyExists, Message: "createTerminal: " + err.Error()}
	}
	t.flow = newFlow(func() int64 { return w.h.Backlog(t.uri) })
	proc, err := terminal.Start(spec, t.emit)
	if err != nil {
		w.h.CloseChannel(t.uri)
		w.forget(t.uri)
		return &protocol.Error{Code: protocol.CodeInternalError, Message: "createTerminal: " + err.Error()}
	}
	w.mu.Lock()
	t.proc = proc
	doomed, session := t.doomed, t.claimedBy
	w.mu.Unlock()
	w.wg.Go(t.watchExit)
	if !doomed && session != "" {
		// The session may have gone while the process started, before
		// or after disposeSessionTerminals looked.
		_, alive := w.h.WorkingDirectories(session)
		doomed = !alive
	}
	if doomed {
		t.dispose()
		return &protocol.Error{Code: protocol.CodeSessionNotFound, Message: "createTerminal: the session " + session + " claiming the terminal is gone"}
	}
	w.publishTerminals()
	w.log.Info("terminal created", "terminal", t.uri, "pid", proc.Pid(), "cwd", spec.Dir)
	return nil
}

// disposeTerminal ends the terminal's processes and removes the channel.
func disposeTerminal(ctx context.Context, w *Workspace, c host.Client, p *protocol.DisposeTerminalParams) (any, error) {
	w.mu.Lock()
	t := w.terms[p.Channel]
	w.mu.Unlock()
	if t == nil {
		return nil, &protocol.Error{Code: protocol.CodeNotFound, Message: "disposeTerminal: no terminal " + p.Channel}
	}
	t.dispose()
	return nil, nil
}

func (t *term) dispose() {
	w := t.w
	if t.proc != nil {
		t.flow.end()
		t.proc.Close()
		<-t.published
	}
	w.h.CloseChannel(t.uri)
	w.forget(t.uri)
	w.publishTerminals()
}

func (w *Workspace) forget(uri string) {
	w.mu.Lock()
	delete(w.terms, uri)
	w.termOrder = slices.DeleteFunc(w.termOrder, func(u string) bool { return u == uri })
	w.mu.Unlock()
}

// claimScope returns the scope a terminal claimed by claim may start in,
// and its default directory.
func (w *Workspace) claimScope(c host.Client, claim protocol.TerminalClaim) (files.Scope, string, error) {
	switch cl := claim.(type) {
	case *protocol.TerminalClientClaim:
		if cl.ClientID != c.ID() {
			return nil, "", invalid("createTerminal: a client claim must name the creating client (%q)", c.ID())
		}
		scope := w.scope(c)
		def := ""
		if len(w.roots) > 0 {
			def = files.URIOf(w.roots[0])
		}
		return scope, def, nil
	case *protocol.TerminalSessionClaim:
		dirs, ok := w.h.WorkingDirectories(cl.Session)
		if !ok {
			return nil, "", &protocol.Error{Code: protocol.CodeSessionNotFound, Message: "createTerminal: no session " + cl.Session}
		}
		scope := w.sessionScope(dirs)
		def := ""
		if len(dirs) > 0 {
			def = dirs[0]
		}
		return scope, def, nil
	case nil:
		return nil, "", invalid("createTerminal: claim is required")
	}
	return nil, "", invalid("createTerminal: unknown claim kind")
}

// sessionScope is what a session reaches: its working directories and the
// configured roots; not other sessions' directories.
func (w *Workspace) sessionScope(dirs []string) files.Scope {
	var s files.Scope
	for _, d := range dirs {
		if p, err := files.PathOf(d); err == nil && !w.Confining() {
			s = append(s, files.Root{Dir: p, Access: files.ReadWrite})
		}
	}
	for _, d := range w.roots {
		s = append(s, files.Root{Dir: d, Access: files.ReadWrite})
	}
	return s
}

// emit turns the process's output and events into terminal actions. It
// runs on the process's output goroutine.
func (t *term) emit(ev terminal.Event) {
	h := t.w.h
	switch ev.Kind {
	case terminal.Output:
		h.Publish(t.uri, &protocol.TerminalDataAction{Data: ev.Data})
		defer t.flow.wait() // once the output is kept, below
		if t.capture != nil {
			t.capture.add(ev.Data)
		}
		t.retained += len(ev.Data)
		if limit := t.w.opts.Scrollback; t.retained > limit+limit/4 {
			h.Trim(t.uri, func(s protocol.SnapshotState) protocol.SnapshotState {
				ts, ok := s.(*protocol.TerminalState)
				if !ok {
					return s
				}
				next := *ts
				next.Content, t.retained = trimContent(ts.Content, limit)
				return &next
			})
		}
	case terminal.Title:
		h.Publish(t.uri, &protocol.TerminalTitleChangedAction{Title: ev.Text})
		t.w.publishTerminals()
	case terminal.Cwd:
		h.Publish(t.uri, &protocol.TerminalCwdChangedAction{Cwd: files.URIOf(ev.Text)})
	case terminal.PromptStarted:
		if !t.detected {
			t.detected = true
			h.Publish(t.uri, &protocol.TerminalCommandDetectionAvailableAction{})
		}
	case terminal.CommandStarted:
		t.cmdSeq++
		t.cmdID = fmt.Sprintf("cmd-%d", t.cmdSeq)
		t.cmdStart = time.Now()
		h.Publish(t.uri, &protocol.TerminalCommandExecutedAction{CommandID: t.cmdID, CommandLine: ev.Text, Timestamp: t.cmdStart.UnixMilli()})
	case terminal.CommandFinished:
		if t.cmdID == "" {
			return
		}
		h.Publish(t.uri, &protocol.TerminalCommandFinishedAction{CommandID: t.cmdID, ExitCode: ev.ExitCode, DurationMs: protocol.Ptr(time.Since(t.cmdStart).Milliseconds())})
		t.cmdID = ""
	}
}

// watchExit publishes terminal/exited once the process has ended.
func (t *term) watchExit() {
	<-t.proc.Done()
	if t.onExit != nil {
		// Before the exit is published, so that a client seeing it finds
		// what onExit changed; not while the workspace closes.
		t.w.mu.Lock()
		closed := t.w.closed
		t.w.mu.Unlock()
		if !closed {
			t.onExit()
		}
	}
	t.w.h.Publish(t.uri, &protocol.TerminalExitedAction{ExitCode: t.proc.ExitCode()})
	close(t.published)
	t.w.publishTerminals()
}

// trimContent keeps the last limit bytes of output, starting at a line
// boundary when one is near, and returns the bytes kept.
func trimContent(content []protocol.TerminalContentPart, limit int) ([]protocol.TerminalContentPart, int) {
	total := 0
	for i := len(content) - 1; i >= 0; i-- {
		n := partLen(content[i])
		if total+n <= limit {
			total += n
			continue
		}
		keep := limit - total
		out := slices.Clone(content[i:])
		out[0] = cutPart(content[i], keep)
		return out, total + partLen(out[0])
	}
	return content, total
}

func partLen(p protocol.TerminalContentPart) int {
	switch p := p.(type) {
	case *protocol.TerminalUnclassifiedPart:
		return p.Value.Len()
	case *protocol.TerminalCommandPart:
		return p.Output.Len()
	}
	return 0
}

// cutPart keeps the last keep bytes of a part's output (fewer, to start
// at a character and, when one is near, at a line), without copying them:
// protocol.Text.Suffix.
func cutPart(p protocol.TerminalContentPart, keep int) protocol.TerminalContentPart {
	const nearLine = 4 << 10 // how far a line boundary may move the cut
	cut := func(t protocol.Text) protocol.Text {
		n := t.Len()
		from := n - min(keep, n)
		// Only the bytes just past the cut are looked at: joining a long
		// text's blocks to cut it would copy all it keeps.
		s := t.Slice(from, min(n, from+nearLine+2*utf8.UTFMax))
		skip := 0
		for skip < len(s) && !utf8.RuneStart(s[skip]) {
			skip++
		}
		if i := strings.IndexByte(s[skip:], '\n'); i >= 0 && i < nearLine {
			skip += i + 1
		}
		return t.Suffix(n - from - skip)
	}
	switch p := p.(type) {
	case *protocol.TerminalUnclassifiedPart:
		return &protocol.TerminalUnclassifiedPart{Value: cut(p.Value)}
	case *protocol.TerminalCommandPart:
		c := *p
		c.Output = cut(p.Output)
		return &c
	}
	return p
}

// publishTerminals sends the root terminal list. Calls are serialised so
// the last list published is the current one.
func (w *Workspace) publishTerminals() {
	w.rootMu.Lock()
	defer w.rootMu.Unlock()
	w.mu.Lock()
	uris := slices.Clone(w.termOrder)
	w.mu.Unlock()
	infos := make([]protocol.TerminalInfo, 0, len(uris))
	for _, uri := range uris {
		ts, ok := w.h.State(uri).(*protocol.TerminalState)
		if !ok {
			continue
		}
		infos = append(infos, protocol.TerminalInfo{Resource: uri, Title: ts.Title, Claim: ts.Claim, Lifecycle: ts.Lifecycle, ExitCode: ts.ExitCode})
	}
	w.h.Publish(protocol.RootURI, &protocol.RootTerminalsChangedAction{Terminals: infos})
}

// ValidateAction implements host.ChannelOwner for a terminal channel.
func (t *term) ValidateAction(c host.Client, state protocol.SnapshotState, a protocol.StateAction) string {
	ts := state.(*protocol.TerminalState)
	running := true
	if _, exited := ts.Lifecycle.(*protocol.TerminalExitedLifecycleState); exited {
		running = false
	}
	switch a := a.(type) {
	case *protocol.TerminalInputAction:
		t.w.mu.Lock()
		proc := t.proc
		t.w.mu.Unlock()
		if !running || proc == nil {
			return "the terminal's process has exited"
		}
		if !proc.InputRoom() {
			return "the terminal is not reading its input; try again"
		}
	case *protocol.TerminalResizedAction:
		if a.Cols < 1 || a.Rows < 1 || a.Cols > 0xffff || a.Rows > 0xffff {
			return fmt.Sprintf("bad size %dx%d", a.Cols, a.Rows)
		}
	case *protocol.TerminalClaimedAction:
		// Terminal channel page: the holder transfers the claim. A client
		// may also take a terminal over from a session (a user stepping
		// in); a client's claim is only its own to give away.
		if cur, ok := ts.Claim.(*protocol.TerminalClientClaim); ok && cur.ClientID != c.ID() {
			return fmt.Sprintf("the terminal is claimed by client %q", cur.ClientID)
		}
		switch nc := a.Claim.(type) {
		case *protocol.TerminalClientClaim:
			if nc.ClientID == "" {
				return "a client claim needs a clientId"
			}
		case *protocol.TerminalSessionClaim:
			// Checked against the host's sessions in ActionAccepted would
			// be too late; the session must exist now.
			if nc.Session == "" {
				return "a session claim needs a session"
			}
		default:
			return "unknown claim kind"
		}
	case *protocol.TerminalTitleChangedAction, *protocol.TerminalClearedAction:
	}
	return ""
}

// ActionAccepted implements host.ChannelOwner: input and sizes go to the
// PTY; claims and titles change the root list.
func (t *term) ActionAccepted(c host.Client, a protocol.StateAction) {
	t.w.mu.Lock()
	proc := t.proc
	t.w.mu.Unlock()
	switch a := a.(type) {
	case *protocol.TerminalInputAction:
		if proc != nil {
			proc.Input([]byte(a.Data))
		}
	case *protocol.TerminalResizedAction:
		if proc != nil {
			proc.Resize(int(a.Cols), int(a.Rows))
		}
	case *protocol.TerminalClaimedAction:
		t.w.mu.Lock()
		t.claimedBy, t.claimedChat = claimOf(a.Claim)
		t.w.mu.Unlock()
		t.w.rootDirty()
	case *protocol.TerminalTitleChangedAction:
		t.w.rootDirty()
	}
}

// claimOf returns the session and the chat a claim names, or "".
func claimOf(c protocol.TerminalClaim) (session, chat string) {
	if sc, ok := c.(*protocol.TerminalSessionClaim); ok {
		session = sc.Session
		if sc.Chat != nil {
			chat = *sc.Chat
		}
	}
	return session, chat
}

// disposeSessionTerminals disposes, in the background, every terminal the
// session claims, or with a chat only those the chat claims: a session's
// terminals go with it, and a chat's with the chat (an ACP agent's
// terminals are its chat's, whose ACP session ends with it). It runs with
// the host locked (SessionObserver), so it only queues the work.
func (w *Workspace) disposeSessionTerminals(session, chat string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return // closing ends every terminal
	}
	for _, t := range w.terms {
		if t.claimedBy != session || chat != "" && t.claimedChat != chat || t.doomed {
			continue
		}
		t.doomed = true
		if t.proc != nil {
			w.wg.Go(t.dispose)
		} // else it is still starting, and startTerm disposes it
	}
}

// Unsubscribed implements host.ChannelOwner; terminals live on without
// subscribers.
func (t *term) Unsubscribed(host.Client, int) {}

// rootDirty asks the workspace's goroutine to publish the terminal list
// (callers hold the host's lock and cannot publish themselves).
func (w *Workspace) rootDirty() {
	select {
	case w.dirty <- struct{}{}:
	default:
	}
}

// rootLoop publishes the terminal list when asked, until the workspace
// closes.
func (w *Workspace) rootLoop() {
	for {
		select {
		case <-w.dirty:
			w.publishTerminals()
		case <-w.releaseSig:
			w.mu.Lock()
			rel := w.toRelease
			w.toRelease = nil
			w.mu.Unlock()
			for _, wc := range rel {
				if w.h.Subscribers(wc.uri) == 0 {
					wc.release()
				}
			}
		case <-w.stop:
			return
		}
	}
}

// closeTerminals ends every terminal's processes, in parallel.
func (w *Workspace) closeTerminals() {
	w.mu.Lock()
	ts := make([]*term, 0, len(w.terms))
	for _, t := range w.terms {
		if t.proc != nil {
			ts = append(ts, t)
		}
	}
	w.mu.Unlock()
	for _, t := range ts {
		t.flow.end()
		w.wg.Go(func() { t.proc.Close() })
	}
}

func invalid(format string, args ...any) error {
	return &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// terminalSize returns the size createTerminal asks for, cols by rows by
// default, refusing one a terminal cannot have.
func terminalSize(p *protocol.CreateTerminalParams, cols, rows int64) (int64, int64, error) {
	if p.Cols != nil {
		cols = *p.Cols
	}
	if p.Rows != nil {
		rows = *p.Rows
	}
	if cols < 1 || rows < 1 || cols > 0xffff || rows > 0xffff {
		return 0, 0, invalid("createTerminal: bad size %dx%d", cols, rows)
	}
	return cols, rows, nil
}
