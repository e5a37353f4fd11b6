package workspace

import (
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/files"
	"github.com/ahp-go/ahp/workspace/terminal"
)

// SignInMeta is the createTerminal _meta key that makes the terminal run
// an agent's login instead of a shell: its value is the resource of a
// login method in the agent's protectedResources. The command, its
// environment and directory are the agent's (agent.Loginer); the claim
// must be the creating client's. When the command exits the agent is
// checked again and its new state published (root/agentsChanged when it
// changed) before the terminal's exit is: a client that sees the exit
// reads the agent's state after the login in the root state.
const SignInMeta = "ahp-go/signIn"

// loginCheckTimeout bounds checking an agent again after its login.
const loginCheckTimeout = time.Minute

// LoginTimeout bounds how long a login may run: a login left waiting for
// a user who went away is ended then (its terminal stays, with its
// output).
const LoginTimeout = 15 * time.Minute

// createLoginTerminal runs the login the resource in raw names.
func createLoginTerminal(w *Workspace, c host.Client, p *protocol.CreateTerminalParams, raw jsontext.Value) (any, error) {
	var resource string
	if err := json.Unmarshal(raw, &resource); err != nil || resource == "" {
		return nil, invalid("createTerminal: _meta[%q] must be the resource of an agent's login method", SignInMeta)
	}
	if cl, ok := p.Claim.(*protocol.TerminalClientClaim); !ok || cl.ClientID != c.ID() {
		return nil, invalid("createTerminal: a login terminal must be claimed by the creating client (%q)", c.ID())
	}
	cmd, ended, err := w.h.AgentLogin(resource, loginCheckTimeout)
	if err != nil {
		return nil, err
	}
	cols, rows, err := terminalSize(p, 100, 30)
	if err != nil {
		return nil, err
	}
	state := &protocol.TerminalState{
		Title:     cmd.Title,
		Cwd:       protocol.Ptr(files.URIOf(cmd.Dir)),
		Cols:      &cols,
		Rows:      &rows,
		Content:   []protocol.TerminalContentPart{},
		Lifecycle: &protocol.TerminalRunningLifecycleState{},
		Claim:     p.Claim,
		IsPty:     protocol.Ptr(true),
	}
	t := &term{w: w, uri: p.Channel, published: make(chan struct{})}
	t.claimedBy, t.claimedChat = claimOf(p.Claim)
	timer := time.AfterFunc(LoginTimeout, func() {
		w.mu.Lock()
		proc := t.proc
		w.mu.Unlock()
		if proc != nil {
			w.log.Info("login timed out", "terminal", t.uri, "after", LoginTimeout)
			t.flow.end()
			proc.Close()
		}
	})
	t.onExit = func() {
		timer.Stop()
		ended()
	}
	spec := terminal.Spec{Command: append([]string{cmd.Command}, cmd.Args...), Dir: cmd.Dir, Env: cmd.Env, Cols: int(cols), Rows: int(rows)}
	if err := w.startTerm(t, state, spec); err != nil {
		timer.Stop()
		return nil, err
	}
	w.log.Info("login terminal created", "terminal", t.uri, "resource", resource)
	return nil, nil
}
