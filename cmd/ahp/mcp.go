package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/ahp-go/ahp/protocol"
)

// mcpServer is one MCP server of a session as `ahp mcp` shows it (and,
// with --json, prints it: the shape docs/cli.md documents).
type mcpServer struct {
	Name string `json:"name"`
	// ID is the customization's id, what session/customizationToggled
	// names.
	ID        string `json:"id"`
	Transport string `json:"transport"`
	// State is the server's state kind: starting, ready, authRequired,
	// error or stopped.
	State string `json:"state"`
	// Enabled is the effective choice: the first enablement decision, on
	// when there is none.
	Enabled bool   `json:"enabled"`
	Error   string `json:"error,omitempty"`

	cz *protocol.MCPServerCustomization
}

// mcpServersOf lists the MCP server customizations of a session: the top
// level ones and those inside plugins and directories, in order.
func mcpServersOf(list []protocol.Customization) []mcpServer {
	var out []mcpServer
	add := func(cz *protocol.MCPServerCustomization) {
		m := mcpServer{Name: cz.Name, ID: cz.ID, Enabled: true, cz: cz}
		if m.Name == "" {
			m.Name = cz.ID
		}
		if raw, ok := cz.Meta["transport"]; ok {
			var t string
			if protocol.Unmarshal(raw, &t) == nil {
				m.Transport = t
			}
		}
		switch {
		case len(cz.Enablement) > 0:
			m.Enabled = protocol.EnablementOn(cz.Enablement[0])
		case cz.Enabled != nil:
			m.Enabled = *cz.Enabled
		}
		m.State = "starting"
		if cz.State != nil {
			m.State = cz.State.Kind()
		}
		if e, ok := cz.State.(*protocol.MCPServerErrorState); ok {
			m.Error = e.Error.Message
		}
		out = append(out, m)
	}
	for _, c := range list {
		var children []protocol.ChildCustomization
		switch c := c.(type) {
		case *protocol.MCPServerCustomization:
			add(c)
		case *protocol.PluginCustomization:
			children = c.Children
		case *protocol.DirectoryCustomization:
			children = c.Children
		}
		for _, ch := range children {
			if m, ok := ch.(*protocol.MCPServerCustomization); ok {
				add(m)
			}
		}
	}
	return out
}

// mcpToggle is the action turning a server on or off for the session: a
// session decision, the most specific scope, first; the other decisions
// kept, since the action replaces them all.
func mcpToggle(cz *protocol.MCPServerCustomization, on bool) *protocol.SessionCustomizationToggledAction {
	enablement := []protocol.CustomizationEnablement{&protocol.CustomizationEnablementSession{Enabled: on}}
	for _, e := range cz.Enablement {
		if _, session := e.(*protocol.CustomizationEnablementSession); !session {
			enablement = append(enablement, e)
		}
	}
	return &protocol.SessionCustomizationToggledAction{ID: cz.ID, Enablement: enablement}
}

// mcpStateText is a state kind as the listing shows it.
func mcpStateText(m mcpServer) string {
	switch m.State {
	case "authRequired":
		return "needs sign-in"
	case "error":
		if m.Error != "" {
			return "error: " + m.Error
		}
	}
	return m.State
}

// runMCP lists a session's MCP servers with their transport, state and
// choice, or turns one on or off for the session ("on SESSION NAME",
// "off SESSION NAME"), which ahpd applies from each chat's next prompt.
func runMCP(ctx context.Context, a *app, pos []string, _ any) error {
	verb, arg, name := "", pos[0], ""
	switch pos[0] {
	case "on", "off":
		if len(pos) != 3 {
			return usagef("usage: ahp mcp %s SESSION NAME", pos[0])
		}
		verb, arg, name = pos[0], pos[1], pos[2]
	default:
		if len(pos) != 1 {
			return usagef("usage: ahp mcp SESSION, or ahp mcp on|off SESSION NAME")
		}
	}
	if _, err := a.connect(ctx); err != nil {
		return err
	}
	uri, err := a.resolveSession(ctx, arg)
	if err != nil {
		return err
	}
	sub, err := a.c.Subscribe(ctx, &protocol.SubscribeParams{Channel: uri})
	if err != nil {
		return err
	}
	defer sub.Close()
	st, err := waitReady(ctx, sub)
	if err != nil {
		return err
	}
	servers := mcpServersOf(st.Customizations)
	if verb == "" {
		if a.g.json {
			for _, m := range servers {
				if err := a.printJSON(m); err != nil {
					return err
				}
			}
			return nil
		}
		if len(servers) == 0 {
			fmt.Fprintln(a.stderr, "the session has no MCP servers")
			return nil
		}
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		for _, m := range servers {
			choice := "on"
			if !m.Enabled {
				choice = "off"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.Transport, choice, mcpStateText(m))
		}
		return tw.Flush()
	}
	var target *mcpServer
	var names []string
	for i := range servers {
		names = append(names, servers[i].Name)
		if servers[i].Name == name || servers[i].ID == name {
			target = &servers[i]
			break
		}
	}
	if target == nil {
		if len(names) == 0 {
			return usagef("no MCP server %q: the session has none", name)
		}
		return usagef("no MCP server %q (the session has %s)", name, strings.Join(names, ", "))
	}
	on := verb == "on"
	r, err := sub.Dispatch(ctx, mcpToggle(target.cz, on))
	if err != nil {
		return err
	}
	if err := r.Wait(ctx); err != nil {
		return err
	}
	if a.g.json {
		return a.printJSON(map[string]any{"session": uri, "server": target.Name, "enabled": on})
	}
	fmt.Fprintf(a.stderr, "turned %s %s in %s (from each chat's next prompt)\n", target.Name, verb, sessionID(uri))
	return nil
}
