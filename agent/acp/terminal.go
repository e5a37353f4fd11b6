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

// terminals are the terminals an agent created with terminal/create.
type terminals struct {
	mu sync.Mutex
	m  map[string]agent.Terminal
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
	if t := s.terms.m[id]; t != nil {
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
	s.terms.mu.Lock()
	if s.terms.m == nil {
		s.terms.m = map[string]agent.Terminal{}
	}
	s.terms.m[t.URI()] = t
	s.terms.mu.Unlock()
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
