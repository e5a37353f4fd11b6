package acp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"
)

// process is one running agent: the subprocess, in its own process group,
// and the ACP connection over its stdin and stdout.
//
// Its stderr goes to the log line by line; the last lines are kept for the
// message shown when the agent crashes.
type process struct {
	terminals bool     // offer the terminal/* methods in the handshake
	secrets   []string // masked in what the agent writes to stderr
	cmd       *exec.Cmd
	conn      *acpsdk.ClientSideConnection
	flow      *flowReader
	stdin     *os.File
	log       *slog.Logger

	init acpsdk.InitializeResponse // set by handshake

	exited chan struct{} // closed once the process has exited and the connection is down
	err    error         // the exit status, set before exited closes

	gen         int  // which of its session's processes this is (1, 2, ...)
	exitHandled bool // its session has dealt with its exit (guarded by session.mu)

	grace  time.Duration // how long it may take to exit after SIGTERM, and after SIGKILL
	linger time.Duration // Options.ExitGrace

	mu       sync.Mutex
	stopping string   // why the host is stopping it ("" while it is not): its exit is not a crash
	broken   string   // why its ACP connection failed while it ran ("" while it has not)
	tail     []string // the last lines of stderr
	lines    int      // how many lines of stderr it has written
}

// stderrSettle is how long a failed request waits for the agent's stderr
// to be read.
const stderrSettle = 250 * time.Millisecond

// tailLines is how many stderr lines a crash message quotes.
const tailLines = 8

// startProcess starts cfg's command in dir with env and connects to it as
// an ACP client, served by what newClient returns for the process. Its
// waits are opts' KillTimeout (how long the process may take to exit when
// it is stopped), ExitGrace and FlowResync.
func startProcess(cfg *Config, dir string, env []string, newClient func(*process) acpsdk.Client, log *slog.Logger, opts *Options) (*process, error) {
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir = dir
	cmd.Env = env
	setProcessGroup(cmd)
	// Pipes are made here rather than by exec so that Wait does not close
	// stdout: the connection reads what the agent wrote before it exited.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("starting %s: %w", cfg.Command, err)
	}
	if err := joinGroup(cmd); err != nil {
		// Stopping it ends the agent alone, not what it starts.
		log.Warn("agent process group", "pid", cmd.Process.Pid, "err", err)
	}
	p := &process{
		cmd:     cmd,
		stdin:   inW,
		log:     log.With("pid", cmd.Process.Pid),
		exited:  make(chan struct{}),
		grace:   opts.KillTimeout,
		linger:  opts.ExitGrace,
		secrets: cfg.secrets,
	}
	p.flow = newFlowReader(outR, opts.FlowResync)
	p.flow.onBroken = func(err error) { p.breakConn(err.Error()) }
	p.conn = acpsdk.NewClientSideConnection(newClient(p), inW, p.flow)
	p.conn.SetLogger(p.log)
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		p.captureStderr(errR)
	}()
	go func() {
		err := cmd.Wait()
		// Children the agent left behind would keep stdout open.
		killGroup(cmd, true)
		select {
		case <-p.conn.Done():
		case <-time.After(2 * p.linger):
			// Something outside the group still holds stdout.
			outR.Close()
			<-p.conn.Done()
		}
		p.flow.drain(p.linger)
		select {
		case <-stderrDone:
		case <-time.After(p.linger):
			errR.Close()
		}
		inW.Close()
		p.err = err
		close(p.exited)
	}()
	go p.watchConn()
	p.log.Info("agent started", "command", cfg.Command, "dir", dir)
	return p, nil
}

// watchConn stops a process whose ACP connection has closed while the
// process keeps running (its output ended, or a message the SDK could not
// read): nothing it does from then on can reach the host, so it is treated
// like a crash.
func (p *process) watchConn() {
	select {
	case <-p.exited:
		return
	case <-p.conn.Done():
	}
	// An agent that exits closes its output first.
	t := time.NewTimer(p.linger)
	defer t.Stop()
	select {
	case <-p.exited:
		return
	case <-t.C:
	}
	p.breakConn("its ACP connection closed while the process kept running")
}

// breakConn records that the ACP connection is broken and why, and stops
// the process. Unless the host was stopping it anyway, its exit counts as
// a crash.
func (p *process) breakConn(why string) {
	p.mu.Lock()
	if p.broken != "" {
		p.mu.Unlock()
		return
	}
	if p.stopping != "" {
		// The host is ending the process (a probe done, a session
		// disposed): its connection closing is expected, and it is
		// being stopped already.
		p.mu.Unlock()
		p.log.Debug("the agent's ACP connection closed while it was being stopped", "why", why)
		return
	}
	p.broken = why
	p.mu.Unlock()
	p.log.Warn("the agent broke its ACP connection; stopping it", "why", why)
	go p.terminate()
}

// brokenReason returns why the connection broke, or "".
func (p *process) brokenReason() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.broken
}

// captureStderr logs the agent's stderr line by line, within the limits
// of stderrBudget, and keeps the last lines.
func (p *process) captureStderr(r io.ReadCloser) {
	defer r.Close()
	lim := newLineBudget(stderrBurst, stderrRate, time.Now())
	br := bufio.NewReaderSize(r, 4096)
	for {
		line, err := readLine(br, maxStderrLine)
		line = cleanLine(line)
		for _, k := range p.secrets {
			// A key a client signed the agent in with is neither logged
			// nor quoted to clients, even when the agent prints it.
			line = strings.ReplaceAll(line, k, "[the key]")
		}
		if line != "" {
			if ok, dropped := lim.take(time.Now()); ok {
				if dropped > 0 {
					p.log.Warn("agent stderr: lines not logged", "dropped", dropped)
				}
				p.log.Info("agent stderr", "line", line)
			}
			p.mu.Lock()
			p.lines++
			p.tail = append(p.tail, line)
			if len(p.tail) > tailLines {
				p.tail = p.tail[len(p.tail)-tailLines:]
			}
			p.mu.Unlock()
		}
		if err != nil {
			if dropped := lim.dropped; dropped > 0 {
				p.log.Warn("agent stderr: lines not logged", "dropped", dropped)
			}
			return
		}
	}
}

// Limits on logging an agent's stderr: lines are cut to maxStderrLine
// bytes, and at most stderrBurst lines are logged at once, then
// stderrRate a second; the lines in between are counted and the count is
// logged.
const (
	maxStderrLine = 2000
	stderrBurst   = 100
	stderrRate    = 10
)

// readLine reads a line, keeping at most limit bytes of it (and marking the
// cut); the rest of a longer line is read and dropped.
func readLine(br *bufio.Reader, limit int) (string, error) {
	var b []byte
	cut := false
	for {
		chunk, err := br.ReadSlice('\n')
		keep := min(max(limit-len(b), 0), len(chunk))
		b = append(b, chunk[:keep]...)
		if len(bytes.TrimRight(chunk[keep:], "\r\n")) > 0 {
			cut = true
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		line := strings.TrimRight(string(b), "\r\n")
		if cut {
			line = strings.ToValidUTF8(line, "") + "…"
		}
		return line, err
	}
}

// lineBudget is a token bucket of log lines.
type lineBudget struct {
	burst, rate float64
	tokens      float64
	last        time.Time
	dropped     int // lines refused since the last one taken
}

func newLineBudget(burst, rate int, now time.Time) *lineBudget {
	return &lineBudget{burst: float64(burst), rate: float64(rate), tokens: float64(burst), last: now}
}

// take reports whether a line may be logged at now and, when it may, how
// many were refused before it.
func (l *lineBudget) take(now time.Time) (bool, int) {
	if d := now.Sub(l.last); d > 0 {
		l.tokens = min(l.burst, l.tokens+d.Seconds()*l.rate)
		l.last = now
	}
	if l.tokens < 1 {
		l.dropped++
		return false, 0
	}
	l.tokens--
	n := l.dropped
	l.dropped = 0
	return true, n
}

// cleanLine strips terminal escape sequences (colours, cursor movement,
// titles) and other control characters from a line of agent output, and
// any bytes that are not UTF-8.
func cleanLine(s string) string {
	if !strings.ContainsFunc(s, isControl) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			i = skipEscape(s, i)
		case c == 0x9b: // an 8-bit CSI is not UTF-8; it is dropped below
			i++
		case c < 0x20 && c != '\t' || c == 0x7f:
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || n > 1 {
				b.WriteString(s[i : i+n])
			}
			i += n
		}
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }

// skipEscape returns the index after the escape sequence that starts at
// s[i] (an ESC).
func skipEscape(s string, i int) int {
	i++
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[': // CSI: parameters and intermediates, then a final byte
		i++
		for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
			i++
		}
		return min(i+1, len(s))
	case ']', 'P', '_', '^', 'X': // OSC and other strings: up to BEL or ST
		i++
		for i < len(s) {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			i++
		}
		return i
	default: // a two-byte sequence (or one with intermediates)
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		return min(i+1, len(s))
	}
}

// handshake runs ACP initialize and, when authMethod is set, authenticate.
func (p *process) handshake(ctx context.Context, cfg *Config, clientInfo acpsdk.Implementation) error {
	res, err := p.conn.Initialize(ctx, acpsdk.InitializeRequest{
		ProtocolVersion: acpsdk.ProtocolVersionNumber,
		ClientInfo:      &clientInfo,
		ClientCapabilities: acpsdk.ClientCapabilities{
			Fs:       acpsdk.FileSystemCapabilities{ReadTextFile: !cfg.DisableFileSystem, WriteTextFile: !cfg.DisableFileSystem},
			Terminal: p.terminals && ptyTerminals,
			// ahpd runs terminal logins for its clients (docs/agents.md):
			// agents list those methods only to clients that say so.
			Auth: acpsdk.AuthCapabilities{Terminal: ptyTerminals},
			Meta: map[string]any{"terminal-auth": ptyTerminals},
		},
	})
	if err != nil {
		return p.explain(ctx, "initialize", err, 0)
	}
	if res.ProtocolVersion != acpsdk.ProtocolVersionNumber {
		return fmt.Errorf("the agent speaks ACP version %d; this host speaks version %d", res.ProtocolVersion, acpsdk.ProtocolVersionNumber)
	}
	p.init = res
	if cfg.AuthMethod != "" {
		if !slices.ContainsFunc(res.AuthMethods, func(m acpsdk.AuthMethod) bool { return authMethodID(m) == cfg.AuthMethod }) {
			return fmt.Errorf("the agent does not offer the authentication method %q set as authMethod; %s", cfg.AuthMethod, offeredAuth(res.AuthMethods))
		}
		if _, err := p.conn.Authenticate(ctx, acpsdk.AuthenticateRequest{MethodId: cfg.AuthMethod}); err != nil {
			return p.explain(ctx, "authenticate", err, 0)
		}
	}
	return nil
}

// explain turns the error of an ACP call into one that says what happened
// to the agent when the call failed because it exited.
// A process still running that failed the request has its stderr lines
// written since mark (see stderrMark) quoted.
// A call given up by the host (ctx ended) quotes nothing.
func (p *process) explain(ctx context.Context, method string, err error, mark int) error {
	select {
	case <-p.conn.Done():
	default:
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %s", method, errorText(err))
		}
		return fmt.Errorf("%s: %s%s", method, errorText(err), p.stderrSince(mark))
	}
	if why := p.brokenReason(); why != "" {
		return fmt.Errorf("%s: %s", method, why)
	}
	select {
	case <-p.exited:
		return fmt.Errorf("%s: %s", method, p.exitText())
	case <-time.After(p.linger):
		return fmt.Errorf("%s: the agent closed its output", method)
	}
}

// stderrMark returns a mark for stderrSince: how many lines of stderr the
// process has written so far.
func (p *process) stderrMark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lines
}

// stderrSince quotes the last stderr lines (at most tailLines) the process
// wrote after mark, or returns "" when it wrote none. The agent's own
// words often say what its error message does not (a missing key, a
// refused login).
//
// The agent's stderr is read on a goroutine of its own, so lines written
// just before the failed answer may not be read yet: it waits up to
// stderrSettle for a first line, unless the host is stopping the process
// (a session disposed while it starts, a probe done): then the failure is
// the host's doing, nobody reads the explanation, and the wait would only
// hold up the close.
func (p *process) stderrSince(mark int) string {
	for deadline := time.Now().Add(stderrSettle); p.quietSince(mark) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := min(p.lines-mark, len(p.tail))
	if n <= 0 {
		return ""
	}
	return "; its last output on stderr:\n" + strings.Join(p.tail[len(p.tail)-n:], "\n")
}

// quietSince reports whether the process has written no stderr line since
// mark while nobody is stopping it.
func (p *process) quietSince(mark int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lines == mark && p.stopping == ""
}

// exitText describes how the process ended, quoting its last stderr lines.
// It must be called after exited is closed.
func (p *process) exitText() string {
	msg := "the agent exited"
	if p.err != nil {
		msg = "the agent exited (" + p.err.Error() + ")"
	}
	p.mu.Lock()
	tail := strings.Join(p.tail, "\n")
	broken := p.broken
	p.mu.Unlock()
	if broken != "" {
		msg = "the agent was stopped: " + broken
	}
	if tail != "" {
		msg += "; its last output on stderr:\n" + tail
	}
	return msg
}

// markStopping records that the host is ending the process and why, so
// that its exit is not taken for a crash. The first reason stays.
func (p *process) markStopping(why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopping == "" {
		p.stopping = why
	}
}

// stopReason returns why the host stopped the process, or "" when it did
// not.
func (p *process) stopReason() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopping
}

// stop ends the process as the host means to: its exit is not a crash.
// See terminate.
func (p *process) stop() {
	p.markStopping("stopped")
	p.terminate()
}

// terminate ends the process: stdin is closed, the group gets SIGTERM, and
// whatever is left of it after the grace period gets SIGKILL. It returns
// once the process has exited (or after a further grace period if even
// SIGKILL did not end it).
func (p *process) terminate() {
	grace := p.grace
	p.stdin.Close()
	killGroup(p.cmd, false)
	select {
	case <-p.exited:
		return
	case <-time.After(grace):
	}
	p.log.Warn("agent did not exit after SIGTERM; killing its process group", "grace", grace)
	killGroup(p.cmd, true)
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.log.Error("agent did not exit after SIGKILL")
	}
}

// errorText returns the readable part of an ACP error: the detail agents
// put in data ("error", "message" or "details", or data as a string) with
// the error's message when that adds to it.
func errorText(err error) string {
	var re *acpsdk.RequestError
	if !errors.As(err, &re) {
		return err.Error()
	}
	detail := ""
	switch d := re.Data.(type) {
	case map[string]any:
		for _, k := range []string{"error", "message", "details"} {
			if s, ok := d[k].(string); ok && strings.TrimSpace(s) != "" {
				detail = s
				break
			}
		}
	case string:
		detail = d
	}
	switch {
	case detail == "":
		return re.Message
	case re.Message == "" || genericMessages[re.Message] || strings.Contains(detail, re.Message):
		return detail
	}
	return re.Message + ": " + detail
}

// genericMessages are the JSON-RPC messages that say no more than the
// error code: the detail alone is shown instead.
var genericMessages = map[string]bool{
	"Internal error":   true,
	"Invalid params":   true,
	"Invalid request":  true,
	"Parse error":      true,
	"Method not found": true,
}
