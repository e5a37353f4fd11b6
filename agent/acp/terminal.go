package acp

import (
	"context"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/ahp-go/ahp/agent"
)

// The agent's terminal/* requests run in AHP terminals claimed by the
// session and the chat of the ACP session that asked, so every client
// sees them live. The ACP terminal id is the AHP terminal URI, which is
// also what terminal tool content names.

// terminals are the terminals an agent created with terminal/create and
// has not released. The bridge releases them itself when their owner
// ends: the agent process that asked (its ACP sessions end with it) or
// the AHP session, so that no command outlives the agent that ran it.
type terminals struct {
	mu sync.Mutex
	m  map[string]agentTerminal
}

// agentTerminal is a terminal, the agent process (by generation) that
// created it and the chat whose ACP session asked.
type agentTerminal struct {
	agent.Terminal
	gen  int
	chat string
}

// releaseTerminals releases the agent's terminals that match: all of them
// when the session closes, a process's when it exits.
func (s *session) releaseTerminals(match func(agentTerminal) bool) {
	s.terms.mu.Lock()
	var gone []agentTerminal
	for id, t := range s.terms.m {
		if match(t) {
			gone = append(gone, t)
			delete(s.terms.m, id)
		}
	}
	s.terms.mu.Unlock()
	for _, t := range gone {
		if err := t.Release(); err != nil {
			s.log.Warn("releasing an agent's terminal failed", "terminal", t.URI(), "err", err)
		}
	}
}

// terminalService returns the host's terminals, or nil when it offers
// none.
func (s *session) terminalService() agent.Terminals {
	if th, ok := s.host.(agent.TerminalHost); ok {
		return th.Terminals()
	}
	return nil
}

func (s *session) terminal(id string) (agent.Terminal, error) {
	s.terms.mu.Lock()
	defer s.terms.mu.Unlock()
	if t, ok := s.terms.m[id]; ok {
		return t, nil
	}
	return nil, acpsdk.NewInvalidParams(map[string]any{"error": "no terminal " + id})
}

func (c *client) CreateTerminal(ctx context.Context, req acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	s := c.s
	svc := s.terminalService()
	if svc == nil {
		return acpsdk.CreateTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/create")
	}
	cmd := agent.TerminalCommand{Session: s.uri, Command: req.Command, Args: req.Args}
	s.mu.Lock()
	if ch := s.byACP[acpKey{c.p.gen, req.SessionId}]; ch != nil {
		cmd.Chat = ch.uri
	}
	s.mu.Unlock()
	if req.Cwd != nil {
		cmd.Cwd = *req.Cwd
	} else {
		cmd.Cwd = s.dir
	}
	for _, e := range req.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	if req.OutputByteLimit != nil {
		cmd.OutputLimit = *req.OutputByteLimit
	}
	t, err := svc.StartCommand(ctx, cmd)
	if err != nil {
		return acpsdk.CreateTerminalResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": "terminal/create: " + err.Error()})
	}
	// The agent's process or the session may have ended while the command
	// started: its terminal goes with them. Lock order: terms.mu, then mu;
	// releaseTerminals runs after its owner was marked gone under mu, so
	// it either sees this terminal or this sees the owner gone.
	s.terms.mu.Lock()
	s.mu.Lock()
	over := s.closed || s.proc != c.p
	gen := c.p.gen
	s.mu.Unlock()
	if !over {
		if s.terms.m == nil {
			s.terms.m = map[string]agentTerminal{}
		}
		s.terms.m[t.URI()] = agentTerminal{Terminal: t, gen: gen, chat: cmd.Chat}
	}
	s.terms.mu.Unlock()
	if over {
		t.Release()
		return acpsdk.CreateTerminalResponse{}, acpsdk.NewInternalError(map[string]any{"error": "terminal/create: the agent's session ended"})
	}
	return acpsdk.CreateTerminalResponse{TerminalId: t.URI()}, nil
}

func (c *client) TerminalOutput(ctx context.Context, req acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	t, err := c.s.terminal(req.TerminalId)
	if err != nil {
		return acpsdk.TerminalOutputResponse{}, err
	}
	out, truncated, exit := t.Output()
	resp := acpsdk.TerminalOutputResponse{Output: out, Truncated: truncated}
	if exit != nil {
		resp.ExitStatus = &acpsdk.TerminalExitStatus{ExitCode: exit.Code}
		if exit.Signal != "" {
			resp.ExitStatus.Signal = &exit.Signal
		}
	}
	return resp, nil
}

func (c *client) WaitForTerminalExit(ctx context.Context, req acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	t, err := c.s.terminal(req.TerminalId)
	if err != nil {
		return acpsdk.WaitForTerminalExitResponse{}, err
	}
	exit, err := t.Wait(ctx)
	if err != nil {
		return acpsdk.WaitForTerminalExitResponse{}, err
	}
	resp := acpsdk.WaitForTerminalExitResponse{ExitCode: exit.Code}
	if exit.Signal != "" {
		resp.Signal = &exit.Signal
	}
	return resp, nil
}

func (c *client) KillTerminal(ctx context.Context, req acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	t, err := c.s.terminal(req.TerminalId)
	if err != nil {
		return acpsdk.KillTerminalResponse{}, err
	}
	return acpsdk.KillTerminalResponse{}, t.Kill()
}

func (c *client) ReleaseTerminal(ctx context.Context, req acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	t, err := c.s.terminal(req.TerminalId)
	if err != nil {
		return acpsdk.ReleaseTerminalResponse{}, err
	}
	c.s.terms.mu.Lock()
	delete(c.s.terms.m, req.TerminalId)
	c.s.terms.mu.Unlock()
	return acpsdk.ReleaseTerminalResponse{}, t.Release()
}
