package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ahp-go/ahp/protocol"
)

// selection is the model and agent a conversation's messages ask for,
// chosen among what the root state offers for the session's provider.
type selection struct {
	models []protocol.SessionModelInfo
	agents []protocol.AgentCustomization
	model  *protocol.ModelSelection
	agent  *protocol.AgentSelection
}

// offers reads what the root state offers for provider.
func (a *app) offers(ctx context.Context, provider string) (*selection, error) {
	root, err := a.rootState(ctx)
	if err != nil {
		return nil, err
	}
	sel := &selection{}
	for _, ag := range root.Agents {
		if ag.Provider != provider {
			continue
		}
		sel.models = ag.Models
		sel.agents = agentsOf(ag.Customizations)
	}
	return sel, nil
}

// agentsOf lists the agent customizations in the plugins among cs (ahpd
// lists an ACP agent's modes as a plugin of agents).
func agentsOf(cs []protocol.Customization) []protocol.AgentCustomization {
	var out []protocol.AgentCustomization
	for _, c := range cs {
		if p, ok := c.(*protocol.PluginCustomization); ok {
			for _, ch := range p.Children {
				if ag, ok := ch.(*protocol.AgentCustomization); ok {
					out = append(out, *ag)
				}
			}
		}
	}
	return out
}

// setModel selects a model by ID or name; "" selects none (the agent's
// default).
func (s *selection) setModel(arg string) error {
	if arg == "" {
		s.model = nil
		return nil
	}
	for _, m := range s.models {
		if m.ID == arg || strings.EqualFold(m.Name, arg) {
			s.model = &protocol.ModelSelection{ID: m.ID}
			return nil
		}
	}
	return fmt.Errorf("no model %q here; %s", arg, s.modelList())
}

// setAgent selects an agent by URI, ID or name; "" selects none.
func (s *selection) setAgent(arg string) error {
	if arg == "" {
		s.agent = nil
		return nil
	}
	for _, ag := range s.agents {
		if string(ag.URI) == arg || ag.ID == arg || strings.EqualFold(ag.Name, arg) {
			s.agent = &protocol.AgentSelection{URI: ag.URI}
			return nil
		}
	}
	return fmt.Errorf("no agent %q here; %s", arg, s.agentList())
}

func (s *selection) modelList() string {
	if len(s.models) == 0 {
		return "the host offers no models for this session"
	}
	names := make([]string, len(s.models))
	for i, m := range s.models {
		names[i] = m.ID
		if m.Name != "" && m.Name != m.ID {
			names[i] += " (" + m.Name + ")"
		}
	}
	return "the host offers " + strings.Join(names, ", ")
}

func (s *selection) agentList() string {
	if len(s.agents) == 0 {
		return "the host offers no agents for this session"
	}
	names := make([]string, len(s.agents))
	for i, ag := range s.agents {
		names[i] = ag.Name
		if ag.ID != "" && !strings.EqualFold(ag.ID, ag.Name) {
			names[i] += " (" + ag.ID + ")"
		}
	}
	return "the host offers " + strings.Join(names, ", ")
}

// apply carries the selection on a message.
func (s *selection) apply(m protocol.Message) protocol.Message {
	if s == nil {
		return m
	}
	m.Model, m.Agent = s.model, s.agent
	return m
}

// command handles /model and /agent in a chat: without an argument it
// lists what is offered, marking the selection; with one it selects
// ("-" for the default). It reports false for other lines.
func (s *selection) command(w io.Writer, line string) bool {
	cmd, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	if arg == "-" {
		arg = ""
	}
	switch cmd {
	case "/model":
		if !strings.Contains(line, " ") {
			for _, m := range s.models {
				mark := " "
				if s.model != nil && s.model.ID == m.ID {
					mark = "*"
				}
				fmt.Fprintf(w, "%s %s  %s\n", mark, m.ID, m.Name)
			}
			if len(s.models) == 0 {
				fmt.Fprintln(w, s.modelList())
			}
			return true
		}
		if err := s.setModel(arg); err != nil {
			fmt.Fprintln(w, err)
		} else if s.model == nil {
			fmt.Fprintln(w, "model: the agent's default")
		} else {
			fmt.Fprintln(w, "model: "+s.model.ID)
		}
		return true
	case "/agent":
		if !strings.Contains(line, " ") {
			for _, ag := range s.agents {
				mark := " "
				if s.agent != nil && s.agent.URI == ag.URI {
					mark = "*"
				}
				fmt.Fprintf(w, "%s %s  %s\n", mark, ag.Name, ag.URI)
			}
			if len(s.agents) == 0 {
				fmt.Fprintln(w, s.agentList())
			}
			return true
		}
		if err := s.setAgent(arg); err != nil {
			fmt.Fprintln(w, err)
		} else if s.agent == nil {
			fmt.Fprintln(w, "agent: the default")
		} else {
			fmt.Fprintln(w, "agent: "+string(s.agent.URI))
		}
		return true
	}
	return false
}
