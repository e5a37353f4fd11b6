package reducer

import (
	"slices"
	"strings"

	"github.com/ahp-go/ahp/protocol"
)

// Terminal returns the state after applying a terminal-channel action.
//
// Output from terminal/data is appended with protocol.Text, so streaming a
// long output costs time proportional to the new bytes only; every earlier
// state keeps its own view of the text. Each action still copies the
// content slice (one pointer per part), so a terminal that keeps many
// parts should be trimmed by its owner.
//
// terminal/input changes nothing: the host forwards it to the process and
// the echo comes back as terminal/data. Actions of other channels, unknown
// actions and a nil state return s itself.
func (r Reducer) Terminal(s *protocol.TerminalState, a protocol.StateAction) *protocol.TerminalState {
	if s == nil {
		return s
	}
	switch a := a.(type) {
	case *protocol.TerminalDataAction:
		return terminalData(s, a)
	case *protocol.TerminalInputAction:
		return s
	case *protocol.TerminalResizedAction:
		next := *s
		next.Cols, next.Rows = protocol.Ptr(a.Cols), protocol.Ptr(a.Rows)
		return &next
	case *protocol.TerminalClaimedAction:
		next := *s
		next.Claim = a.Claim
		return &next
	case *protocol.TerminalTitleChangedAction:
		next := *s
		next.Title = a.Title
		return &next
	case *protocol.TerminalCwdChangedAction:
		next := *s
		next.Cwd = protocol.Ptr(a.Cwd)
		return &next
	case *protocol.TerminalExitedAction:
		// 1.x: the lifecycle becomes exited, with the exit code when there
		// is one (TerminalLifecycleState preserves exits without a code).
		next := *s
		next.Lifecycle = &protocol.TerminalExitedLifecycleState{ExitCode: a.ExitCode}
		next.ExitCode = nil
		return &next
	case *protocol.TerminalClearedAction:
		next := *s
		next.Content = []protocol.TerminalContentPart{}
		return &next
	case *protocol.TerminalCommandDetectionAvailableAction:
		next := *s
		next.SupportsCommandDetection = protocol.Ptr(true)
		return &next
	case *protocol.TerminalCommandExecutedAction:
		return terminalCommandExecuted(s, a)
	case *protocol.TerminalCommandFinishedAction:
		return terminalCommandFinished(s, a)
	}
	return s
}

// terminalData appends output to the tail part when it can still grow (an
// unclassified part, or a command that has not finished) and otherwise
// starts a new unclassified part, even for empty data, as the reference
// reducer does.
func terminalData(s *protocol.TerminalState, a *protocol.TerminalDataAction) *protocol.TerminalState {
	next := *s
	if tail := terminalGrow(terminalTail(s.Content), a.Data); tail != nil {
		next.Content = slices.Clone(s.Content)
		next.Content[len(next.Content)-1] = tail
	} else {
		next.Content = terminalAppendPart(s.Content, &protocol.TerminalUnclassifiedPart{Value: protocol.TextOf(a.Data)})
	}
	return &next
}

// terminalGrow returns a copy of p with data appended to its output, or
// nil when p takes no more output: it is nil, a finished command, or a
// part of a kind this package does not know.
func terminalGrow(p protocol.TerminalContentPart, data string) protocol.TerminalContentPart {
	switch p := p.(type) {
	case *protocol.TerminalUnclassifiedPart:
		return &protocol.TerminalUnclassifiedPart{Value: p.Value.Append(data)}
	case *protocol.TerminalCommandPart:
		if !p.IsComplete {
			cmd := *p
			cmd.Output = p.Output.Append(data)
			return &cmd
		}
	}
	return nil
}

// terminalTail returns the last part of content, or nil when it is empty.
func terminalTail(content []protocol.TerminalContentPart) protocol.TerminalContentPart {
	if len(content) == 0 {
		return nil
	}
	return content[len(content)-1]
}

// terminalAppendPart returns a new slice holding content followed by p. It
// never writes into content's backing array, which other states may share.
func terminalAppendPart(content []protocol.TerminalContentPart, p protocol.TerminalContentPart) []protocol.TerminalContentPart {
	return append(slices.Clip(content), p)
}

// terminalCommandExecuted opens a command part that collects the output of
// the following terminal/data actions, and records that the terminal
// reports command boundaries.
func terminalCommandExecuted(s *protocol.TerminalState, a *protocol.TerminalCommandExecutedAction) *protocol.TerminalState {
	next := *s
	next.Content = terminalAppendPart(s.Content, &protocol.TerminalCommandPart{
		CommandID:   a.CommandID,
		CommandLine: a.CommandLine,
		Timestamp:   a.Timestamp,
	})
	next.SupportsCommandDetection = protocol.Ptr(true)
	return &next
}

// terminalCommandFinished completes the command part with the action's
// commandId, setting its exit code and duration (absent values clear
// them). The state is unchanged when no part has that id.
func terminalCommandFinished(s *protocol.TerminalState, a *protocol.TerminalCommandFinishedAction) *protocol.TerminalState {
	var content []protocol.TerminalContentPart
	for i, p := range s.Content {
		cmd, ok := p.(*protocol.TerminalCommandPart)
		if !ok || cmd.CommandID != a.CommandID {
			continue
		}
		if content == nil {
			content = slices.Clone(s.Content)
		}
		done := *cmd
		done.IsComplete = true
		done.ExitCode, done.DurationMs = a.ExitCode, a.DurationMs
		content[i] = &done
	}
	if content == nil {
		return s
	}
	next := *s
	next.Content = content
	return &next
}

// TerminalOutput is the output a terminal state retains, as one text in
// the order it came: the unclassified runs and the commands' output.
func TerminalOutput(s *protocol.TerminalState) string {
	var b strings.Builder
	for _, p := range s.Content {
		switch p := p.(type) {
		case *protocol.TerminalUnclassifiedPart:
			b.WriteString(p.Value.String())
		case *protocol.TerminalCommandPart:
			b.WriteString(p.Output.String())
		}
	}
	return b.String()
}
