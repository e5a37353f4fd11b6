// Package modelserver is a scripted model server for tests: it speaks
// enough of the Anthropic Messages API, the OpenAI Responses API and the
// Gemini generateContent API for real agents (Claude Code, Codex, Gemini
// CLI) to run turns against it on 127.0.0.1, with no network and no key.
//
// Quick start:
//
//	s := modelserver.Start(t)
//	s.Handle("write a file", modelserver.Scenario{
//		modelserver.Call("Write", map[string]any{"file_path": p, "content": "hi\n"}),
//		modelserver.Text("Done."),
//	})
//	// point the agent at s.URL() and prompt it with "please write a file"
//
// # Scenarios
//
// A scenario is a list of steps. The server picks the scenario from the
// conversation it is sent: the latest user message holding a registered
// trigger (a substring; the one found last in it, then the longest)
// chooses it, and the number of tool results that
// follow that message chooses the step. A request is thus answered from
// what it carries, not from the order requests arrive in, so retries and
// requests the agent makes on the side do not shift the script. A
// conversation that names no trigger gets the default scenario (one text
// step, "OK."). Past its last step a scenario answers with its last step
// again, unless that is a tool call, in which case it answers "Done.".
//
// A request that asks for JSON output with a schema (a title, a router's
// choice) is answered from the schema and does not take a step.
//
// Steps: Text streams text in small deltas; Call asks for a tool call;
// Fail answers an HTTP error in the API's own error shape; Stall starts
// the response and then sends nothing until the client gives up or the
// server closes, and drops the connection then; Disconnect sends part of a text and then drops the
// connection.
//
// Every request is recorded (Requests); keys are not.
package modelserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Kind is what a step does.
type Kind int

// Step kinds.
const (
	KindText Kind = iota
	KindCall
	KindFail
	KindStall
	KindDisconnect
)

// Step is one answer of a scenario.
type Step struct {
	Kind Kind
	// Text is the text of KindText and the partial text of KindDisconnect;
	// for KindFail, the error message.
	Text string
	// Tool is the tool KindCall asks for; Args its arguments (marshalled to
	// JSON). For a tool the request declares as free-form (the OpenAI
	// Responses API's custom tools, such as Codex's apply_patch), Input is
	// sent instead.
	Tool  string
	Args  map[string]any
	Input string
	// Status is the HTTP status of KindFail.
	Status int
}

// Text returns a step that streams text.
func Text(s string) Step { return Step{Kind: KindText, Text: s} }

// Call returns a step that asks for a call of the named tool.
func Call(tool string, args map[string]any) Step {
	return Step{Kind: KindCall, Tool: tool, Args: args}
}

// CallInput returns a step that calls a free-form tool with input, or,
// when the API or the request declares the tool with parameters, with
// {"input": input}.
func CallInput(tool, input string) Step { return Step{Kind: KindCall, Tool: tool, Input: input} }

// Fail returns a step answering an HTTP error.
func Fail(status int, message string) Step {
	return Step{Kind: KindFail, Status: status, Text: message}
}

// Stall returns a step that starts a response and then never sends.
func Stall() Step { return Step{Kind: KindStall} }

// Disconnect returns a step that streams partial and drops the connection.
func Disconnect(partial string) Step { return Step{Kind: KindDisconnect, Text: partial} }

// Scenario is a list of steps (see the package doc).
type Scenario []Step

// API names the API shape of a request.
type API string

// The APIs served.
const (
	Anthropic API = "anthropic"
	OpenAI    API = "openai"
	Gemini    API = "gemini"
)

// Request is a request the server received.
type Request struct {
	API    API
	Method string
	// Path is the URL path with its query.
	Path string
	// Body is the request body as sent.
	Body []byte
	// Scenario is the trigger of the scenario that answered ("" for the
	// default); Step the step's index, -1 for a request answered from its
	// JSON schema or not answered from a scenario.
	Scenario string
	Step     int
	// Stream reports whether the answer was streamed.
	Stream bool
}

// Server is a scripted model server. Its methods are safe for concurrent
// use.
type Server struct {
	srv *httptest.Server

	mu        sync.Mutex
	scenarios []trigger // in registration order
	requests  []Request
	stop      chan struct{} // closed by Close: stalled answers end
	stopOnce  sync.Once
}

type trigger struct {
	text string
	sc   Scenario
}

// Start starts a server on 127.0.0.1 that closes when the test ends.
func Start(tb testing.TB) *Server {
	s := New()
	tb.Cleanup(s.Close)
	return s
}

// New starts a server on 127.0.0.1; Close stops it.
func New() *Server {
	s := &Server{stop: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	return s
}

// URL is the server's base URL, http://127.0.0.1:PORT, without a path.
func (s *Server) URL() string { return s.srv.URL }

// Close ends stalled answers and stops the server.
func (s *Server) Close() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Handle registers the scenario chosen by conversations whose latest user
// message containing a trigger contains this one. A trigger registered
// again replaces its scenario.
func (s *Server) Handle(trigger string, sc Scenario) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.scenarios {
		if s.scenarios[i].text == trigger {
			s.scenarios[i].sc = sc
			return
		}
	}
	s.scenarios = append(s.scenarios, triggerOf(trigger, sc))
}

func triggerOf(text string, sc Scenario) trigger { return trigger{text: text, sc: slices.Clone(sc)} }

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Answered returns the requests that a step of the scenario with this
// trigger answered.
func (s *Server) Answered(trigger string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Scenario == trigger && r.Step >= 0 {
			out = append(out, r)
		}
	}
	return out
}

// maxBody bounds a request body.
const maxBody = 32 << 20

// conversation is what the server reads from a request, whatever its API.
type conversation struct {
	stream bool
	model  string
	// messages are the user turns: each is the user text and the number of
	// tool results that follow it before the next user text.
	users []userTurn
	// schema is the JSON schema the request asks the output to follow.
	schema map[string]any
	// freeform names the tools declared without parameters (OpenAI custom
	// tools).
	freeform map[string]bool
}

type userTurn struct {
	text    string
	results int
}

// choose returns the scenario's trigger and step for a conversation.
func (s *Server) choose(c *conversation) (string, Step, int) {
	s.mu.Lock()
	scs := slices.Clone(s.scenarios)
	s.mu.Unlock()
	for i := len(c.users) - 1; i >= 0; i-- {
		u := c.users[i]
		// The trigger found last in the message wins (agents merge user
		// messages the model never answered into one), then the longest,
		// so that "write" and "write twice" can both be registered.
		best, bestAt := -1, -1
		for j, tr := range scs {
			at := strings.LastIndex(u.text, tr.text)
			if at < 0 {
				continue
			}
			if best < 0 || at > bestAt || at == bestAt && len(tr.text) > len(scs[best].text) {
				best, bestAt = j, at
			}
		}
		if best < 0 {
			continue
		}
		// Results of the tool calls after this message, and of the turns
		// after it that named no trigger (system reminders, context).
		n := 0
		for _, v := range c.users[i:] {
			n += v.results
		}
		sc := scs[best].sc
		if len(sc) == 0 {
			return scs[best].text, Text("OK."), 0
		}
		if n < len(sc) {
			return scs[best].text, sc[n], n
		}
		last := sc[len(sc)-1]
		if last.Kind == KindCall {
			return scs[best].text, Text("Done."), n
		}
		return scs[best].text, last, n
	}
	return "", Text("OK."), 0
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	rec := Request{Method: r.Method, Path: r.URL.RequestURI(), Body: body, Step: -1}
	record := func() {
		s.mu.Lock()
		s.requests = append(s.requests, rec)
		s.mu.Unlock()
	}
	if err != nil {
		record()
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	path := r.URL.Path
	var a api
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages/count_tokens"):
		rec.API = Anthropic
		record()
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": len(body) / 4})
		return
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages"):
		a = anthropicAPI{}
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		a = openAIAPI{}
	case r.Method == http.MethodPost && strings.Contains(path, "/models/") && strings.HasSuffix(path, ":countTokens"):
		rec.API = Gemini
		record()
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": len(body) / 4})
		return
	case r.Method == http.MethodPost && strings.Contains(path, "/models/") &&
		(strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":streamGenerateContent")):
		a = geminiAPI{stream: strings.HasSuffix(path, ":streamGenerateContent")}
	default:
		record()
		http.NotFound(w, r)
		return
	}
	rec.API = a.name()
	c, err := a.parse(body)
	if err != nil {
		record()
		a.fail(w, http.StatusBadRequest, "scripted model server: "+err.Error())
		return
	}
	rec.Stream = c.stream
	if c.schema != nil {
		record()
		a.reply(w, c, Text(string(fromSchema(c.schema))), s.done(r))
		return
	}
	trig, step, n := s.choose(c)
	rec.Scenario, rec.Step = trig, n
	record()
	switch step.Kind {
	case KindFail:
		a.fail(w, step.Status, step.Text)
		return
	case KindCall:
		if c.freeform[step.Tool] && step.Input == "" && step.Args != nil {
			b, _ := json.Marshal(step.Args)
			step.Input = string(b)
		}
		if !c.freeform[step.Tool] && step.Input != "" && step.Args == nil {
			step.Args = map[string]any{"input": step.Input}
		}
	}
	a.reply(w, c, step, s.done(r))
}

// done returns a channel closed when the request's client leaves or the
// server closes.
func (s *Server) done(r *http.Request) <-chan struct{} {
	ch := make(chan struct{})
	go func() { // ends with the request
		select {
		case <-s.stop:
		case <-r.Context().Done():
		}
		close(ch)
	}()
	return ch
}

// api is one API shape.
type api interface {
	name() API
	parse(body []byte) (*conversation, error)
	// reply answers with a text, call, stall or disconnect step; a stall
	// lasts until done is closed.
	reply(w http.ResponseWriter, c *conversation, step Step, done <-chan struct{})
	fail(w http.ResponseWriter, status int, msg string)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	s := &sse{w: w, f: f}
	s.flush()
	return s
}

func (s *sse) flush() {
	if s.f != nil {
		s.f.Flush()
	}
}

// event writes one event; name "" writes data only.
func (s *sse) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err) // the server builds every value itself
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	s.flush()
}

// disconnect drops the connection without ending the response.
func disconnect() { panic(http.ErrAbortHandler) }

// chunks splits text into deltas of a few words.
func chunks(text string) []string {
	var out []string
	for len(text) > 0 {
		n := 12
		if n > len(text) {
			n = len(text)
		}
		// Do not split a UTF-8 sequence.
		for n < len(text) && !utf8Start(text[n]) {
			n++
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

var idMu sync.Mutex
var idN int

// newID returns a unique id with a prefix.
func newID(prefix string) string {
	idMu.Lock()
	defer idMu.Unlock()
	idN++
	return fmt.Sprintf("%s%d%d", prefix, time.Now().UnixNano()%1e6, idN)
}

// fromSchema returns a JSON value that follows a JSON schema: objects
// with their properties, the first of an enum, a constant, placeholder
// strings and zero numbers.
func fromSchema(schema map[string]any) []byte {
	b, err := json.Marshal(valueOf(schema, "value", 0))
	if err != nil {
		return []byte("{}")
	}
	return b
}

func valueOf(schema map[string]any, name string, depth int) any {
	if depth > 8 {
		return nil
	}
	if v, ok := schema["const"]; ok {
		return v
	}
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := schema[k].([]any); ok && len(alts) > 0 {
			if m, ok := alts[0].(map[string]any); ok {
				return valueOf(m, name, depth+1)
			}
		}
	}
	typ, _ := schema["type"].(string)
	if ts, ok := schema["type"].([]any); ok && len(ts) > 0 {
		typ, _ = ts[0].(string)
	}
	switch strings.ToLower(typ) {
	case "object", "":
		props, _ := schema["properties"].(map[string]any)
		if typ == "" && props == nil {
			return "Scripted " + name
		}
		out := map[string]any{}
		for k, v := range props {
			if m, ok := v.(map[string]any); ok {
				out[k] = valueOf(m, k, depth+1)
			}
		}
		return out
	case "array":
		if items, ok := schema["items"].(map[string]any); ok {
			return []any{valueOf(items, name, depth+1)}
		}
		return []any{}
	case "string":
		return "Scripted " + name
	case "integer", "number":
		return 0
	case "boolean":
		return false
	case "null":
		return nil
	}
	return nil
}

// decode parses a JSON body into v.
func decode(body []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	return nil
}

// textOf concatenates the text found in a decoded JSON value.
func textOf(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte('\n')
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if t, ok := x["text"].(string); ok {
				b.WriteString(t)
				b.WriteByte('\n')
			}
			if c, ok := x["content"]; ok {
				walk(c)
			}
		}
	}
	walk(v)
	return b.String()
}
