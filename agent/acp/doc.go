// Package acp turns any agent that speaks the Agent Client Protocol (ACP)
// over stdio into an AHP agent backend: each AHP session becomes a shared
// session that every subscribed client sees and drives.
//
// Quick start:
//
//	cfg, err := acp.ParseFlag("gemini=gemini --acp")
//	if err != nil { ... }
//	b, err := acp.New(cfg, &acp.Options{Logger: log})
//	if err != nil { ... }
//	b.Probe(ctx) // learn the agent's name, version, models and modes
//	h, err := host.New(&host.Options{Agents: []agent.Backend{b}})
//
// # Processes
//
// Every AHP session gets its own agent process, started by Open in the
// session's working directory (see WorkingDirectory for the policy) in a
// process group of its own. The process serves all the chats of its
// session, one ACP session per chat. One process per session keeps
// sessions apart: a crash, a slow cancel or a flood of updates in one
// session does not touch another, and disposing a session ends its process
// group, children included. The cost is one process per session.
//
// The agent's stderr goes to the log, bounded and without terminal escape
// sequences. On dispose and shutdown the group
// gets SIGTERM, then SIGKILL after Options.KillTimeout. A process that
// exits on its own has crashed: the turns it was running end with
// chat/error quoting its exit status and last stderr lines, which also
// marks the chat (and so the session) as failed, and the next turn starts
// a new process, reloading the chat's ACP session when the agent supports
// session/load. After Options.MaxRestarts crashes within
// Options.RestartWindow, turns fail at once instead. A process whose ACP
// connection breaks while it runs (output that is not JSON-RPC, a message
// longer than the SDK reads, stdout closed, the process still running
// Options.ExitGrace later) is stopped and handled as a crash.
//
// # Mapping
//
// createSession maps to ACP session/new (cwd is the working directory);
// chat/turnStarted to session/prompt, with the message text and
// attachments as content blocks; chat/turnCancelled to session/cancel.
// The client's cancel ends the AHP turn at once; the chat's activity reads
// "Stopping the agent…" until the agent answers the prompt, updates that
// arrive meanwhile are dropped, and an agent that has not answered within
// the cancel timeout is restarted. The next prompt of the chat waits for
// the previous one to answer, so that no late update can land in it.
//
// session/update maps to chat actions: message chunks to markdown parts
// and chat/delta, thought chunks to reasoning parts and chat/reasoning,
// tool calls to the chat/toolCall* actions (see tools.go), usage to
// chat/usage, the title to session/titleChanged, modes and commands to the
// session's customizations. session/request_permission shows the tool call
// as waiting for confirmation; the first client to answer wins and the
// option it chose goes back to the agent. fs/read_text_file and
// fs/write_text_file are served inside the working directory; writes show
// as file edits on the turn. docs/agents.md lists what has no AHP
// counterpart.
//
// # Sign-in
//
// The probe's result is the agent's state (State): ready, needing sign-in,
// or failed, with the reason; Info carries it (the description, and the
// sign-in methods a client can use as protected resources, required while
// the agent needs sign-in). A key method takes a key with authenticate
// (Authenticate, agent.Authenticator): the agent is probed again with it
// and only a key it is ready with is kept, in Options.Credentials. A login
// method is a command the host runs in a terminal (LoginCommand,
// agent.Loginer); its end has the agent probed again (LoginEnded). Keys
// are masked in the agent's stderr lines. docs/agents.md maps ACP's auth
// methods onto these.
//
// # Back-pressure
//
// The SDK reads the agent's output on one goroutine and hands each
// notification to a second, which calls the bridge; the bridge maps it
// and calls Host.Dispatch, which only queues (to subscribers whose own
// queues are bounded). No call to the agent or the network is made on
// that path. Since the SDK closes the connection when more than 1024
// notifications wait, the reader between the pipe and the SDK holds back
// while 512 are outstanding (see flow.go; Options.FlowResync bounds the
// wait): the agent then waits on its stdout pipe.
package acp
