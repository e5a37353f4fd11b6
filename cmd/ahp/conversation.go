package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
)

type sendOptions struct {
	yes          bool
	model, agent string
}

func sendFlags(fs *flag.FlagSet) any {
	o := &sendOptions{}
	fs.BoolVar(&o.yes, "yes", false, "approve tool calls without asking")
	fs.StringVar(&o.model, "model", "", "model the messages ask for, by ID or name, among those the host offers")
	fs.StringVar(&o.agent, "agent", "", "agent (mode) the messages ask for, by name or URI, among those the host offers")
	return o
}

// selectFor reads what the host offers the session and applies the
// --model and --agent flags.
func (cv *conversation) selectFor(ctx context.Context, o *sendOptions) error {
	sel, err := cv.a.offers(ctx, cv.provider)
	if err != nil {
		return err
	}
	if err := sel.setModel(o.model); err != nil {
		return usagef("--model: %v", err)
	}
	if err := sel.setAgent(o.agent); err != nil {
		return usagef("--agent: %v", err)
	}
	cv.sel = sel
	return nil
}

// conversation follows a session's chat: it renders turns as they stream
// and answers what the agent asks.
type conversation struct {
	a    *app
	c    *client.Client
	chat *client.Subscription
	scr  *screen
	yes  bool
	// all renders every turn that starts from now on (chat); otherwise
	// only this client's (send).
	all bool

	views    map[string]*turnView
	before   map[string]bool      // turns that existed when we joined
	own      map[string]bool      // turns this client started
	queued   []string             // texts of messages this client queued
	started  map[string]time.Time // when each own turn was seen starting
	refused  bool                 // something the agent asked was refused
	provider string               // the session's agent provider
	sel      *selection           // the model and agent of this client's messages
	draft    *draftSync           // syncs the chat's draft while chat edits the input; nil otherwise
	tab      *tabCompleter        // completes on Tab while chat edits the input; nil otherwise
	// stdinUsed: stdin held the prompt, so it has nothing left to answer
	// with.
	stdinUsed bool
	frame     int
	lines     <-chan string
	// editor edits the line being typed, in chat on a terminal; nil
	// otherwise. asking is the question it answers instead, "" for none.
	editor *lineEditor
	mu     sync.Mutex
	asking string
}

// open subscribes to a session's chat.
func (a *app) open(ctx context.Context, uri string, yes, all bool) (*conversation, error) {
	sess, err := a.c.Subscribe(ctx, &protocol.SubscribeParams{Channel: uri})
	if err != nil {
		return nil, err
	}
	st, err := waitReady(ctx, sess)
	if err != nil {
		return nil, err
	}
	chat, err := a.c.Subscribe(ctx, &protocol.SubscribeParams{Channel: defaultChat(st)})
	if err != nil {
		return nil, err
	}
	cv := &conversation{a: a, c: a.c, chat: chat, scr: newScreen(a.env, a.g.json), yes: yes, all: all, provider: st.Provider,
		views: map[string]*turnView{}, before: map[string]bool{}, own: map[string]bool{}, started: map[string]time.Time{}}
	a.mu.Lock()
	a.scr = cv.scr
	a.mu.Unlock()
	cs := chat.Chat()
	for _, t := range cs.Turns {
		cv.before[t.ID] = true
	}
	if cs.ActiveTurn != nil && !all {
		cv.before[cs.ActiveTurn.ID] = true
	}
	return cv, nil
}

// readLines returns the lines of stdin. The reading goroutine ends at the
// end of input (or with the process: a read from a terminal cannot be
// interrupted).
func (a *app) readLines() <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(a.stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

func userText(text string) protocol.Message {
	return protocol.Message{Text: text, Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}}
}

// completionWait bounds a Tab's completions request.
const completionWait = 2 * time.Second

// message is a message of this client's: the text, the model and agent
// chosen, and the attachments of the completions taken with Tab.
func (cv *conversation) message(text string) protocol.Message {
	m := cv.sel.apply(userText(text))
	if cv.tab != nil {
		m.Attachments = append(m.Attachments, cv.tab.attachments(text)...)
	}
	return m
}

// start dispatches a new turn of this client's.
func (cv *conversation) start(ctx context.Context, text string) (*client.Receipt, string, error) {
	id := cv.a.newID()
	cv.own[id] = true
	cv.started[id] = cv.a.now()
	r, err := cv.chat.Dispatch(ctx, &protocol.ChatTurnStartedAction{TurnID: id, StartedAt: protocol.FormatTime(cv.a.now()), Message: cv.message(text)})
	return r, id, err
}

// view returns the view of a turn, making it when the turn is new.
func (cv *conversation) view(id string, msg protocol.Message) *turnView {
	if v := cv.views[id]; v != nil {
		return v
	}
	own := cv.own[id]
	if !own {
		for i, q := range cv.queued {
			if q == msg.Text {
				own = true
				cv.own[id] = true
				cv.queued = append(cv.queued[:i], cv.queued[i+1:]...)
				break
			}
		}
	}
	if _, ok := cv.started[id]; !ok {
		cv.started[id] = cv.a.now()
	}
	v := newTurnView(cv.a, cv.scr, id, own)
	cv.views[id] = v
	switch {
	case cv.a.g.json:
		v.event("start", map[string]any{"chat": cv.chat.Channel(), "own": own, "message": msg.Text})
	case !own:
		v.line("» " + strings.ReplaceAll(msg.Text, "\n", "\n  ") + "   (from another client)")
	}
	return v
}

// step renders the chat's current state and answers what the agent asks.
// It returns the errors of own turns that ended badly.
func (cv *conversation) step(ctx context.Context, st *protocol.ChatState) error {
	if st == nil {
		return nil
	}
	var failed error
	for i := range st.Turns {
		t := &st.Turns[i]
		if cv.before[t.ID] || (!cv.all && !cv.own[t.ID]) {
			continue
		}
		v := cv.view(t.ID, t.Message)
		if v.finished {
			continue
		}
		cv.scr.setStatus("")
		err := v.finish(t)
		if err != nil && cv.all && !cv.a.g.json {
			v.line("[" + err.Error() + "]") // the chat goes on
		}
		if err != nil && v.own {
			failed = err
		}
	}
	at := st.ActiveTurn
	if at == nil || cv.before[at.ID] || (!cv.all && !cv.own[at.ID]) {
		cv.scr.setStatus("")
		return failed
	}
	v := cv.view(at.ID, at.Message)
	for _, q := range v.update(at.ResponseParts, at.Usage) {
		if err := cv.answer(ctx, v, q); err != nil {
			return err
		}
	}
	cv.drawStatus()
	return failed
}

// drawStatus shows the status line of the running turn.
func (cv *conversation) drawStatus() {
	st := cv.chat.Chat()
	if st == nil || st.ActiveTurn == nil || cv.views[st.ActiveTurn.ID] == nil {
		cv.scr.setStatus("")
		return
	}
	at := st.ActiveTurn
	cv.scr.setStatus(statusText(cv.frame, cv.a.now().Sub(cv.started[at.ID]), at.Usage))
}

// errAnsweredElsewhere ends a question another client answered first.
var errAnsweredElsewhere = errors.New("answered by another client")

// ask asks the user a question and returns the answer line. While open
// reports the question still waits in the chat's state; once another
// client answers it, the question goes away and ask returns
// errAnsweredElsewhere, leaving the next line typed to be a message.
//
// On a terminal that chat edits, the question takes the input line's
// place, and what was being typed comes back after it; otherwise it is
// written on stderr.
func (cv *conversation) ask(ctx context.Context, prompt string, open func(*protocol.ChatState) bool) (string, error) {
	gone := make(chan struct{})
	var once sync.Once
	if open != nil {
		stop := client.WatchOf(cv.chat, func(cs *protocol.ChatState) {
			if !open(cs) {
				once.Do(func() { close(gone) })
			}
		})
		defer stop()
	}
	if cv.editor != nil {
		cv.mu.Lock()
		cv.asking = prompt
		cv.mu.Unlock()
		saved := cv.editor.swap("")
		defer func() {
			cv.mu.Lock()
			cv.asking = ""
			cv.mu.Unlock()
			cv.editor.swap(saved)
		}()
	} else {
		cv.scr.hold()
		defer cv.scr.release()
		io.WriteString(cv.a.stderr, prompt)
	}
	if cv.lines == nil {
		cv.lines = cv.a.readLines()
	}
	select {
	case line, ok := <-cv.lines:
		if !ok {
			if cv.editor == nil {
				io.WriteString(cv.a.stderr, "\n") // end the prompt's line
			}
			return "", io.EOF
		}
		return line, nil
	case <-gone:
		if cv.editor == nil {
			io.WriteString(cv.a.stderr, "\n")
		}
		cv.scr.note("(" + strings.TrimSpace(prompt) + " — answered by another client)")
		return "", errAnsweredElsewhere
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// toolOpen reports whether a tool call still waits for confirmation.
func toolOpen(turnID, toolCallID string) func(*protocol.ChatState) bool {
	return func(st *protocol.ChatState) bool {
		if st.ActiveTurn == nil || st.ActiveTurn.ID != turnID {
			return false
		}
		for _, p := range st.ActiveTurn.ResponseParts {
			if tp, ok := p.(*protocol.ToolCallResponsePart); ok {
				if t, ok := tp.ToolCall.(*protocol.ToolCallPendingConfirmationState); ok && t.ToolCallID == toolCallID {
					return true
				}
			}
		}
		return false
	}
}

// inputOpen reports whether an input request still waits for an answer.
func inputOpen(turnID, requestID string) func(*protocol.ChatState) bool {
	return func(st *protocol.ChatState) bool {
		if st.ActiveTurn == nil || st.ActiveTurn.ID != turnID {
			return false
		}
		for _, p := range st.ActiveTurn.ResponseParts {
			if ip, ok := p.(*protocol.InputRequestResponsePart); ok && ip.Request.ID == requestID {
				return ip.Response == nil
			}
		}
		return false
	}
}

// interactive reports whether the user can be asked.
func (cv *conversation) interactive() bool { return cv.a.stdinTTY }

// answer handles one question of the agent's.
func (cv *conversation) answer(ctx context.Context, v *turnView, q question) error {
	if !v.own {
		if !cv.a.g.json {
			v.line("[waiting for the other client to answer]")
		}
		return nil
	}
	switch {
	case q.tool != nil:
		t := q.tool
		title := t.DisplayName
		if t.ConfirmationTitle != nil {
			title = t.ConfirmationTitle.String()
		}
		approve := false
		switch {
		case cv.yes:
			approve = true
		case cv.interactive():
			line, err := cv.ask(ctx, fmt.Sprintf("%s %s [y/N] ", title, t.InvocationMessage.String()), toolOpen(q.turnID, t.ToolCallID))
			if errors.Is(err, errAnsweredElsewhere) {
				return nil
			}
			if err != nil && err != io.EOF {
				return err
			}
			approve = yes(line)
		default:
			cv.refused = true
			fmt.Fprintf(cv.a.stderr, "ahp: the tool call %q needs confirmation and stdin is not a terminal: denied (pass --yes to approve tool calls)\n", t.DisplayName)
		}
		a := &protocol.ChatToolCallConfirmedAction{TurnID: q.turnID, ToolCallID: t.ToolCallID, Approved: approve}
		if !approve {
			a.Reason = protocol.Ptr(protocol.ChatToolCallConfirmedActionReasonDenied)
		}
		_, err := cv.chat.Dispatch(ctx, a)
		return err
	case q.input != nil:
		// Input is read from stdin whether it is a terminal or a pipe,
		// unless stdin held the prompt: a script answers with its lines.
		req := q.input
		done := &protocol.ChatInputCompletedAction{RequestID: req.ID, Response: protocol.ChatInputResponseKindDecline}
		what := "input"
		if req.Message != nil {
			what = fmt.Sprintf("%q", *req.Message)
		}
		switch err := cv.askInput(ctx, q.turnID, req, done); {
		case errors.Is(err, errAnsweredElsewhere):
			return nil
		case cv.stdinUsed || errors.Is(err, io.EOF):
			cv.refused = true
			why := "stdin has no more lines to answer with"
			if cv.stdinUsed {
				why = "stdin held the prompt, leaving nothing to answer with"
			}
			fmt.Fprintf(cv.a.stderr, "ahp: the agent asks for %s and %s: declined\n", what, why)
		case err != nil:
			return err
		}
		_, err := cv.chat.Dispatch(ctx, done)
		return err
	}
	return nil
}

// askInput asks each question of an input request and fills done. It
// returns io.EOF, leaving the request declined, when input ends first.
func (cv *conversation) askInput(ctx context.Context, turnID string, req *protocol.ChatInputRequest, done *protocol.ChatInputCompletedAction) error {
	if cv.stdinUsed {
		return nil
	}
	open := inputOpen(turnID, req.ID)
	if len(req.Questions) == 0 {
		msg := "The agent asks you to continue."
		if req.Message != nil {
			msg = *req.Message
		}
		line, err := cv.ask(ctx, msg+" [Y/n] ", open)
		if err != nil {
			return err
		}
		if strings.TrimSpace(line) == "" || yes(line) {
			done.Response = protocol.ChatInputResponseKindAccept
		}
		return nil
	}
	answers := map[string]protocol.ChatInputAnswer{}
	for _, q := range req.Questions {
		for tries := 0; ; tries++ {
			line, err := cv.ask(ctx, questionPrompt(q), open)
			if err != nil {
				return err // io.EOF: declined
			}
			value, err := answerText(q, line)
			if err == nil {
				answers[questionID(q)] = &protocol.ChatInputAnswered{AnswerState: protocol.ChatInputAnsweredStateSubmitted, Value: value}
				break
			}
			cv.scr.note(err.Error())
			if tries == 2 {
				return nil // declined
			}
		}
	}
	done.Response = protocol.ChatInputResponseKindAccept
	done.Answers = answers
	return nil
}

// errSessionGone explains a chat subscription that ended.
func errSessionGone(err error) error {
	if errors.Is(err, client.ErrChannelGone) {
		return fmt.Errorf("the session no longer exists on the host (was it removed, or did the host restart?): %w", err)
	}
	return err
}

// changes returns a channel that receives after every change of the chat.
func (cv *conversation) changes() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	stop := cv.chat.Watch(func(protocol.SnapshotState) {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	return ch, stop
}

// runSend sends one prompt and streams the reply.
func runSend(ctx context.Context, a *app, pos []string, flags any) error {
	o := flags.(*sendOptions)
	var prompt string
	fromStdin := false
	switch {
	case len(pos) == 2 && pos[1] != "-":
		prompt = pos[1]
	case a.stdinTTY:
		return usagef("no prompt: give it as an argument, or pipe it in")
	default:
		fromStdin = true
		b, err := io.ReadAll(a.stdin)
		if err != nil {
			return err
		}
		prompt = strings.TrimSpace(string(b))
	}
	if strings.TrimSpace(prompt) == "" {
		return usagef("the prompt is empty")
	}
	if _, err := a.connect(ctx); err != nil {
		return err
	}
	uri, err := a.resolveSession(ctx, pos[0])
	if err != nil {
		return err
	}
	cv, err := a.open(ctx, uri, o.yes, false)
	if err != nil {
		return err
	}
	cv.stdinUsed = fromStdin
	if err := cv.selectFor(ctx, o); err != nil {
		return err
	}
	changed, stop := cv.changes()
	defer stop()
	r, id, err := cv.start(ctx, prompt)
	if err != nil {
		return err
	}
	tick := time.NewTicker(a.tick)
	defer tick.Stop()
	accepted := r.Done()
	interrupted := false
	for {
		st := cv.chat.Chat()
		err := cv.step(ctx, st)
		if v := cv.views[id]; v != nil && v.finished {
			cv.scr.setStatus("")
			switch {
			case interrupted:
				return errInterrupted
			case err != nil:
				return err
			case cv.refused:
				return &turnError{"the agent asked for something that was refused (see above)"}
			}
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-changed:
		case <-tick.C:
			cv.frame++
			cv.drawStatus()
		case <-accepted:
			if err := r.Err(); err != nil {
				cv.scr.setStatus("")
				return err
			}
			accepted = nil
		case <-cv.chat.Done():
			cv.scr.setStatus("")
			return errSessionGone(cv.chat.Err())
		case <-a.interrupts:
			if interrupted {
				cv.scr.setStatus("")
				return errInterrupted
			}
			interrupted = true
			cv.chat.Dispatch(ctx, &protocol.ChatTurnCancelledAction{TurnID: id})
		case <-ctx.Done():
			cv.scr.setStatus("")
			return ctx.Err()
		}
	}
}

// runChat holds an interactive conversation: each line of input is a
// prompt; turns other clients start show up too.
func runChat(ctx context.Context, a *app, pos []string, flags any) error {
	o := flags.(*sendOptions)
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	uri, err := a.resolveSession(ctx, pos[0])
	if err != nil {
		return err
	}
	cv, err := a.open(ctx, uri, o.yes, true)
	if err != nil {
		return err
	}
	if err := cv.selectFor(ctx, o); err != nil {
		return err
	}
	if a.stdoutTTY || a.g.json {
		// Piped output keeps to the replies of this run.
		cv.history(historyTurns)
	}
	if !a.g.json {
		fmt.Fprintf(a.stderr, "Chatting in session %s. Type a message and press Enter; /cancel stops the running turn, /model and /agent choose what the next messages ask for, /quit or Ctrl-D leaves.\n", sessionID(uri))
	}
	changed, stop := cv.changes()
	defer stop()
	if a.stdinTTY && a.cbreak != nil && !a.g.json {
		if restore, err := a.cbreak(); err == nil {
			defer restore()
			cv.lines = cv.editLines(ctx)
			defer cv.draft.stop()
			defer func() {
				// Leave the terminal with the transcript ended and no
				// input line under it.
				cv.scr.endEdit(false)
				cv.scr.endLine()
			}()
		}
	}
	if cv.lines == nil {
		cv.lines = a.readLines()
	}
	tick := time.NewTicker(a.tick)
	defer tick.Stop()
	eof := false
	for {
		st := cv.chat.Chat()
		if err := cv.step(ctx, st); err != nil && !isTurnError(err) {
			return err
		}
		cv.followDraft(st)
		busy := st.ActiveTurn != nil && cv.own[st.ActiveTurn.ID] || len(cv.queued) > 0
		if eof && !busy {
			return nil
		}
		lines := cv.lines
		if eof {
			lines = nil
		}
		select {
		case <-changed:
		case <-tick.C:
			cv.frame++
			cv.drawStatus()
		case line, ok := <-lines:
			if !ok {
				eof = true
				continue
			}
			done, err := cv.input(ctx, c, strings.TrimSpace(line))
			if done || err != nil {
				cv.scr.setStatus("")
				return err
			}
		case <-cv.chat.Done():
			cv.scr.setStatus("")
			return errSessionGone(cv.chat.Err())
		case <-a.interrupts:
			if st.ActiveTurn != nil && cv.own[st.ActiveTurn.ID] {
				cv.chat.Dispatch(ctx, &protocol.ChatTurnCancelledAction{TurnID: st.ActiveTurn.ID})
				continue
			}
			cv.scr.setStatus("")
			return nil
		case <-ctx.Done():
			cv.scr.setStatus("")
			return ctx.Err()
		}
	}
}

// historyTurns is how many of the chat's last turns chat shows on joining.
const historyTurns = 5

// history shows the chat's last n completed turns, each with the model it
// ran with (on a terminal, and with --json).
func (cv *conversation) history(n int) {
	st := cv.chat.Chat()
	if st == nil {
		return
	}
	turns := st.Turns[max(0, len(st.Turns)-n):]
	md := cv.a.markdown()
	for i := range turns {
		t := &turns[i]
		model := turnModel(t)
		if cv.a.g.json {
			cv.a.printJSON(map[string]any{"type": "history", "turnId": t.ID, "message": t.Message.Text,
				"model": model, "state": t.State, "text": replyOf(t.ResponseParts)})
			continue
		}
		head := "» " + strings.ReplaceAll(t.Message.Text, "\n", "\n  ")
		if model != "" {
			head += "   (" + model + ")"
		}
		cv.scr.line(head)
		if reply := replyOf(t.ResponseParts); reply != "" {
			cv.scr.line(strings.TrimRight(md(reply), "\n"))
		}
		if t.State == protocol.TurnStateError || t.State == protocol.TurnStateCancelled {
			cv.scr.line("[" + string(t.State) + "]")
		}
	}
}

// turnModel names the model a turn ran with: the one its usage reports,
// else the one its message asked for.
func turnModel(t *protocol.Turn) string {
	switch {
	case t.Usage != nil && t.Usage.Model != nil && *t.Usage.Model != "":
		return *t.Usage.Model
	case t.Message.Model != nil:
		return t.Message.Model.ID
	}
	return ""
}

// sentDraft clears the draft once its text went out as a message.
func (cv *conversation) sentDraft() {
	if cv.draft != nil {
		cv.draft.sent()
	}
}

// editLines reads the terminal key by key: the line being typed starts
// from the chat's draft, is echoed on stderr, and is synced to the chat's
// draft when typing pauses; each line entered is returned, and clears the
// draft once it is sent. The reading goroutine ends at the end of input
// (or with the process).
func (cv *conversation) editLines(ctx context.Context) <-chan string {
	seed := ""
	if st := cv.chat.Chat(); st != nil && st.Draft != nil {
		seed = st.Draft.Text
	}
	cv.draft = newDraftSync(seed, cv.a.draftDelay, func(text string) {
		a := &protocol.ChatDraftChangedAction{}
		if text != "" {
			m := cv.sel.apply(userText(text))
			a.Draft = &m
		}
		if _, err := cv.chat.Dispatch(ctx, a); err != nil && ctx.Err() == nil {
			cv.scr.note("ahp: the draft was not saved: " + errorMessage(err))
		}
	})
	cv.tab = &tabCompleter{
		ask: func(text string, offset int64) ([]protocol.CompletionItem, error) {
			ctx, cancel := context.WithTimeout(ctx, completionWait)
			defer cancel()
			res, err := cv.c.Completions(ctx, &protocol.CompletionsParams{Channel: cv.chat.Channel(), Kind: protocol.CompletionItemKindUserMessage, Text: text, Offset: offset})
			if err != nil {
				return nil, err
			}
			return res.Items, nil
		},
		note: func(s string) { cv.scr.note(s) },
	}
	ed := &lineEditor{echo: cv.echoInput, edit: func(text string) {
		cv.mu.Lock()
		asking := cv.asking != ""
		cv.mu.Unlock()
		if !asking { // an answer is no draft
			cv.draft.typed(text)
		}
	}, complete: cv.tab.complete}
	cv.editor = ed
	ed.seed(seed)
	if seed != "" {
		cv.scr.note("(The chat's draft is on the input line: edit it, Enter sends it, Ctrl-U clears it.)")
	}
	ch := make(chan string)
	go func() {
		defer close(ch)
		buf := make([]byte, 256)
		for {
			n, err := cv.a.stdin.Read(buf)
			lines, eof := ed.feed(buf[:n])
			for _, l := range lines {
				ch <- l
			}
			if eof || err != nil {
				return
			}
		}
	}()
	return ch
}

// echoInput shows the line being typed on the input line ("\n": it was
// entered, and stays on the screen above a fresh input line).
func (cv *conversation) echoInput(line string) {
	cv.mu.Lock()
	prompt := cv.asking
	cv.mu.Unlock()
	if prompt == "" {
		prompt = "> "
	}
	if line == "\n" {
		cv.scr.endEdit(true)
		cv.scr.edit(prompt, "")
		return
	}
	cv.scr.edit(prompt, line)
}

// followDraft shows the chat's draft on the input line when another
// client changed it and nothing was typed here since.
func (cv *conversation) followDraft(st *protocol.ChatState) {
	if cv.draft == nil || cv.editor == nil {
		return
	}
	cv.mu.Lock()
	asking := cv.asking != ""
	cv.mu.Unlock()
	if asking {
		return
	}
	remote := ""
	if st.Draft != nil {
		remote = st.Draft.Text
	}
	if cv.draft.follow(remote, cv.editor.text()) {
		cv.editor.swap(remote)
	}
}

func isTurnError(err error) bool {
	var te *turnError
	return errors.As(err, &te)
}

// input handles one line typed in a chat; it reports true to leave.
func (cv *conversation) input(ctx context.Context, c *client.Client, line string) (bool, error) {
	st := cv.chat.Chat()
	if cv.sel.command(noteWriter{cv.scr}, line) { // /model, /agent
		return false, nil
	}
	switch line {
	case "":
		return false, nil
	case "/quit", "/exit":
		return true, nil
	case "/cancel":
		if st.ActiveTurn != nil {
			_, err := cv.chat.Dispatch(ctx, &protocol.ChatTurnCancelledAction{TurnID: st.ActiveTurn.ID})
			return false, err
		}
		cv.scr.note("no turn is running")
		return false, nil
	}
	if st.ActiveTurn != nil {
		// A turn runs: queue the message; the host starts it next.
		cv.queued = append(cv.queued, line)
		_, err := cv.chat.Dispatch(ctx, &protocol.ChatPendingMessageSetAction{Kind: protocol.PendingMessageKindQueued, ID: cv.a.newID(), Message: cv.message(line)})
		cv.sentDraft()
		if err == nil && !cv.a.g.json {
			cv.scr.note("(queued until the running turn ends)")
		}
		return false, err
	}
	r, _, err := cv.start(ctx, line)
	if err != nil {
		return false, err
	}
	cv.sentDraft()
	go func() {
		// Another client may have started a turn first: say so.
		if err := r.Wait(ctx); err != nil && ctx.Err() == nil {
			cv.scr.note(fmt.Sprintf("ahp: not sent: %v", err))
		}
	}()
	return false, nil
}
