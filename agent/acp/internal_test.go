package acp

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/protocol"
)

func TestSplitCommandLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{"node agent.js", []string{"node", "agent.js"}, false},
		{"  gemini   --acp ", []string{"gemini", "--acp"}, false},
		{`a 'b c' "d \"e\"" f\ g ''`, []string{"a", "b c", `d "e"`, "f g", ""}, false},
		{`a 'b`, nil, true},
		{`a \`, nil, true},
		{"", nil, false},
	} {
		got, err := splitCommandLine(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestParseFlagAndValidate(t *testing.T) {
	c, err := ParseFlag("example=node /x/dist/examples/agent.js")
	if err != nil || c.Name != "example" || c.Command != "node" || !slices.Equal(c.Args, []string{"/x/dist/examples/agent.js"}) {
		t.Fatalf("%+v %v", c, err)
	}
	for _, bad := range []Config{
		{Name: "", Command: "x"},
		{Name: "a b", Command: "x"},
		{Name: "a"},
		{Name: "a", Command: "x", Env: map[string]string{"A=B": "c"}},
		{Name: "a", Command: "x", WorkingDirectory: WorkingDirectory{Policy: "sometimes"}},
		{Name: "a", Command: "x", WorkingDirectory: WorkingDirectory{Policy: PolicyFixed}},
		{Name: "a", Command: "x", WorkingDirectory: WorkingDirectory{Directory: "relative/dir"}},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	var d Duration
	if err := json.Unmarshal([]byte(`"1m30s"`), &d); err != nil || time.Duration(d) != 90*time.Second {
		t.Errorf("duration %v %v", d, err)
	}
	if json.Unmarshal([]byte(`90`), &d) == nil {
		t.Error("a number was accepted as a duration")
	}
}

func TestEnviron(t *testing.T) {
	c := Config{Env: map[string]string{"API_KEY": "${SECRET}", "HOME": "/h", "PLAIN": "x$"}}
	env := c.environ([]string{"HOME=/root", "SECRET=s3", "PATH=/bin"})
	slices.Sort(env)
	want := []string{"API_KEY=s3", "HOME=/h", "PATH=/bin", "PLAIN=x$", "SECRET=s3"}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("environ (-want +got):\n%s", diff)
	}
}

func TestLineRange(t *testing.T) {
	text := "1\n2\n3\n4\n"
	p := func(n int) *int { return &n }
	for _, tc := range []struct {
		line, limit *int
		want        string
	}{
		{nil, nil, text},
		{p(2), nil, "2\n3\n4\n"},
		{p(2), p(2), "2\n3\n"},
		{nil, p(1), "1\n"},
		{p(9), nil, ""},
	} {
		if got := lineRange(text, tc.line, tc.limit); got != tc.want {
			t.Errorf("line %v limit %v: %q, want %q", tc.line, tc.limit, got, tc.want)
		}
	}
}

func TestLineDiff(t *testing.T) {
	for _, tc := range []struct {
		old, new       string
		added, removed int
	}{
		{"", "a\nb\n", 2, 0},
		{"a\nb\n", "a\nb\n", 0, 0},
		{"a\nb\nc\n", "a\nB\nc\nd\n", 2, 1},
		{"a\n", "", 0, 1},
	} {
		a, r := lineDiff(tc.old, tc.new)
		if a != tc.added || r != tc.removed {
			t.Errorf("%q -> %q: +%d -%d, want +%d -%d", tc.old, tc.new, a, r, tc.added, tc.removed)
		}
	}
}

func TestChooseOption(t *testing.T) {
	opts := []acpsdk.PermissionOption{
		{OptionId: "always", Kind: acpsdk.PermissionOptionKindAllowAlways},
		{OptionId: "once", Kind: acpsdk.PermissionOptionKindAllowOnce},
		{OptionId: "no", Kind: acpsdk.PermissionOptionKindRejectOnce},
	}
	pick := func(approved bool, selected string) string {
		a := &protocol.ChatToolCallConfirmedAction{Approved: approved}
		if selected != "" {
			a.SelectedOptionID = &selected
		}
		o := chooseOption(opts, a)
		if o.Cancelled != nil {
			return "cancelled"
		}
		return string(o.Selected.OptionId)
	}
	for _, tc := range []struct {
		approved bool
		selected string
		want     string
	}{
		{true, "", "once"},
		{true, "always", "always"},
		{true, "no", "once"}, // a deny option cannot approve
		{false, "", "no"},
		{false, "always", "no"},
	} {
		if got := pick(tc.approved, tc.selected); got != tc.want {
			t.Errorf("approved %v selected %q: %s, want %s", tc.approved, tc.selected, got, tc.want)
		}
	}
	if o := chooseOption(opts[:2], &protocol.ChatToolCallConfirmedAction{}); o.Cancelled == nil {
		t.Error("a denial without a reject option must answer cancelled")
	}
}

// TestUpdateKind decodes updates with the SDK and checks that kinds it
// does not know are told apart from the variant it falls back to.
func TestUpdateKind(t *testing.T) {
	for _, tc := range []struct {
		json string
		kind string
		ok   bool
	}{
		{`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}`, kindMessageChunk, true},
		{`{"sessionUpdate":"session_info_update","title":"t"}`, kindSessionInfo, true},
		{`{"sessionUpdate":"future_thing","content":{"type":"text","text":"no"}}`, "future_thing", false},
		{`{"sessionUpdate":"other_future_thing","value":1}`, "other_future_thing", false},
	} {
		var u acpsdk.SessionUpdate
		if err := json.Unmarshal([]byte(tc.json), &u); err != nil {
			t.Fatalf("%s: %v", tc.json, err)
		}
		kind, ok := updateKind(&u)
		if kind != tc.kind || ok != tc.ok {
			t.Errorf("%s: %q %v, want %q %v", tc.json, kind, ok, tc.kind, tc.ok)
		}
	}
}

func TestPromptBlocks(t *testing.T) {
	text := base64.StdEncoding.EncodeToString([]byte("hello"))
	msg := protocol.Message{Text: "look", Attachments: []protocol.MessageAttachment{
		&protocol.SimpleMessageAttachment{Label: "sel", ModelRepresentation: protocol.Ptr("selected code")},
		// A completed slash command: the text holds it, no block is added.
		&protocol.SimpleMessageAttachment{Label: "/review", Meta: map[string]jsontext.Value{agent.CommandMetaKey: jsontext.Value(`"review"`)}},
		&protocol.MessageResourceAttachment{Label: "main.go", URI: "file:///w/main.go", ContentType: protocol.Ptr("text/x-go")},
		&protocol.MessageEmbeddedResourceAttachment{Label: "pic.png", Data: "AAAA", ContentType: "image/png"},
		&protocol.MessageEmbeddedResourceAttachment{Label: "notes.txt", Data: text, ContentType: "text/plain"},
	}}
	describe := func(bs []acpsdk.ContentBlock) []string {
		var out []string
		for _, b := range bs {
			switch {
			case b.Text != nil:
				out = append(out, "text:"+b.Text.Text)
			case b.ResourceLink != nil:
				out = append(out, "link:"+b.ResourceLink.Uri)
			case b.Image != nil:
				out = append(out, "image:"+b.Image.MimeType)
			case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
				out = append(out, "resource:"+b.Resource.Resource.TextResourceContents.Text)
			}
		}
		return out
	}
	rich := describe(promptBlocks(acpsdk.PromptCapabilities{Image: true, EmbeddedContext: true}, msg, turnContext{}))
	if diff := cmp.Diff([]string{"text:look", "text:selected code", "link:file:///w/main.go", "image:image/png", "resource:hello"}, rich); diff != "" {
		t.Errorf("rich agent (-want +got):\n%s", diff)
	}
	plain := describe(promptBlocks(acpsdk.PromptCapabilities{}, msg, turnContext{}))
	if len(plain) != 5 || !strings.Contains(plain[3], "does not accept") || plain[4] != "text:notes.txt:\nhello" {
		t.Errorf("plain agent: %q", plain)
	}
}

// TestPromptBlocksContext: a chat attachment reaches the agent as the
// transcript the host resolved ("supply it as model context",
// chat-channel.md, Pulling a chat into another chat), and a steering
// message the host consumed for the turn follows the message.
func TestPromptBlocksContext(t *testing.T) {
	att := &protocol.MessageChatAttachment{Label: "side", Resource: "ahp-chat:/side"}
	msg := protocol.Message{Text: "use this", Attachments: []protocol.MessageAttachment{att}}
	done := protocol.Turn{ID: "t1", Message: protocol.Message{Text: "what is 2+2"},
		ResponseParts: []protocol.ResponsePart{&protocol.MarkdownResponsePart{ID: "p", Content: protocol.TextOf("4")}}}
	steer := protocol.Message{Text: "be brief"}
	blocks := promptBlocks(acpsdk.PromptCapabilities{}, msg, turnContext{
		steering:    &steer,
		transcripts: []agent.Transcript{{Attachment: att, Turns: []protocol.Turn{done}}},
	})
	var texts []string
	for _, b := range blocks {
		texts = append(texts, b.Text.Text)
	}
	if len(texts) != 4 || texts[0] != "use this" || !strings.Contains(texts[1], "User: what is 2+2") ||
		!strings.Contains(texts[1], "Assistant: 4") || !strings.Contains(texts[1], "ahp-chat:/side") || texts[3] != "be brief" {
		t.Fatalf("prompt %q", texts)
	}
}

// TestFlowReader: the reader holds back once flowLimit updates wait for
// the bridge, goes on as the bridge takes them, and resynchronises when
// the counts drift apart.
func TestFlowReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var in strings.Builder
		for range flowLimit + 10 {
			in.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{}}` + "\n")
		}
		in.WriteString(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")
		f := newFlowReader(strings.NewReader(in.String()), 200*time.Millisecond)
		sc := bufio.NewScanner(f)
		lines := make(chan string)
		go func() {
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		for i := range flowLimit {
			select {
			case <-lines:
			case <-time.After(5 * time.Second):
				t.Fatalf("blocked after %d lines", i)
			}
		}
		select {
		case <-lines:
			t.Fatal("read past the limit with no update taken")
		case <-time.After(50 * time.Millisecond):
		}
		f.done()
		select {
		case <-lines:
		case <-time.After(5 * time.Second):
			t.Fatal("did not go on after the bridge took an update")
		}
		// No more progress: after FlowResync it goes on anyway.
		start := time.Now()
		n := 0
		for range lines {
			n++
		}
		if n != 10 || time.Since(start) < 200*time.Millisecond {
			t.Errorf("read %d more lines in %v", n, time.Since(start))
		}
		if _, err := f.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("at the end: %v", err)
		}
	})
}

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  *acpsdk.RequestError
		want string
	}{
		{&acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"message": "stream disconnected before completion"}}, "stream disconnected before completion"},
		{&acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"error": "boom"}}, "boom"},
		{&acpsdk.RequestError{Code: -32000, Message: "Authentication required", Data: map[string]any{"message": "run gemini login"}}, "Authentication required: run gemini login"},
		{&acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "disk full"}}, "disk full"},
		{&acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: "plain"}, "plain"},
		{&acpsdk.RequestError{Code: -32603, Message: "Internal error"}, "Internal error"},
		{&acpsdk.RequestError{Code: -32602, Message: "Bad id", Data: map[string]any{"message": "Bad id: x"}}, "Bad id: x"},
	} {
		if got := errorText(tc.err); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestCleanLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext":                              "plain\ttext",
		"\x1b[31mred\x1b[0m":                       "red",
		"\x1b[1;38;5;208mbold\x1b[m rest":          "bold rest",
		"\x1b]0;window title\x07after":             "after",
		"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\": "link",
		"a\rb\x08c\x7f":                            "abc",
		"\x1b(Bcharset":                            "charset",
		"bad \xff byte é":                          "bad  byte é",
		"trailing \x1b":                            "trailing ",
		"cut \x1b[12;":                             "cut ",
	} {
		if got := cleanLine(in); got != want {
			t.Errorf("cleanLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadLineCuts(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6000 bytes
	br := bufio.NewReaderSize(strings.NewReader(long+"\nshort\n"+strings.Repeat("x", 10)+"\r\n"), 16)
	line, err := readLine(br, 2001)
	if err != nil || !strings.HasSuffix(line, "…") || len(line) > 2001+len("…") || !utf8.ValidString(line) {
		t.Errorf("long line: %d bytes, %v", len(line), err)
	}
	if line, _ := readLine(br, 2001); line != "short" {
		t.Errorf("next line %q", line)
	}
	if line, _ := readLine(br, 10); line != strings.Repeat("x", 10) {
		t.Errorf("a line exactly at the limit: %q", line)
	}
	if _, err := readLine(br, 10); err != io.EOF {
		t.Errorf("at the end: %v", err)
	}
}

func TestLineBudget(t *testing.T) {
	start := time.Unix(1000, 0)
	l := newLineBudget(3, 2, start)
	var got []string
	take := func(at time.Duration) {
		ok, dropped := l.take(start.Add(at))
		got = append(got, fmt.Sprint(ok, dropped))
	}
	for range 5 {
		take(0)
	}
	take(500 * time.Millisecond) // one line's worth refilled
	take(500 * time.Millisecond)
	take(10 * time.Second) // refilled up to the burst only
	take(10 * time.Second)
	take(10 * time.Second)
	take(10 * time.Second)
	want := []string{"true 0", "true 0", "true 0", "false 0", "false 0", "true 2", "false 0", "true 1", "true 0", "true 0", "false 0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("budget (-want +got):\n%s", diff)
	}
}

// TestFlowReaderRefusesNonACP: a line that cannot be JSON-RPC, or one
// longer than the SDK reads, breaks the stream with a reason.
func TestFlowReaderRefusesNonACP(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{\"jsonrpc\":\"2.0\"}\n\n  \nLoading model...\n", `other than ACP (JSON-RPC) on stdout: "Loading model..."`},
		{"{\"a\":\"" + strings.Repeat("x", maxLine) + "\"}\n", "more than 10 MiB"},
	} {
		var broken error
		f := newFlowReader(strings.NewReader(tc.in), DefaultFlowResync)
		f.onBroken = func(err error) { broken = err }
		_, err := io.ReadAll(f)
		if err == nil || !strings.Contains(err.Error(), tc.want) || broken != err {
			t.Errorf("%.40q: err %v, reported %v", tc.in, err, broken)
		}
	}
}
