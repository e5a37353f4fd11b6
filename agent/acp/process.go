package acp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// process is one running agent: the subprocess, in its own process group,
// and the ACP connection over its stdin and stdout.
//
// Its stderr goes to the log line by line; the last lines are kept for the
// message shown when the agent crashes.
type process struct {
	cmd   *exec.Cmd
	conn  *acpsdk.ClientSideConnection
	flow  *flowReader
	stdin *os.File
	log   *slog.Logger

	init acpsdk.InitializeResponse // set by handshake

	exited chan struct{} // closed once the process has exited and the connection is down
	err    error         // the exit status, set before exited closes

	gen         int  // which of its session's processes this is (1, 2, ...)
	exitHandled bool // its session has dealt with its exit (guarded by session.mu)

	mu       sync.Mutex
	stopping string   // why the host is stopping it ("" while it is not): its exit is not a crash
	tail     []string // the last lines of stderr
}

// tailLines is how many stderr lines a crash message quotes.
const tailLines = 8

// startProcess starts cfg's command in dir with env and connects to it as
// an ACP client, served by what newClient returns for the process.
func startProcess(cfg *Config, dir string, env []string, newClient func(*process) acpsdk.Client, log *slog.Logger) (*process, error) {
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
	p := &process{
		cmd:    cmd,
		stdin:  inW,
		log:    log.With("pid", cmd.Process.Pid),
		exited: make(chan struct{}),
	}
	p.flow = newFlowReader(outR)
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
		case <-time.After(2 * time.Second):
			// Something outside the group still holds stdout.
			outR.Close()
			<-p.conn.Done()
		}
		p.flow.drain(time.Second)
		select {
		case <-stderrDone:
		case <-time.After(time.Second):
			errR.Close()
		}
		inW.Close()
		p.err = err
		close(p.exited)
	}()
	p.log.Info("agent started", "command", cfg.Command, "dir", dir)
	return p, nil
}

// captureStderr logs each line of the agent's stderr and keeps the last
// ones.
func (p *process) captureStderr(r io.ReadCloser) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 4096)
	for {
		line, err := br.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line != "" {
			if len(line) > 2000 {
				line = line[:2000] + "…"
			}
			p.log.Info("agent stderr", "line", line)
			p.mu.Lock()
			p.tail = append(p.tail, line)
			if len(p.tail) > tailLines {
				p.tail = p.tail[len(p.tail)-tailLines:]
			}
			p.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// handshake runs ACP initialize and, when authMethod is set, authenticate.
func (p *process) handshake(ctx context.Context, cfg *Config, clientInfo acpsdk.Implementation) error {
	res, err := p.conn.Initialize(ctx, acpsdk.InitializeRequest{
		ProtocolVersion: acpsdk.ProtocolVersionNumber,
		ClientInfo:      &clientInfo,
		ClientCapabilities: acpsdk.ClientCapabilities{
			Fs: acpsdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
		},
	})
	if err != nil {
		return p.explain("initialize", err)
	}
	if res.ProtocolVersion != acpsdk.ProtocolVersionNumber {
		return fmt.Errorf("the agent speaks ACP version %d; this host speaks version %d", res.ProtocolVersion, acpsdk.ProtocolVersionNumber)
	}
	p.init = res
	if cfg.AuthMethod != "" {
		if _, err := p.conn.Authenticate(ctx, acpsdk.AuthenticateRequest{MethodId: cfg.AuthMethod}); err != nil {
			return p.explain("authenticate", err)
		}
	}
	return nil
}

// explain turns the error of an ACP call into one that says what happened
// to the agent when the call failed because it exited.
func (p *process) explain(method string, err error) error {
	select {
	case <-p.conn.Done():
	default:
		return fmt.Errorf("%s: %s", method, errorText(err))
	}
	select {
	case <-p.exited:
		return fmt.Errorf("%s: %s", method, p.exitText())
	case <-time.After(time.Second):
		return fmt.Errorf("%s: the agent closed its output", method)
	}
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
	p.mu.Unlock()
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

// stop ends the process: stdin is closed, the group gets SIGTERM, and
// whatever is left of it after grace gets SIGKILL. It returns once the
// process has exited (or after a further grace period if even SIGKILL did
// not end it).
func (p *process) stop(grace time.Duration) {
	p.markStopping("stopped")
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

// errorText returns the readable part of an ACP error.
func errorText(err error) string {
	var re *acpsdk.RequestError
	if errors.As(err, &re) {
		if m, ok := re.Data.(map[string]any); ok {
			if s, ok := m["error"].(string); ok && s != "" {
				return s
			}
			if s, ok := m["details"].(string); ok && s != "" {
				return re.Message + ": " + s
			}
		}
		if s, ok := re.Data.(string); ok && s != "" {
			return re.Message + ": " + s
		}
		return re.Message
	}
	return err.Error()
}
