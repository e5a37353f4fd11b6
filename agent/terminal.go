package agent

import "context"

// TerminalHost is implemented by a Host that can run commands for the
// session in AHP terminals (a host with a workspace). Agents type-assert
// their Host to it; Terminals returns nil when none are offered.
type TerminalHost interface {
	Terminals() Terminals
}

// Terminals runs commands for an agent in AHP terminals claimed by its
// session, which every client sees live.
type Terminals interface {
	// StartCommand runs a command in a new terminal.
	StartCommand(ctx context.Context, cmd TerminalCommand) (Terminal, error)
}

// TerminalCommand is a command an agent asks to run.
type TerminalCommand struct {
	// Session and Chat claim the terminal.
	Session, Chat string
	// Command and Args are the program and its arguments (not a shell
	// line).
	Command string
	Args    []string
	// Cwd is an absolute path or file: URI; empty means the session's
	// first working directory. It must be inside the session's scope.
	Cwd string
	// Env is added to the environment (KEY=VALUE).
	Env []string
	// OutputLimit bounds the output kept for Output, in bytes (the start
	// is dropped first); zero means a default.
	OutputLimit int
	// Title names the terminal; empty means the command line.
	Title string
}

// Terminal is one running (or finished) command.
type Terminal interface {
	// URI is the terminal channel's URI.
	URI() string
	// Output returns the output so far, whether its start was dropped,
	// and the exit once the command has ended (nil while it runs).
	Output() (output string, truncated bool, exit *TerminalExit)
	// Wait blocks until the command ends or ctx does.
	Wait(ctx context.Context) (TerminalExit, error)
	// Kill ends the command; the terminal stays, with its output.
	Kill() error
	// Release kills the command if it still runs and disposes the
	// terminal.
	Release() error
}

// TerminalExit is how a command ended: its exit code, or the signal that
// killed it.
type TerminalExit struct {
	Code   *int
	Signal string
}
