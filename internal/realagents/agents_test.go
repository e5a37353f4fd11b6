package realagents_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/internal/modelserver"
	"github.com/ahp-go/ahp/internal/procexists"
	"github.com/ahp-go/ahp/internal/realagents"
	"github.com/ahp-go/ahp/protocol"
)

// agentCase is how one agent is driven: the session configuration whose
// tool calls ask the client for permission, and the model's tool calls
// that write, edit and run.
type agentCase struct {
	agent  realagents.Agent
	manual map[string]string
	write  func(path, content string) modelserver.Step
	edit   func(path, old, new string) modelserver.Step
	shell  func(cmd string) modelserver.Step
}

var claude = agentCase{
	agent:  realagents.Claude,
	manual: map[string]string{"mode": "default"},
	write: func(path, content string) modelserver.Step {
		return modelserver.Call("Write", map[string]any{"file_path": path, "content": content})
	},
	edit: func(path, old, new string) modelserver.Step {
		return modelserver.Call("Edit", map[string]any{"file_path": path, "old_string": old, "new_string": new})
	},
	shell: func(cmd string) modelserver.Step {
		return modelserver.Call("Bash", map[string]any{"command": cmd, "description": "Run a command"})
	},
}

func TestClaude(t *testing.T) { t.Parallel(); runScenarios(t, claude) }

// runScenarios runs every scenario on one agent, each in a session of
// its own, asserting what the second (watching) client saw.
func runScenarios(t *testing.T, ac agentCase) {
	r := newRig(t, ac.agent, nil)
	t.Cleanup(func() {
		// The host stops the probe's process and the sessions' own: none
		// of that is the agent breaking its connection.
		if strings.Contains(r.logBuf.String(), "the agent broke its ACP connection") {
			t.Error("the log blames the agent for a connection the host closed")
		}
	})

	// With its key the agent is ready: no sign-in asked.
	if st, why := r.b.State(); st != acp.StateReady {
		t.Errorf("state %s (%s), want ready", st, why)
	}

	t.Run("text", func(t *testing.T) {
		c := r.sub(t).newChat(nil)
		const reply = "Hello from the scripted model, streamed in pieces."
		r.model.Handle("say hello", modelserver.Scenario{modelserver.Text(reply)})
		turn := c.send("please say hello")
		if end := c.end(turn); end.Type() != "chat/turnComplete" {
			t.Fatalf("turn ended with %+v", end)
		}
		if _, n := c.deltas(turn); n < 2 {
			t.Errorf("the watcher saw %d deltas, want the reply streamed", n)
		}
		// Claude Code and Codex add notices of their own about gateways
		// and models.
		if got := markdown(c.turn(turn).ResponseParts); !strings.Contains(got, reply) {
			t.Errorf("the watcher's turn reads %q", got)
		}
	})

	t.Run("model", func(t *testing.T) {
		// The agent's models are listed, however it offers them, and a
		// message's model selection switches the session's model.
		models := r.b.Info().Models
		if len(models) < 2 {
			t.Fatalf("the agent lists models %+v", models)
		}
		c := r.sub(t).newChat(nil)
		cur := c.wss.Session().Config.Values["model"]
		var pick string
		for _, m := range models {
			if strconv.Quote(m.ID) != string(cur) {
				pick = m.ID
				break
			}
		}
		r.model.Handle("which model", modelserver.Scenario{modelserver.Text("This one.")})
		msg := hosttest.UserMessage("which model are you")
		msg.Model = &protocol.ModelSelection{ID: pick}
		turn := c.sendMessage(msg)
		if end := c.end(turn); end.Type() != "chat/turnComplete" {
			t.Fatalf("turn ended with %+v", end)
		}
		// Codex lists a model per reasoning effort ("m[low]") and reports
		// the model and the effort apart.
		want := strconv.Quote(strings.SplitN(pick, "[", 2)[0])
		deadline := time.Now().Add(wait)
		for string(c.wss.Session().Config.Values["model"]) != want {
			if time.Now().After(deadline) {
				t.Fatalf("the watcher's session model is %s, want %s (was %s)", c.wss.Session().Config.Values["model"], want, cur)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})

	t.Run("write and edit allowed", func(t *testing.T) {
		c := r.sub(t).newChat(ac.manual)
		path := filepath.Join(c.dir, "new.txt")
		r.model.Handle("create new.txt", modelserver.Scenario{ac.write(path, "first line\n"), modelserver.Text("Created new.txt.")})
		turn := c.send("please create new.txt")
		c.answer(c.permission(turn), true)
		if end := c.end(turn); end.Type() != "chat/turnComplete" {
			t.Fatalf("turn ended with %+v", end)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != "first line\n" {
			js, _ := json.Marshal(c.turn(turn))
			t.Fatalf("new.txt: %q, %v; the watcher's turn: %.3000s", b, err, js)
		}
		c.toolDone(turn, "completed")

		r.model.Handle("edit new.txt", modelserver.Scenario{ac.edit(path, "first", "edited"), modelserver.Text("Edited new.txt.")})
		turn = c.send("now edit new.txt")
		c.answer(c.permission(turn), true)
		if end := c.end(turn); end.Type() != "chat/turnComplete" {
			t.Fatalf("turn ended with %+v", end)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != "edited line\n" {
			t.Fatalf("new.txt after the edit: %q, %v", b, err)
		}
		c.toolDone(turn, "completed")
	})

	t.Run("write denied", func(t *testing.T) {
		c := r.sub(t).newChat(ac.manual)
		path := filepath.Join(c.dir, "denied.txt")
		r.model.Handle("create denied.txt", modelserver.Scenario{ac.write(path, "nope\n"), modelserver.Text("I did not write it.")})
		turn := c.send("please create denied.txt")
		c.answer(c.permission(turn), false)
		end := c.end(turn)
		if end.Type() == "chat/error" {
			t.Fatalf("turn failed: %+v", end)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("denied.txt exists (%v)", err)
		}
		c.toolDone(turn, "cancelled", "failed", "rejected")
	})

	t.Run("shell", func(t *testing.T) {
		c := r.sub(t).newChat(ac.manual)
		r.model.Handle("run the command", modelserver.Scenario{ac.shell("echo from-the-shell > shell.txt"), modelserver.Text("Ran it.")})
		turn := c.send("please run the command")
		c.answer(c.permission(turn), true)
		if end := c.end(turn); end.Type() != "chat/turnComplete" {
			t.Fatalf("turn ended with %+v", end)
		}
		if b, err := os.ReadFile(filepath.Join(c.dir, "shell.txt")); err != nil || string(b) != "from-the-shell\n" {
			t.Fatalf("shell.txt: %q, %v", b, err)
		}
		c.toolDone(turn, "completed")
	})

	t.Run("cancel", func(t *testing.T) {
		c := r.sub(t).newChat(nil)
		r.model.Handle("take your time", modelserver.Scenario{modelserver.Stall()})
		turn := c.send("please take your time")
		r.waitModel(t, "take your time")
		c.cancel(turn)
		if end := c.end(turn); end.Type() != "chat/turnCancelled" {
			t.Fatalf("turn ended with %+v", end)
		}
		// The chat still works.
		r.model.Handle("after the cancel", modelserver.Scenario{modelserver.Text("Still here.")})
		turn = c.send("after the cancel, say something")
		if end := c.end(turn); end.Type() != "chat/turnComplete" {
			t.Fatalf("the turn after the cancel ended with %+v", end)
		}
	})

	t.Run("401", func(t *testing.T) {
		c := r.sub(t).newChat(nil)
		r.model.Handle("unauthorized", modelserver.Scenario{modelserver.Fail(401, "invalid x-api-key")})
		turn := c.send("unauthorized request")
		end := c.end(turn)
		e, ok := end.(*protocol.ChatErrorAction)
		if !ok {
			t.Fatalf("turn ended with %+v", end)
		}
		if msg := errorText(e); !regexp.MustCompile(`(?i)401|api key|auth|x-api-key`).MatchString(msg) {
			t.Errorf("the watcher's error does not say why: %q", msg)
		}
	})

	t.Run("stall", func(t *testing.T) {
		c := r.sub(t).newChat(nil)
		r.model.Handle("stall forever", modelserver.Scenario{modelserver.Stall()})
		turn := c.send("stall forever please")
		c.waitSeen("the chat saying the agent is quiet", func(envs []protocol.ActionEnvelope) bool {
			for _, e := range envs {
				if a, ok := e.Action.(*protocol.ChatActivityChangedAction); ok && a.Activity != nil && strings.Contains(*a.Activity, "No output") {
					return true
				}
			}
			return false
		})
		c.cancel(turn)
		if end := c.end(turn); end.Type() != "chat/turnCancelled" {
			t.Fatalf("turn ended with %+v", end)
		}
	})

	t.Run("dispose", func(t *testing.T) {
		// Disposing a session stops its agent within the kill timeout,
		// whether or not the agent exits when its stdin closes (Codex
		// does not).
		c := r.sub(t).newChat(nil)
		r.model.Handle("before dispose", modelserver.Scenario{modelserver.Text("Fine.")})
		if end := c.end(c.send("before dispose")); end.Type() != "chat/turnComplete" {
			t.Fatalf("turn ended with %+v", end)
		}
		pid := r.agentPID(t, c.session)
		start := time.Now()
		if err := r.a.DisposeSession(t.Context(), &protocol.DisposeSessionParams{Channel: c.session}); err != nil {
			t.Fatal(err)
		}
		for procexists.Exists(pid) {
			if time.Since(start) > killTimeout+5*time.Second {
				t.Fatalf("the agent (pid %d) still runs %v after its session was disposed", pid, time.Since(start))
			}
			time.Sleep(50 * time.Millisecond)
		}
	})

	t.Run("killed", func(t *testing.T) {
		c := r.sub(t).newChat(nil)
		r.model.Handle("about to die", modelserver.Scenario{modelserver.Stall()})
		turn := c.send("about to die")
		r.waitModel(t, "about to die")
		pid := r.agentPID(t, c.session)
		if err := killProcessGroup(pid); err != nil {
			t.Fatal(err)
		}
		end := c.end(turn)
		e, ok := end.(*protocol.ChatErrorAction)
		if !ok {
			t.Fatalf("turn ended with %+v", end)
		}
		if msg := errorText(e); !strings.Contains(msg, "killed") && !strings.Contains(msg, "exit") {
			t.Errorf("the watcher's error does not say the agent died: %q", msg)
		}
		// The next turn starts a new process.
		r.model.Handle("back again", modelserver.Scenario{modelserver.Text("Back.")})
		turn = c.send("back again?")
		if end := c.end(turn); end.Type() != "chat/turnComplete" {
			t.Fatalf("the turn after the crash ended with %+v", end)
		}
	})
}

// sub returns the rig for a subtest: failures and the end of waits are
// the subtest's.
func (r *rig) sub(t *testing.T) *rig {
	s := *r
	s.t = t
	s.ctx = t.Context()
	return &s
}

// waitModel waits until the model server has received a request of the
// scenario.
func (r *rig) waitModel(t *testing.T, trigger string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for len(r.model.Answered(trigger)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the agent never asked the model about %q", trigger)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var startedRE = regexp.MustCompile(`msg="agent started" agent=\S+ session=(\S+) pid=(\d+)`)

// agentPID returns the pid of the session's agent process, from the log.
func (r *rig) agentPID(t *testing.T, session string) int {
	t.Helper()
	pid := 0
	for _, m := range startedRE.FindAllStringSubmatch(r.logBuf.String(), -1) {
		if m[1] == session {
			pid, _ = strconv.Atoi(m[2])
		}
	}
	if pid == 0 {
		t.Fatalf("no agent process logged for %s", session)
	}
	return pid
}

// cancel has the watcher cancel a turn.
func (c *chat) cancel(turn string) {
	c.r.t.Helper()
	ctx, cancel := context.WithTimeout(c.r.ctx, wait)
	defer cancel()
	if _, err := c.w.Dispatch(ctx, &protocol.ChatTurnCancelledAction{TurnID: turn}); err != nil {
		c.r.t.Fatal(err)
	}
}

// toolDone checks that the watcher's turn has a tool call in one of the
// states.
func (c *chat) toolDone(turn string, states ...string) {
	c.r.t.Helper()
	if testing.Verbose() {
		js, _ := json.Marshal(c.turn(turn))
		c.r.t.Logf("the watcher's turn: %s", js)
	}
	tcs := toolCalls(c.turn(turn).ResponseParts)
	var got []string
	for _, tc := range tcs {
		got = append(got, tc.Status())
		for _, s := range states {
			if tc.Status() == s {
				return
			}
		}
	}
	c.r.t.Errorf("the watcher's turn has tool calls %v, want one %v", got, states)
}

// errorText is the message of a chat/error.
func errorText(e *protocol.ChatErrorAction) string {
	if e.Part != nil {
		return e.Part.Error.Message
	}
	if e.Error != nil {
		return e.Error.Message
	}
	return ""
}

var codex = agentCase{
	agent: realagents.Codex,
	// Read-only asks the client before a patch is applied; the default
	// mode asks a model to review instead.
	manual: map[string]string{"mode": "read-only"},
	write: func(path, content string) modelserver.Step {
		return codexPatch("*** Add File: " + path + "\n+" + strings.TrimSuffix(content, "\n"))
	},
	edit: func(path, old, new string) modelserver.Step {
		return codexPatch("*** Update File: " + path + "\n@@\n-" + old + " line\n+" + new + " line")
	},
	shell: func(cmd string) modelserver.Step {
		return modelserver.Call("exec_command", map[string]any{"cmd": cmd, "sandbox_permissions": "require_escalated",
			"justification": "Run a command outside the sandbox"})
	},
}

// codexPatch is an apply_patch command, which Codex applies itself.
func codexPatch(body string) modelserver.Step {
	return modelserver.Call("exec_command", map[string]any{"cmd": "apply_patch <<'EOF'\n*** Begin Patch\n" + body + "\n*** End Patch\nEOF\n"})
}

func TestCodex(t *testing.T) { t.Parallel(); runScenarios(t, codex) }

var gemini = agentCase{
	agent:  realagents.Gemini,
	manual: map[string]string{"mode": "default"},
	write: func(path, content string) modelserver.Step {
		return modelserver.Call("write_file", map[string]any{"file_path": path, "content": content})
	},
	edit: func(path, old, new string) modelserver.Step {
		return modelserver.Call("replace", map[string]any{"file_path": path, "old_string": old, "new_string": new, "instruction": "Edit the file"})
	},
	shell: func(cmd string) modelserver.Step {
		return modelserver.Call("run_shell_command", map[string]any{"command": cmd, "description": "Run a command"})
	},
}

func TestGemini(t *testing.T) { t.Parallel(); runScenarios(t, gemini) }
