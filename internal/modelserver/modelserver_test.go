package modelserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// event is one server-sent event.
type event struct {
	name string
	data map[string]any
}

// post sends a JSON body and returns the status, the events of an SSE
// answer (or the JSON body as one event) and the read error, if any.
func post(t *testing.T, ctx context.Context, url string, body any) (int, []event, error) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			return resp.StatusCode, nil, err
		}
		return resp.StatusCode, []event{{data: m}}, nil
	}
	var evs []event
	sc := bufio.NewScanner(resp.Body)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("event data %q: %v", line, err)
			}
			evs = append(evs, event{name, m})
			name = ""
		}
	}
	return resp.StatusCode, evs, sc.Err()
}

// names returns the events' names, or their data's type when unnamed.
func names(evs []event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.name)
	}
	return out
}

// field follows a path of keys and indexes into a decoded JSON value.
func field(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// Requests of each API: a user prompt, then the same with one tool call
// and its result.
func anthropicReq(prompt string, results int, stream bool) map[string]any {
	msgs := []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": prompt}}}}
	for i := range results {
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t", "name": "Write", "input": map[string]any{}}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t", "content": "ok"}}})
		_ = i
	}
	return map[string]any{"model": "claude-test", "stream": stream, "max_tokens": 100, "messages": msgs}
}

func openAIReq(prompt string, results int, stream bool) map[string]any {
	in := []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": prompt}}}}
	for range results {
		in = append(in,
			map[string]any{"type": "function_call", "call_id": "c", "name": "shell", "arguments": "{}"},
			map[string]any{"type": "function_call_output", "call_id": "c", "output": "ok"})
	}
	return map[string]any{"model": "gpt-test", "stream": stream, "input": in,
		"tools": []any{map[string]any{"type": "function", "name": "shell"}, map[string]any{"type": "custom", "name": "apply_patch"}}}
}

func geminiReq(prompt string, results int) map[string]any {
	contents := []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": prompt}}}}
	for range results {
		contents = append(contents,
			map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"name": "x", "args": map[string]any{}}}}},
			map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "x", "response": map[string]any{}}}}})
	}
	return map[string]any{"contents": contents}
}

func TestAnthropicStreams(t *testing.T) {
	s := Start(t)
	s.Handle("write it", Scenario{Call("Write", map[string]any{"file_path": "/tmp/x", "content": "hi"}), Text("All written down, friend.")})
	url := s.URL() + "/v1/messages?beta=true"

	// The prompt: a tool call, its input streamed as JSON deltas.
	st, evs, err := post(t, t.Context(), url, anthropicReq("please write it", 0, true))
	if err != nil || st != 200 {
		t.Fatalf("status %d, %v", st, err)
	}
	want := []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if diff := cmp.Diff(want, slices.Compact(names(evs))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := field(evs[2].data, "content_block", "name"); got != "Write" {
		t.Errorf("tool %v", got)
	}
	var args strings.Builder
	for _, e := range evs {
		if e.name == "content_block_delta" {
			args.WriteString(field(e.data, "delta", "partial_json").(string))
		}
	}
	if args.String() != `{"content":"hi","file_path":"/tmp/x"}` {
		t.Errorf("arguments %s", args.String())
	}
	if got := field(evs[len(evs)-2].data, "delta", "stop_reason"); got != "tool_use" {
		t.Errorf("stop reason %v", got)
	}

	// The tool result: the final text, in deltas.
	_, evs, _ = post(t, t.Context(), url, anthropicReq("please write it", 1, true))
	var text strings.Builder
	for _, e := range evs {
		if e.name == "content_block_delta" {
			text.WriteString(field(e.data, "delta", "text").(string))
		}
	}
	if text.String() != "All written down, friend." {
		t.Errorf("text %q", text.String())
	}
	if got := field(evs[len(evs)-2].data, "delta", "stop_reason"); got != "end_turn" {
		t.Errorf("stop reason %v", got)
	}

	// Not streamed.
	_, evs, _ = post(t, t.Context(), url, anthropicReq("please write it", 1, false))
	if got := field(evs[0].data, "content", 0, "text"); got != "All written down, friend." {
		t.Errorf("message %v", evs[0].data)
	}

	// Recorded.
	reqs := s.Answered("write it")
	if len(reqs) != 3 || reqs[0].Step != 0 || reqs[1].Step != 1 || reqs[0].API != Anthropic || !reqs[0].Stream || reqs[2].Stream {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestOpenAIStreams(t *testing.T) {
	s := Start(t)
	s.Handle("run it", Scenario{Call("shell", map[string]any{"command": []string{"echo", "hi"}}), CallInput("apply_patch", "*** Begin Patch\n*** End Patch"), Text("Ran it.")})
	url := s.URL() + "/v1/responses"

	_, evs, err := post(t, t.Context(), url, openAIReq("run it now", 0, true))
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.name != "response.completed" || field(last.data, "response", "usage", "total_tokens") != 15.0 {
		t.Errorf("last event %+v", last)
	}
	done := evs[len(evs)-2]
	if done.name != "response.output_item.done" || field(done.data, "item", "type") != "function_call" ||
		field(done.data, "item", "arguments") != `{"command":["echo","hi"]}` {
		t.Errorf("item %+v", done)
	}
	if evs[2].name != "response.output_item.added" || evs[3].name != "response.function_call_arguments.delta" {
		t.Errorf("events %v", names(evs))
	}
	for i, e := range evs {
		if field(e.data, "sequence_number") != float64(i) {
			t.Errorf("event %d numbered %v", i, field(e.data, "sequence_number"))
		}
	}

	// The second step calls a custom tool with free-form input.
	_, evs, _ = post(t, t.Context(), url, openAIReq("run it now", 1, true))
	done = evs[len(evs)-2]
	if field(done.data, "item", "type") != "custom_tool_call" || field(done.data, "item", "input") != "*** Begin Patch\n*** End Patch" {
		t.Errorf("item %+v", done.data)
	}

	_, evs, _ = post(t, t.Context(), url, openAIReq("run it now", 2, true))
	var text strings.Builder
	for _, e := range evs {
		if e.name == "response.output_text.delta" {
			text.WriteString(field(e.data, "delta").(string))
		}
	}
	if text.String() != "Ran it." {
		t.Errorf("text %q in %v", text.String(), names(evs))
	}

	// Past the end of the script, a scenario ending on text repeats it.
	_, evs, _ = post(t, t.Context(), url, openAIReq("run it now", 3, false))
	if got := field(evs[0].data, "output", 0, "content", 0, "text"); got != "Ran it." {
		t.Errorf("not streamed: %v", evs[0].data)
	}
}

func TestGeminiStreams(t *testing.T) {
	s := Start(t)
	s.Handle("edit it", Scenario{Call("replace", map[string]any{"file_path": "/tmp/x", "old_string": "a", "new_string": "b"}), Text("Edited the file as asked.")})
	base := s.URL() + "/v1beta/models/gemini-test"

	_, evs, err := post(t, t.Context(), base+":streamGenerateContent?alt=sse", geminiReq("edit it", 0))
	if err != nil || len(evs) != 1 {
		t.Fatalf("%v %+v", err, evs)
	}
	if got := field(evs[0].data, "candidates", 0, "content", "parts", 0, "functionCall", "name"); got != "replace" {
		t.Errorf("call %v", evs[0].data)
	}
	_, evs, _ = post(t, t.Context(), base+":streamGenerateContent?alt=sse", geminiReq("edit it", 1))
	var text strings.Builder
	for i, e := range evs {
		text.WriteString(field(e.data, "candidates", 0, "content", "parts", 0, "text").(string))
		if fin := field(e.data, "candidates", 0, "finishReason"); (fin == "STOP") != (i == len(evs)-1) {
			t.Errorf("chunk %d finish %v", i, fin)
		}
	}
	if len(evs) < 2 || text.String() != "Edited the file as asked." {
		t.Errorf("text %q in %d chunks", text.String(), len(evs))
	}
	_, evs, _ = post(t, t.Context(), base+":generateContent", geminiReq("edit it", 1))
	if got := field(evs[0].data, "candidates", 0, "content", "parts", 0, "text"); got != "Edited the file as asked." {
		t.Errorf("not streamed: %v", evs[0].data)
	}
}

// TestSchemaRequests: a request for JSON output is answered from its
// schema, whatever the API, and takes no step of the scenario.
func TestSchemaRequests(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"title": map[string]any{"type": "string"}, "model_choice": map[string]any{"type": "string", "enum": []any{"flash", "pro"}},
		"n": map[string]any{"type": "integer"}, "tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	}}
	want := map[string]any{"title": "Scripted title", "model_choice": "flash", "n": 0.0, "tags": []any{"Scripted tags"}}
	s := Start(t)
	s.Handle("go", Scenario{Text("first"), Text("second")})

	a := anthropicReq("go", 0, false)
	a["output_format"] = map[string]any{"type": "json_schema", "schema": schema}
	o := openAIReq("go", 0, true)
	o["text"] = map[string]any{"format": map[string]any{"type": "json_schema", "name": "x", "schema": schema}}
	g := geminiReq("go", 0)
	g["generationConfig"] = map[string]any{"responseMimeType": "application/json", "responseJsonSchema": schema}
	for _, tc := range []struct {
		name, path string
		body       map[string]any
		text       func([]event) string
	}{
		{"anthropic", "/v1/messages", a, func(evs []event) string { return field(evs[0].data, "content", 0, "text").(string) }},
		{"openai", "/v1/responses", o, func(evs []event) string {
			return field(evs[len(evs)-1].data, "response", "output", 0, "content", 0, "text").(string)
		}},
		{"gemini", "/v1beta/models/m:generateContent", g, func(evs []event) string {
			return field(evs[0].data, "candidates", 0, "content", "parts", 0, "text").(string)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, evs, err := post(t, t.Context(), s.URL()+tc.path, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(tc.text(evs)), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if n := len(s.Answered("go")); n != 0 {
		t.Errorf("%d schema requests took a step", n)
	}
}

// TestFailures: a 401 in each API's error shape, a stall that lasts until
// the client gives up, a stream cut in the middle.
func TestFailures(t *testing.T) {
	s := Start(t)
	s.Handle("deny", Scenario{Fail(401, "invalid x-api-key")})
	s.Handle("hang", Scenario{Stall()})
	s.Handle("cut", Scenario{Disconnect("Half a sentence and")})
	apis := []struct {
		name, path string
		req        func(string) map[string]any
		message    []any
	}{
		{"anthropic", "/v1/messages", func(p string) map[string]any { return anthropicReq(p, 0, true) }, []any{"error", "message"}},
		{"openai", "/v1/responses", func(p string) map[string]any { return openAIReq(p, 0, true) }, []any{"error", "message"}},
		{"gemini", "/v1beta/models/m:streamGenerateContent?alt=sse", func(p string) map[string]any { return geminiReq(p, 0) }, []any{"error", "message"}},
	}
	for _, a := range apis {
		t.Run(a.name+"/401", func(t *testing.T) {
			st, evs, err := post(t, t.Context(), s.URL()+a.path, a.req("deny"))
			if err != nil || st != 401 || field(evs[0].data, a.message...) != "invalid x-api-key" {
				t.Errorf("status %d %v %+v", st, err, evs)
			}
		})
		t.Run(a.name+"/stall", func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(100*time.Millisecond, cancel)
			_, evs, err := post(t, ctx, s.URL()+a.path, a.req("hang"))
			if !errors.Is(err, context.Canceled) || len(evs) != 0 {
				t.Errorf("stall ended with %v after %d events", err, len(evs))
			}
		})
		t.Run(a.name+"/disconnect", func(t *testing.T) {
			_, evs, err := post(t, t.Context(), s.URL()+a.path, a.req("cut"))
			if !errors.Is(err, io.ErrUnexpectedEOF) || len(evs) == 0 {
				t.Errorf("disconnect ended with %v after %d events", err, len(evs))
			}
		})
	}
}

// TestStallEndsOnClose: Close ends a stalled answer.
func TestStallEndsOnClose(t *testing.T) {
	s := New()
	s.Handle("hang", Scenario{Stall()})
	errc := make(chan error, 1)
	go func() {
		_, _, err := post(t, context.Background(), s.URL()+"/v1/messages", anthropicReq("hang", 0, true))
		errc <- err
	}()
	for len(s.Requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	s.Close()
	if err := <-errc; err == nil {
		t.Error("the stalled answer ended cleanly")
	}
}

// TestChoice: the latest user message naming a trigger chooses the
// scenario; within it the trigger found last, then the longest, wins; tool results after later messages
// count; no trigger means the default.
func TestChoice(t *testing.T) {
	s := New()
	defer s.Close()
	s.Handle("write", Scenario{Text("w0"), Text("w1")})
	s.Handle("write twice", Scenario{Text("t0"), Text("t1"), Text("t2")})
	for _, tc := range []struct {
		users []userTurn
		trig  string
		text  string
	}{
		{[]userTurn{{text: "write"}}, "write", "w0"},
		{[]userTurn{{text: "write twice please"}}, "write twice", "t0"},
		{[]userTurn{{text: "write twice"}, {text: "write", results: 1}}, "write", "w1"},
		{[]userTurn{{text: "write", results: 1}, {text: "<reminder>", results: 1}}, "write", "w1"},
		{[]userTurn{{text: "write twice", results: 5}}, "write twice", "t2"},
		{[]userTurn{{text: "write twice\nthen write"}}, "write", "w0"},
		{[]userTurn{{text: "hello"}}, "", "OK."},
		{nil, "", "OK."},
	} {
		trig, step, _ := s.choose(&conversation{users: tc.users})
		if trig != tc.trig || step.Text != tc.text {
			t.Errorf("%+v: chose %q %q, want %q %q", tc.users, trig, step.Text, tc.trig, tc.text)
		}
	}
}

func TestUnknownPath(t *testing.T) {
	s := Start(t)
	resp, err := http.Get(s.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || len(s.Requests()) != 1 || s.Requests()[0].Path != "/v1/models" {
		t.Errorf("status %d, recorded %+v", resp.StatusCode, s.Requests())
	}
}
