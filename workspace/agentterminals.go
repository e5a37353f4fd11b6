package workspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/files"
	"github.com/ahp-go/ahp/workspace/terminal"
)

// DefaultOutputLimit bounds the output an agent's command keeps for
// terminal/output when the agent sets no limit.
const DefaultOutputLimit = 1 << 20

// StartCommand implements agent.Terminals: the command runs on a PTY in a
// terminal channel claimed by the session and its chat, so every client
// sees it live, in a directory inside the session's scope.
func (w *Workspace) StartCommand(ctx context.Context, cmd agent.TerminalCommand) (agent.Terminal, error) {
	dirs, ok := w.h.WorkingDirectories(cmd.Session)
	if !ok {
		return nil, errors.New("no session " + cmd.Session)
	}
	cwd := cmd.Cwd
	if cwd == "" && len(dirs) > 0 {
		cwd = dirs[0]
	}
	if strings.HasPrefix(cwd, "/") {
		cwd = files.URIOf(cwd)
	}
	if cwd == "" {
		return nil, errors.New("the session has no working directory; give a cwd")
	}
	info, err := w.files.Resolve(ctx, w.sessionScope(dirs), cwd, true)
	if err != nil {
		return nil, err
	}
	if info.Type != "directory" {
		return nil, errors.New(cwd + " is not a directory")
	}
	dir, _ := files.PathOf(info.URI)
	title := cmd.Title
	if title == "" {
		title = strings.Join(append([]string{cmd.Command}, cmd.Args...), " ")
	}
	limit := cmd.OutputLimit
	if limit <= 0 {
		limit = DefaultOutputLimit
	}
	claim := &protocol.TerminalSessionClaim{Session: cmd.Session}
	if cmd.Chat != "" {
		claim.Chat = protocol.Ptr(cmd.Chat)
	}
	uri := protocol.TerminalURI(newID())
	t := &term{w: w, uri: uri, published: make(chan struct{}), capture: &capture{limit: limit}, claimedBy: cmd.Session, claimedChat: cmd.Chat}
	state := &protocol.TerminalState{
		Title:     title,
		Cwd:       protocol.Ptr(info.URI),
		Cols:      protocol.Ptr[int64](120),
		Rows:      protocol.Ptr[int64](30),
		Content:   []protocol.TerminalContentPart{},
		Lifecycle: &protocol.TerminalRunningLifecycleState{},
		Claim:     claim,
		IsPty:     protocol.Ptr(true),
	}
	if err := w.startTerm(t, state, terminal.Spec{Command: append([]string{cmd.Command}, cmd.Args...), Dir: dir, Env: cmd.Env, Cols: 120, Rows: 30}); err != nil {
		return nil, err
	}
	return &agentTerm{t: t}, nil
}

// capture keeps the last limit bytes of a command's output for the agent.
type capture struct {
	mu        sync.Mutex
	limit     int
	buf       []byte
	truncated bool
}

func (c *capture) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(c.buf, s...)
	if over := len(c.buf) - c.limit; over > 0 {
		cut := over
		for cut < len(c.buf) && !utf8.RuneStart(c.buf[cut]) {
			cut++
		}
		c.buf = append(c.buf[:0], c.buf[cut:]...)
		c.truncated = true
	}
}

// agentTerm is the agent's handle on a terminal it started.
type agentTerm struct{ t *term }

func (a *agentTerm) URI() string { return a.t.uri }

func (a *agentTerm) Output() (string, bool, *agent.TerminalExit) {
	c := a.t.capture
	c.mu.Lock()
	out, trunc := string(c.buf), c.truncated
	c.mu.Unlock()
	select {
	case <-a.t.published:
		e := a.exit()
		return out, trunc, &e
	default:
		return out, trunc, nil
	}
}

func (a *agentTerm) exit() agent.TerminalExit {
	var e agent.TerminalExit
	if c := a.t.proc.ExitCode(); c != nil {
		e.Code = protocol.Ptr(int(*c))
	}
	e.Signal = a.t.proc.Signal()
	return e
}

func (a *agentTerm) Wait(ctx context.Context) (agent.TerminalExit, error) {
	select {
	case <-a.t.published:
		return a.exit(), nil
	case <-ctx.Done():
		return agent.TerminalExit{}, ctx.Err()
	}
}

func (a *agentTerm) Kill() error {
	a.t.flow.end()
	a.t.proc.Close()
	<-a.t.published
	return nil
}

func (a *agentTerm) Release() error {
	a.t.dispose()
	return nil
}

// newID returns a random identifier.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
