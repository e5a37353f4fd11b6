// Package echo is the host's built-in agent. It needs no model, no API key
// and no network: it answers every prompt by streaming it back word by
// word, and a prompt that starts with a command exercises the rest of the
// protocol:
//
//	/tool     a tool call that waits for confirmation, then runs
//	/input    asks the user a question and echoes the answer
//	/error    the turn fails
//	/flaky    the turn fails with a resumable error; chat/turnResume
//	          finishes it
//	/think    a reasoning block before the reply
//	/slow N   a reply of N words, about 50 ms apart
//
// It exists so that `ahpd` works out of the box and so that tests have an
// agent that behaves the same every time.
package echo

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/protocol"
)

// Provider is the provider id of the echo agent.
const Provider = "echo"

// Options configures the echo agent. The zero value is ready to use.
type Options struct {
	// WordDelay is the pause between streamed words. Zero means 10ms;
	// negative means no pause.
	WordDelay time.Duration
	// SlowDelay is the pause between words of /slow. Zero means 50ms.
	SlowDelay time.Duration
	// Now is the clock a turn's duration is measured with. Nil means
	// time.Now.
	Now func() time.Time
}

// Backend is the echo agent provider.
type Backend struct {
	opts Options
}

// New returns the echo agent.
func New(opts *Options) *Backend {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.WordDelay == 0 {
		o.WordDelay = 10 * time.Millisecond
	}
	if o.SlowDelay == 0 {
		o.SlowDelay = 50 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Backend{opts: o}
}

// Info describes the echo agent.
func (b *Backend) Info() protocol.AgentInfo {
	return protocol.AgentInfo{
		Provider:    Provider,
		DisplayName: "Echo",
		Description: "Built-in agent that streams your prompt back. Try /tool, /input, /error, /flaky, /think or /slow N.",
		Models:      []protocol.SessionModelInfo{{ID: "echo-1", Provider: Provider, Name: "Echo"}},
		// Every chat of a session gets its own echo.
		Capabilities: &protocol.AgentCapabilities{MultipleChats: &protocol.MultipleChatsCapability{}},
	}
}

// Open starts an echo session.
func (b *Backend) Open(_ context.Context, _ agent.OpenRequest, host agent.Host) (agent.Session, error) {
	ctx, cancel := context.WithCancel(context.Background())
	return &session{opts: b.opts, host: host, ctx: ctx, cancel: cancel, turns: map[string]*turn{}, resumable: map[string]resumable{}}, nil
}

// Close does nothing: sessions hold everything.
func (b *Backend) Close() error { return nil }

type session struct {
	opts   Options
	host   agent.Host
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	turns     map[string]*turn     // by chat URI
	resumable map[string]resumable // by chat URI: the turn /flaky stopped
}

// resumable is a turn stopped at a resumable error, and what to say when
// it resumes.
type resumable struct {
	turnID string
	text   string
}

// turn is one running turn and the answers it may wait for.
type turn struct {
	id      string
	chat    string
	cancel  context.CancelFunc
	confirm chan *protocol.ChatToolCallConfirmedAction
	input   chan *protocol.ChatInputCompletedAction
}

func (s *session) Handle(ev agent.Event) {
	switch a := ev.Action.(type) {
	case *protocol.ChatTurnStartedAction:
		s.start(ev.Channel, a.TurnID, a.Message.Text)
	case *protocol.ChatTurnResumeAction:
		s.mu.Lock()
		r, ok := s.resumable[ev.Channel]
		delete(s.resumable, ev.Channel)
		s.mu.Unlock()
		if ok && r.turnID == a.TurnID {
			s.start(ev.Channel, a.TurnID, resumeCommand+r.text)
		}
	case *protocol.ChatTurnCancelledAction:
		if t := s.turn(ev.Channel, a.TurnID); t != nil {
			t.cancel()
		}
	case *protocol.ChatToolCallConfirmedAction:
		if t := s.turn(ev.Channel, a.TurnID); t != nil {
			select {
			case t.confirm <- a:
			default:
			}
		}
	case *protocol.ChatInputCompletedAction:
		if t := s.turn(ev.Channel, ""); t != nil {
			select {
			case t.input <- a:
			default:
			}
		}
	}
}

func (s *session) turn(chat, id string) *turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.turns[chat]
	if t == nil || (id != "" && t.id != id) {
		return nil
	}
	return t
}

// resumeCommand marks the text of a resumed /flaky turn; it is never typed
// by a user (play only sees it from Handle).
const resumeCommand = "\x00resume "

func (s *session) start(chat, turnID, text string) {
	ctx, cancel := context.WithCancel(s.ctx)
	t := &turn{id: turnID, chat: chat, cancel: cancel,
		confirm: make(chan *protocol.ChatToolCallConfirmedAction, 1),
		input:   make(chan *protocol.ChatInputCompletedAction, 1)}
	s.mu.Lock()
	if old := s.turns[chat]; old != nil {
		old.cancel()
	}
	s.turns[chat] = t
	delete(s.resumable, chat)
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		r := &run{s: s, t: t, ctx: ctx, started: s.opts.Now(), resumed: strings.HasPrefix(text, resumeCommand)}
		r.play(text)
		s.mu.Lock()
		if s.turns[chat] == t {
			delete(s.turns, chat)
		}
		s.mu.Unlock()
	}()
}

func (s *session) Close() error {
	s.cancel()
	s.wg.Wait()
	return nil
}

// run plays one turn. Any failure to dispatch (the chat is gone, the turn
// was cancelled) ends it quietly.
type run struct {
	s       *session
	t       *turn
	ctx     context.Context
	started time.Time
	err     error
	parts   int
	resumed bool // part ids of a resumed turn must not clash with the first run's
}

func (r *run) emit(a protocol.StateAction) bool {
	if r.err != nil || r.ctx.Err() != nil {
		return false
	}
	r.err = r.s.host.Dispatch(r.t.chat, a)
	return r.err == nil
}

func (r *run) sleep(d time.Duration) bool {
	if d <= 0 {
		return r.ctx.Err() == nil
	}
	select {
	case <-time.After(d):
		return true
	case <-r.ctx.Done():
		return false
	}
}

func (r *run) partID(prefix string) string {
	r.parts++
	if r.resumed {
		prefix = "resumed-" + prefix
	}
	return fmt.Sprintf("%s-%d", prefix, r.parts)
}

func (r *run) duration() float64 {
	return float64(r.s.opts.Now().Sub(r.started).Milliseconds())
}

// play runs the turn for the prompt text.
func (r *run) play(text string) {
	if rest, ok := strings.CutPrefix(text, resumeCommand); ok {
		r.reply("Resumed: "+rest, r.s.opts.WordDelay)
		r.finish(rest)
		return
	}
	cmd, rest := splitCommand(text)
	switch cmd {
	case "/flaky":
		r.reply("Working on: "+rest, r.s.opts.WordDelay)
		if r.ctx.Err() != nil || r.err != nil {
			return
		}
		r.s.mu.Lock()
		r.s.resumable[r.t.chat] = resumable{turnID: r.t.id, text: rest}
		r.s.mu.Unlock()
		r.emit(&protocol.ChatErrorAction{TurnID: r.t.id, Duration: r.duration(),
			Part: &protocol.ErrorResponsePart{Resumable: protocol.Ptr(true), Error: protocol.ErrorInfo{
				ErrorType: "echoInterrupted", Message: "the echo agent stopped on purpose (/flaky); resume the turn to finish it"}}})
		return
	case "/error":
		r.emit(&protocol.ChatErrorAction{TurnID: r.t.id, Duration: r.duration(),
			Part: &protocol.ErrorResponsePart{Error: protocol.ErrorInfo{ErrorType: "echoError", Message: "the echo agent failed this turn on purpose (/error)"}}})
		return
	case "/think":
		r.think(rest)
		r.reply("You said: "+rest, r.s.opts.WordDelay)
	case "/slow":
		n, err := strconv.Atoi(strings.TrimSpace(rest))
		if err != nil || n < 0 {
			n = 20
		}
		words := make([]string, n)
		for i := range words {
			words[i] = "word" + strconv.Itoa(i+1)
		}
		r.reply(strings.Join(words, " "), r.s.opts.SlowDelay)
	case "/tool":
		r.tool(rest)
	case "/input":
		r.input(rest)
	default:
		r.reply("You said: "+text, r.s.opts.WordDelay)
	}
	r.finish(text)
}

// finish reports usage and completes the turn, unless it already ended.
func (r *run) finish(text string) {
	if r.ctx.Err() != nil || r.err != nil {
		return
	}
	words := int64(len(strings.Fields(text)))
	r.emit(&protocol.ChatUsageAction{TurnID: r.t.id, Usage: protocol.UsageInfo{
		InputTokens: &words, OutputTokens: protocol.Ptr(int64(r.parts * 8)), Model: protocol.Ptr("echo-1")}})
	r.emit(&protocol.ChatTurnCompleteAction{TurnID: r.t.id, Duration: r.duration()})
}

// splitCommand splits "/cmd rest" into its command and the rest.
func splitCommand(text string) (string, string) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		return "", text
	}
	cmd, rest, _ := strings.Cut(text, " ")
	switch cmd {
	case "/tool", "/input", "/error", "/flaky", "/think", "/slow":
		return cmd, strings.TrimSpace(rest)
	}
	return "", text
}

// reply streams text as a markdown part, one word per delta.
func (r *run) reply(text string, delay time.Duration) {
	id := r.partID("md")
	if !r.emit(&protocol.ChatResponsePartAction{TurnID: r.t.id, Part: &protocol.MarkdownResponsePart{ID: id}}) {
		return
	}
	for i, w := range strings.Fields(text) {
		if i > 0 {
			w = " " + w
		}
		if !r.sleep(delay) || !r.emit(&protocol.ChatDeltaAction{TurnID: r.t.id, PartID: id, Content: w}) {
			return
		}
	}
}

// think streams a short reasoning block.
func (r *run) think(about string) {
	id := r.partID("reasoning")
	if !r.emit(&protocol.ChatResponsePartAction{TurnID: r.t.id, Part: &protocol.ReasoningResponsePart{ID: id}}) {
		return
	}
	for i, w := range strings.Fields("Considering how best to repeat: " + about) {
		if i > 0 {
			w = " " + w
		}
		if !r.sleep(r.s.opts.WordDelay) || !r.emit(&protocol.ChatReasoningAction{TurnID: r.t.id, PartID: id, Content: w}) {
			return
		}
	}
}

// tool runs a tool call that needs the user's confirmation.
func (r *run) tool(args string) {
	id := r.partID("tool")
	if args == "" {
		args = "hello"
	}
	input := fmt.Sprintf(`{"text":%q}`, args)
	if !r.emit(&protocol.ChatToolCallStartAction{TurnID: r.t.id, ToolCallID: id, ToolName: "echo", DisplayName: "Echo tool"}) ||
		!r.emit(&protocol.ChatToolCallReadyAction{TurnID: r.t.id, ToolCallID: id,
			InvocationMessage: protocol.PlainText("Echo " + strconv.Quote(args)),
			ToolInput:         protocol.Ptr(protocol.InlineToolInput(input)),
			ConfirmationTitle: protocol.Ptr(protocol.PlainText("Run the echo tool?"))}) {
		return
	}
	var answer *protocol.ChatToolCallConfirmedAction
	select {
	case answer = <-r.t.confirm:
	case <-r.ctx.Done():
		return
	}
	if !answer.Approved {
		r.reply("The tool call was denied.", r.s.opts.WordDelay)
		return
	}
	if !r.sleep(r.s.opts.WordDelay) || !r.emit(&protocol.ChatToolCallCompleteAction{TurnID: r.t.id, ToolCallID: id,
		Result: protocol.ToolCallResult{
			Success:          true,
			PastTenseMessage: protocol.PlainText("Echoed " + strconv.Quote(args)),
			Content:          []protocol.ToolResultContent{&protocol.ToolResultTextContent{Text: args}},
		}}) {
		return
	}
	r.reply("The tool said: "+args, r.s.opts.WordDelay)
}

// input asks the user one question and echoes the answer.
func (r *run) input(question string) {
	if question == "" {
		question = "What should I echo?"
	}
	reqID := r.partID("input")
	if !r.emit(&protocol.ChatInputRequestedAction{Request: protocol.ChatInputRequest{
		ID:      reqID,
		Message: &question,
		Questions: []protocol.ChatInputQuestion{&protocol.ChatInputTextQuestion{
			ID: "answer", Message: question, Required: protocol.Ptr(true)}},
	}}) {
		return
	}
	var done *protocol.ChatInputCompletedAction
	for done == nil {
		select {
		case a := <-r.t.input:
			if a.RequestID == reqID {
				done = a
			}
		case <-r.ctx.Done():
			return
		}
	}
	if done.Response != protocol.ChatInputResponseKindAccept {
		r.reply("No answer ("+string(done.Response)+").", r.s.opts.WordDelay)
		return
	}
	r.reply("You answered: "+answerText(r.s.host.ChatState(r.t.chat), reqID, done), r.s.opts.WordDelay)
}

// answerText finds the text of the "answer" question, in the completing
// action or in the drafts kept on the request.
func answerText(chat *protocol.ChatState, reqID string, done *protocol.ChatInputCompletedAction) string {
	ans := done.Answers["answer"]
	if ans == nil && chat != nil {
		if t := chat.ActiveTurn; t != nil {
			for _, p := range t.ResponseParts {
				if ir, ok := p.(*protocol.InputRequestResponsePart); ok && ir.Request.ID == reqID {
					ans = ir.Request.Answers["answer"]
				}
			}
		}
	}
	if a, ok := ans.(*protocol.ChatInputAnswered); ok {
		switch v := a.Value.(type) {
		case *protocol.ChatInputTextAnswerValue:
			return v.Value
		case nil:
		default:
			b, _ := protocol.Marshal(v)
			return string(b)
		}
	}
	return "(nothing)"
}
