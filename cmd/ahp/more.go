package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/ahp-go/ahp/protocol"
)

// runAgents lists the agents the host offers: their models, their modes
// (agent customizations) and whether they need a sign-in.
func runAgents(ctx context.Context, a *app, _ []string, _ any) error {
	if _, err := a.connect(ctx); err != nil {
		return err
	}
	root, err := a.rootState(ctx)
	if err != nil {
		return err
	}
	if a.g.json {
		for _, ag := range root.Agents {
			if err := a.printJSON(agentJSONOf(ag)); err != nil {
				return err
			}
		}
		return nil
	}
	if len(root.Agents) == 0 {
		fmt.Fprintln(a.stderr, "the host offers no agents")
		return nil
	}
	for i, ag := range root.Agents {
		if i > 0 {
			fmt.Fprintln(a.stdout)
		}
		name := ag.DisplayName
		if name == "" {
			name = ag.Provider
		}
		fmt.Fprintf(a.stdout, "%s (provider %s)\n", name, ag.Provider)
		if ag.Description != "" {
			fmt.Fprintf(a.stdout, "  %s\n", ag.Description)
		}
		fmt.Fprintf(a.stdout, "  state: %s\n", agentState(ag))
		for _, m := range methodsText(ag) {
			fmt.Fprintf(a.stdout, "  sign-in %s\n", m)
		}
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		for _, m := range ag.Models {
			fmt.Fprintf(tw, "  model\t%s\t%s\n", m.ID, m.Name)
		}
		for _, m := range agentsOf(ag.Customizations) {
			desc := ""
			if m.Description != nil {
				desc = *m.Description
			}
			fmt.Fprintf(tw, "  mode\t%s\t%s\n", m.Name, desc)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// agentJSON is one line of `ahp agents --json`: the shape docs/cli.md
// documents, kept stable whatever the wire's AgentInfo grows. Every member
// is always present; lists are empty rather than null.
type agentJSON struct {
	// Name is the agent's provider: what `ahp new --provider` and
	// `ahp login` take.
	Name string `json:"name"`
	// Title is the name to show, the provider when the agent has none.
	Title       string `json:"title"`
	Description string `json:"description"`
	// State is "ready", "needs sign-in" or "failed", as in `ahp login`.
	State  string             `json:"state"`
	SignIn []signInMethodJSON `json:"signIn"`
	Models []agentModelJSON   `json:"models"`
}

type signInMethodJSON struct {
	// ID is what `ahp login --method` takes.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Kind is "key" (a key sent with `ahp login --key-stdin`) or "login"
	// (the agent's own login, run in a terminal on the host).
	Kind string `json:"kind"`
	// Resource is the protected resource the method signs in to.
	Resource string `json:"resource"`
}

type agentModelJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// agentJSONOf is an agent's line of `ahp agents --json`.
func agentJSONOf(ag protocol.AgentInfo) agentJSON {
	out := agentJSON{
		Name: ag.Provider, Title: ag.DisplayName, Description: ag.Description, State: agentState(ag),
		SignIn: []signInMethodJSON{}, Models: []agentModelJSON{},
	}
	if out.Title == "" {
		out.Title = ag.Provider
	}
	for _, m := range signInMethods(ag) {
		kind := "key"
		if m.login {
			kind = "login"
		}
		out.SignIn = append(out.SignIn, signInMethodJSON{ID: m.id, Name: m.name, Kind: kind, Resource: m.resource})
	}
	for _, m := range ag.Models {
		out.Models = append(out.Models, agentModelJSON{ID: m.ID, Name: m.Name})
	}
	return out
}

// sessionAction subscribes to a session, dispatches an action to it and
// waits until the host applied it.
func (a *app) sessionAction(ctx context.Context, arg string, action protocol.StateAction) (string, error) {
	if _, err := a.connect(ctx); err != nil {
		return "", err
	}
	uri, err := a.resolveSession(ctx, arg)
	if err != nil {
		return "", err
	}
	sub, err := a.c.Subscribe(ctx, &protocol.SubscribeParams{Channel: uri})
	if err != nil {
		return "", err
	}
	defer sub.Close()
	r, err := sub.Dispatch(ctx, action)
	if err != nil {
		return "", err
	}
	return uri, r.Wait(ctx)
}

// runRename sets a session's title.
func runRename(ctx context.Context, a *app, pos []string, _ any) error {
	title := strings.TrimSpace(pos[1])
	if title == "" {
		return usagef("the title is empty")
	}
	uri, err := a.sessionAction(ctx, pos[0], &protocol.SessionTitleChangedAction{Title: title})
	if err != nil {
		return err
	}
	if a.g.json {
		return a.printJSON(map[string]string{"session": uri, "title": title})
	}
	fmt.Fprintf(a.stderr, "renamed %s to %q\n", sessionID(uri), title)
	return nil
}

type archiveOptions struct{ undo bool }

func archiveFlags(fs *flag.FlagSet) any {
	o := &archiveOptions{}
	fs.BoolVar(&o.undo, "undo", false, "unarchive the session instead")
	return o
}

// runArchive archives a session (or, with --undo, brings it back).
func runArchive(ctx context.Context, a *app, pos []string, flags any) error {
	o := flags.(*archiveOptions)
	uri, err := a.sessionAction(ctx, pos[0], &protocol.SessionIsArchivedChangedAction{IsArchived: !o.undo})
	if err != nil {
		return err
	}
	if a.g.json {
		return a.printJSON(map[string]any{"session": uri, "archived": !o.undo})
	}
	what := "archived"
	if o.undo {
		what = "unarchived"
	}
	fmt.Fprintf(a.stderr, "%s %s\n", what, sessionID(uri))
	return nil
}

// runShow prints the transcript of a session's chat: each message, the
// reply's text, tool calls and errors.
func runShow(ctx context.Context, a *app, pos []string, _ any) error {
	if _, err := a.connect(ctx); err != nil {
		return err
	}
	uri, err := a.resolveSession(ctx, pos[0])
	if err != nil {
		return err
	}
	sess, err := a.c.Subscribe(ctx, &protocol.SubscribeParams{Channel: uri})
	if err != nil {
		return err
	}
	defer sess.Close()
	st, err := waitReady(ctx, sess)
	if err != nil {
		return err
	}
	chat, err := a.c.Subscribe(ctx, &protocol.SubscribeParams{Channel: defaultChat(st)})
	if err != nil {
		return err
	}
	defer chat.Close()
	cs := chat.Chat()
	if a.g.json {
		for i := range cs.Turns {
			t := &cs.Turns[i]
			if err := a.printJSON(map[string]any{"type": "turn", "turnId": t.ID, "message": t.Message.Text,
				"model": turnModel(t), "state": t.State, "text": replyOf(t.ResponseParts)}); err != nil {
				return err
			}
		}
		return nil
	}
	md := a.markdown()
	if st.Title != "" {
		fmt.Fprintf(a.stdout, "%s\n\n", md("# "+strings.TrimLeft(st.Title, "# ")))
	}
	for i := range cs.Turns {
		writeTurn(a.stdout, &cs.Turns[i], md)
	}
	if len(cs.Turns) == 0 {
		fmt.Fprintln(a.stderr, "no turns yet")
	}
	return nil
}

// writeTurn prints one completed turn of a transcript; md renders the
// reply's markdown.
func writeTurn(w io.Writer, t *protocol.Turn, md func(string) string) {
	head := "» " + strings.ReplaceAll(t.Message.Text, "\n", "\n  ")
	if m := turnModel(t); m != "" {
		head += "   (" + m + ")"
	}
	fmt.Fprintln(w, head)
	for _, part := range t.ResponseParts {
		switch p := part.(type) {
		case *protocol.MarkdownResponsePart:
			if text := strings.TrimRight(p.Content.String(), "\n"); text != "" {
				fmt.Fprintln(w, strings.TrimRight(md(text), "\n"))
			}
		case *protocol.ToolCallResponsePart:
			fmt.Fprintf(w, "[tool] %s\n", toolSummary(p.ToolCall))
		case *protocol.ErrorResponsePart:
			fmt.Fprintf(w, "[error] %s\n", p.Error.Message)
		}
	}
	if t.State == protocol.TurnStateCancelled {
		fmt.Fprintln(w, "[cancelled]")
	}
	fmt.Fprintln(w)
}

// toolSummary names a tool call and how it ended.
func toolSummary(tc protocol.ToolCallState) string {
	switch t := tc.(type) {
	case *protocol.ToolCallCompletedState:
		out := t.DisplayName + ": " + t.PastTenseMessage.String()
		if !t.Success {
			out += " (failed)"
		}
		return out
	case *protocol.ToolCallCancelledState:
		return t.DisplayName + ": cancelled"
	}
	return "a tool call"
}
