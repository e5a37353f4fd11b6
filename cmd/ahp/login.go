package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
)

// The sign-in conventions of ahpd (docs/agents.md): a sign-in method is a
// protected resource of the agent, ".../key/ID" for a key sent with
// authenticate, ".../login/ID" for a login run in a terminal created with
// the signInMeta _meta key; the description of an agent that failed
// starts with failedPrefix.
const (
	signInMeta   = "ahp-go/signIn"
	failedPrefix = "Failed: "
)

// agentState is an agent's state as its root entry tells it: "ready",
// "needs sign-in" or "failed".
func agentState(ag protocol.AgentInfo) string {
	switch {
	case strings.HasPrefix(ag.Description, failedPrefix):
		return "failed"
	case needsSignIn(ag):
		return "needs sign-in"
	}
	return "ready"
}

// needsSignIn reports whether a protected resource of the agent is
// required (an absent "required" means required).
func needsSignIn(ag protocol.AgentInfo) bool {
	for _, r := range ag.ProtectedResources {
		if r.Required == nil || *r.Required {
			return true
		}
	}
	return false
}

// signInMethod is one way to sign an agent in.
type signInMethod struct {
	resource, id, name string
	login              bool // run in a terminal; else a key
}

// signInMethods lists the agent's sign-in methods.
func signInMethods(ag protocol.AgentInfo) []signInMethod {
	var out []signInMethod
	for _, r := range ag.ProtectedResources {
		m := signInMethod{resource: r.Resource, id: r.Resource}
		if i := strings.LastIndexByte(r.Resource, '/'); i >= 0 {
			if id, err := url.PathUnescape(r.Resource[i+1:]); err == nil {
				m.id = id
			}
			m.login = strings.HasSuffix(r.Resource[:i], "/login")
		}
		m.name = m.id
		if r.ResourceName != nil && *r.ResourceName != "" {
			m.name = *r.ResourceName
		}
		out = append(out, m)
	}
	return out
}

// methodsText describes an agent's sign-in methods for `ahp agents`.
func methodsText(ag protocol.AgentInfo) []string {
	var out []string
	for _, m := range signInMethods(ag) {
		how := "ahp login " + ag.Provider + " --method " + m.id
		if m.login {
			out = append(out, fmt.Sprintf("login %s: %s (%s)", m.id, m.name, how))
		} else {
			out = append(out, fmt.Sprintf("key %s: %s (%s --key-stdin)", m.id, m.name, how))
		}
	}
	return out
}

type loginOptions struct {
	keyStdin bool
	method   string
}

func loginFlags(fs *flag.FlagSet) any {
	o := &loginOptions{}
	fs.BoolVar(&o.keyStdin, "key-stdin", false, "read the key from stdin (its first line)")
	fs.StringVar(&o.method, "method", "", "the sign-in method's id (see ahp agents)")
	return o
}

// runLogin signs an agent in: with a key (read without echo on a
// terminal, or from stdin) or with the agent's own login, run in a
// terminal on the host that this command shows and types into.
func runLogin(ctx context.Context, a *app, pos []string, flags any) error {
	o := flags.(*loginOptions)
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	root, err := a.rootState(ctx)
	if err != nil {
		return err
	}
	var ag *protocol.AgentInfo
	var names []string
	for i := range root.Agents {
		names = append(names, root.Agents[i].Provider)
		if root.Agents[i].Provider == pos[0] {
			ag = &root.Agents[i]
		}
	}
	if ag == nil {
		return usagef("no agent %q (the host offers %s)", pos[0], strings.Join(names, ", "))
	}
	m, err := chooseMethod(*ag, o, a.stdinTTY)
	if err != nil {
		return err
	}
	if m.login {
		return a.runLoginTerminal(ctx, c, *ag, m)
	}
	key, err := a.readKey(o.keyStdin, m)
	if err != nil {
		return err
	}
	if _, err := c.Authenticate(ctx, &protocol.AuthenticateParams{Resource: m.resource, Token: key}); err != nil {
		return err
	}
	return a.reportAgent(ctx, ag.Provider)
}

// chooseMethod picks the sign-in method: the one named, else the only
// one, else the only key method when the key comes from stdin.
func chooseMethod(ag protocol.AgentInfo, o *loginOptions, tty bool) (signInMethod, error) {
	ms := signInMethods(ag)
	if len(ms) == 0 {
		return signInMethod{}, fmt.Errorf("agent %s offers no sign-in method ahpd can use (%s)", ag.Provider, ag.Description)
	}
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.id)
	}
	if o.method != "" {
		for _, m := range ms {
			if m.id == o.method {
				if o.keyStdin && m.login {
					return m, usagef("method %s is a login in a terminal; it takes no key", m.id)
				}
				return m, nil
			}
		}
		return signInMethod{}, usagef("agent %s has no sign-in method %q (it has %s)", ag.Provider, o.method, strings.Join(ids, ", "))
	}
	var keys []signInMethod
	for _, m := range ms {
		if !m.login {
			keys = append(keys, m)
		}
	}
	switch {
	case o.keyStdin && len(keys) == 1:
		return keys[0], nil
	case o.keyStdin && len(keys) == 0:
		return signInMethod{}, usagef("agent %s takes no key (its methods: %s)", ag.Provider, strings.Join(ids, ", "))
	case len(ms) == 1 && (tty || !ms[0].login):
		return ms[0], nil
	case !tty && len(keys) == 1:
		return keys[0], nil
	}
	return signInMethod{}, usagef("choose a method with --method: %s", strings.Join(ids, ", "))
}

// readKey reads the key: from stdin's first line when asked or when stdin
// is no terminal, else typed at a prompt without echo.
func (a *app) readKey(fromStdin bool, m signInMethod) (string, error) {
	if !fromStdin && a.stdinTTY && a.cbreak != nil {
		// Echo goes off before the prompt shows: nothing typed after it
		// is echoed.
		restore, err := a.cbreak()
		if err != nil {
			return "", err
		}
		fmt.Fprintf(a.stderr, "%s: ", m.name)
		line, err := readSecretLine(a.stdin)
		restore()
		fmt.Fprintln(a.stderr)
		if err != nil && !errors.Is(err, io.EOF) {
			return "", err
		}
		return checkKey(line)
	}
	line, err := bufio.NewReader(io.LimitReader(a.stdin, 64<<10)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return checkKey(line)
}

// readSecretLine reads a line typed on a terminal without echo (in
// cbreak mode, so it edits the line itself): Backspace removes a
// character, Ctrl-U the whole line, Ctrl-D on an empty line ends the
// input; Enter ends the line.
func readSecretLine(r io.Reader) (string, error) {
	var line []byte
	buf := make([]byte, 256)
	for {
		n, err := r.Read(buf)
		for _, c := range buf[:n] {
			switch {
			case c == '\r' || c == '\n':
				return string(line), nil
			case c == 0x7f || c == 0x08:
				if len(line) > 0 {
					_, size := utf8.DecodeLastRune(line)
					line = line[:len(line)-size]
				}
			case c == 0x15:
				line = line[:0]
			case c == 0x04 && len(line) == 0:
				return "", io.EOF
			case c >= 0x20:
				line = append(line, c)
			}
		}
		if len(line) > 64<<10 {
			return "", usagef("the key is too long")
		}
		if err != nil {
			return string(line), err
		}
	}
}

func checkKey(line string) (string, error) {
	key := strings.TrimSpace(line)
	if key == "" {
		return "", usagef("no key given")
	}
	return key, nil
}

// reportAgent prints the agent's state after a sign-in, and fails unless
// it is ready.
func (a *app) reportAgent(ctx context.Context, provider string) error {
	root, err := a.rootState(ctx)
	if err != nil {
		return err
	}
	for _, ag := range root.Agents {
		if ag.Provider != provider {
			continue
		}
		st := agentState(ag)
		if a.g.json {
			if err := a.printJSON(map[string]string{"agent": provider, "state": st, "description": ag.Description}); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(a.stderr, "%s: %s\n", provider, st)
		}
		if st != "ready" {
			return fmt.Errorf("%s is not ready: %s", provider, ag.Description)
		}
		return nil
	}
	return fmt.Errorf("agent %s is gone", provider)
}

// runLoginTerminal creates the login terminal on the host, shows its
// output and types stdin into it until the login exits, then waits for
// the host to check the agent again.
func (a *app) runLoginTerminal(ctx context.Context, c *client.Client, ag protocol.AgentInfo, m signInMethod) error {
	uri := protocol.TerminalURI(a.newID())
	meta := map[string]jsontext.Value{signInMeta: jsontext.Value(fmt.Sprintf("%q", m.resource))}
	p := &protocol.CreateTerminalParams{Channel: uri, Meta: meta, Claim: &protocol.TerminalClientClaim{ClientID: c.ID()}}
	if err := c.CreateTerminal(ctx, p); err != nil {
		return err
	}
	defer c.DisposeTerminal(context.WithoutCancel(ctx), &protocol.DisposeTerminalParams{Channel: uri})
	sub, err := c.Subscribe(ctx, &protocol.SubscribeParams{Channel: uri})
	if err != nil {
		return err
	}
	defer sub.Close()
	fmt.Fprintf(a.stderr, "running %s's login (%s) on the host; it ends when the login does\n", ag.Provider, m.name)
	if st, ok := sub.State().(*protocol.TerminalState); ok {
		for _, part := range st.Content {
			switch part := part.(type) {
			case *protocol.TerminalUnclassifiedPart:
				io.WriteString(a.stdout, part.Value.String())
			case *protocol.TerminalCommandPart:
				io.WriteString(a.stdout, part.Output.String())
			}
		}
		if _, exited := st.Lifecycle.(*protocol.TerminalExitedLifecycleState); exited {
			return a.awaitAgentCheck(ctx, ag.Provider)
		}
	}
	// Keys typed go to the login; the reader ends with the command.
	if a.stdinTTY && a.cbreak != nil {
		if restore, err := a.cbreak(); err == nil {
			defer restore()
		}
	}
	inCtx, stopInput := context.WithCancel(ctx)
	defer stopInput()
	go a.forwardInput(inCtx, sub)
	for {
		ev, err := sub.Next(ctx)
		if errors.Is(err, client.ErrLagged) {
			continue
		}
		if err != nil {
			return err
		}
		if ev.Envelope == nil {
			continue
		}
		switch act := ev.Envelope.Action.(type) {
		case *protocol.TerminalDataAction:
			io.WriteString(a.stdout, act.Data)
		case *protocol.TerminalExitedAction:
			stopInput()
			fmt.Fprintln(a.stderr, "\nthe login ended; the host checks the agent again")
			return a.awaitAgentCheck(ctx, ag.Provider)
		}
	}
}

// forwardInput types what stdin reads into the terminal until ctx ends.
// The read in progress when it does is left to the process's exit.
func (a *app) forwardInput(ctx context.Context, sub *client.Subscription) {
	buf := make([]byte, 1024)
	for {
		n, err := a.stdin.Read(buf)
		if ctx.Err() != nil {
			return
		}
		if n > 0 {
			if _, derr := sub.Dispatch(ctx, &protocol.TerminalInputAction{Data: string(buf[:n])}); derr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// awaitAgentCheck reports the agent's state once its login exited: the
// host checks the agent before it publishes the exit.
func (a *app) awaitAgentCheck(ctx context.Context, provider string) error {
	return a.reportAgent(ctx, provider)
}
