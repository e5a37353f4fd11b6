package protocol

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseChannel(t *testing.T) {
	tests := []struct {
		uri  string
		want Channel
	}{
		{"ahp-root://", Channel{Kind: ChannelRoot}},
		{"ahp-session:/3f2b9c1e-8d4a-4c6e-9b7f-0a1b2c3d4e5f", Channel{Kind: ChannelSession, ID: "3f2b9c1e-8d4a-4c6e-9b7f-0a1b2c3d4e5f"}},
		{"ahp-session:/s1", Channel{Kind: ChannelSession, ID: "s1"}},
		{"ahp-chat:/c1", Channel{Kind: ChannelChat, ID: "c1"}},
		// Chat and terminal ids are host-defined and may hold slashes
		// (the reducer fixtures use ahp-chat:/s1/c1 and ahp-terminal:/s1/t1).
		{"ahp-chat:/s1/c1", Channel{Kind: ChannelChat, ID: "s1/c1"}},
		{"ahp-terminal:/s1/t1", Channel{Kind: ChannelTerminal, ID: "s1/t1"}},
		{"ahp-terminal:/t-42", Channel{Kind: ChannelTerminal, ID: "t-42"}},
		{"ahp-changeset:/cs1", Channel{Kind: ChannelChangeset, ID: "cs1"}},
		{"ahp-resource-watch:/abc", Channel{Kind: ChannelResourceWatch, ID: "abc"}},
		{"ahp-session:/s1/annotations", Channel{Kind: ChannelAnnotations, ID: "s1", Session: "s1"}},
		{"ahp-session:/s1/changeset/session", Channel{Kind: ChannelChangeset, ID: "session", Session: "s1"}},
		{"ahp-session:/s1/changeset/turn/t1", Channel{Kind: ChannelChangeset, ID: "turn/t1", Session: "s1"}},
		{"ahp-otlp://logs", Channel{Kind: ChannelTelemetry, ID: "//logs"}},
		{"ahp-otlp://logs?level=info", Channel{Kind: ChannelTelemetry, ID: "//logs?level=info"}},
		{"ahp-otlp:traces", Channel{Kind: ChannelTelemetry, ID: "traces"}},
		{"ahp-chat:/a%20b", Channel{Kind: ChannelChat, ID: "a%20b"}},
		// Sessions named by their clients (VS Code: <provider>:/<uuid>).
		{"echo:/cf73", Channel{Kind: ChannelSession, ID: "cf73", Scheme: "echo"}},
		{"claude-code:/s1/annotations", Channel{Kind: ChannelAnnotations, ID: "s1", Session: "s1", Scheme: "claude-code"}},
	}
	for _, tt := range tests {
		got, err := ParseChannel(tt.uri)
		if err != nil {
			t.Errorf("ParseChannel(%q): %v", tt.uri, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseChannel(%q) = %+v, want %+v", tt.uri, got, tt.want)
		}
		if s := got.String(); s != tt.uri {
			t.Errorf("ParseChannel(%q).String() = %q", tt.uri, s)
		}
	}
}

func TestParseChannelRejects(t *testing.T) {
	long := "ahp-session:/" + strings.Repeat("a", maxChannelLen)
	tests := []struct {
		uri  string
		want error
	}{
		{"", ErrUnknownChannelScheme},
		{"   ", ErrUnknownChannelScheme},
		{"session", ErrUnknownChannelScheme},
		{"file:///tmp/x", ErrUnknownChannelScheme},
		{"mcp://server/abc", ErrUnknownChannelScheme},
		{"ahp-sessions:/s1", ErrUnknownChannelScheme},
		{"AHP-SESSION:/s1", ErrUnknownChannelScheme},
		{" ahp-root://", ErrUnknownChannelScheme},
		{"echo:/s1/other", ErrUnknownChannelScheme},
		{"echo:s1", ErrUnknownChannelScheme},
		{"1echo:/s1", ErrUnknownChannelScheme},
		{"ahp-future:/s1", ErrUnknownChannelScheme},
		{"ahp-root://x", ErrMalformedChannel},
		{"ahp-root:/", ErrMalformedChannel},
		{"ahp-root:", ErrMalformedChannel},
		{"ahp-root:// ", ErrMalformedChannel},
		{"ahp-session:", ErrMalformedChannel},
		{"ahp-session:/", ErrMalformedChannel},
		{"ahp-session:s1", ErrMalformedChannel},
		{"ahp-session://s1", ErrMalformedChannel},
		{"ahp-session:/s1/", ErrMalformedChannel},
		{"ahp-session:/s1/other", ErrMalformedChannel},
		{"ahp-session:/s1/changeset/", ErrMalformedChannel},
		{"ahp-session:/s1/annotations/x", ErrMalformedChannel},
		{"ahp-session:/s 1", ErrMalformedChannel},
		{"ahp-session:/s1 ", ErrMalformedChannel},
		{"ahp-session:/s1\n", ErrMalformedChannel},
		{"ahp-session:/s1\x00", ErrMalformedChannel},
		{"ahp-session:/s1?x=1", ErrMalformedChannel},
		{"ahp-session:/s1#frag", ErrMalformedChannel},
		{"ahp-session:/séance", ErrMalformedChannel},
		{"ahp-chat:/", ErrMalformedChannel},
		{"ahp-chat:c1", ErrMalformedChannel},
		{"ahp-chat:/{cid}", ErrMalformedChannel},
		{"ahp-terminal:/", ErrMalformedChannel},
		{"ahp-changeset:/", ErrMalformedChannel},
		{"ahp-resource-watch:", ErrMalformedChannel},
		{"ahp-resource-watch:/\t", ErrMalformedChannel},
		{"ahp-otlp:", ErrMalformedChannel},
		{"ahp-otlp://logs{?level}", ErrMalformedChannel},
		{"ahp-otlp://lo gs", ErrMalformedChannel},
		{long, ErrMalformedChannel},
	}
	for _, tt := range tests {
		got, err := ParseChannel(tt.uri)
		if !errors.Is(err, tt.want) {
			t.Errorf("ParseChannel(%q) = %+v, %v; want error %v", clip(tt.uri), got, err, tt.want)
			continue
		}
		if len(err.Error()) > 200 {
			t.Errorf("ParseChannel(%q): error message is %d bytes long", clip(tt.uri), len(err.Error()))
		}
	}
}

func TestChannelBuilders(t *testing.T) {
	tests := []struct {
		got, want string
		kind      ChannelKind
	}{
		{RootURI, "ahp-root://", ChannelRoot},
		{SessionURI("s1"), "ahp-session:/s1", ChannelSession},
		{ChatURI("c1"), "ahp-chat:/c1", ChannelChat},
		{TerminalURI("t1"), "ahp-terminal:/t1", ChannelTerminal},
		{ChangesetURI("x"), "ahp-changeset:/x", ChannelChangeset},
		{SessionChangesetURI("s1", "uncommitted"), "ahp-session:/s1/changeset/uncommitted", ChannelChangeset},
		{AnnotationsURI("s1"), "ahp-session:/s1/annotations", ChannelAnnotations},
		{ResourceWatchURI("w1"), "ahp-resource-watch:/w1", ChannelResourceWatch},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("built %q, want %q", tt.got, tt.want)
		}
		c, err := ParseChannel(tt.got)
		if err != nil || c.Kind != tt.kind {
			t.Errorf("ParseChannel(%q) = %+v, %v; want kind %q", tt.got, c, err, tt.kind)
		}
	}
}

func TestCheckSessionURI(t *testing.T) {
	tests := []struct {
		uri string
		ok  bool
	}{
		{"ahp-session:/s1", true},
		{"echo:/cf73d5a0-8f7e-4b9e-9a56-2f8d1c3e4b5a", true},
		{"Echo+x.y-z:/s1", true},
		{"vscode-agent://host/path?q=1", true},
		{"echo:/s1/more", true},
		{"echo:/s1/annotations", false},
		{"ahp-session:/s1/annotations", false},
		{"ahp-session:/s1/changeset/x", false},
		{"ahp-session:s1", false},
		{"ahp-root://", false},
		{"ahp-chat:/c1", false},
		{"ahp-terminal:/t1", false},
		{"ahp-changeset:/c1", false},
		{"ahp-resource-watch:/w1", false},
		{"ahp-automations://", false},
		{"ahp-otlp://logs", false},
		{"ahp-changeset-content:/a/b", false},
		{"AHP-SESSION:/s1", false},
		{"file:///tmp", false},
		{"FILE:///tmp", false},
		{"", false},
		{"s1", false},
		{"echo:", false},
		{"echo:/a b", false},
		{"-x:/s1", false},
		{"echo:/" + strings.Repeat("a", maxChannelLen), false},
	}
	for _, tt := range tests {
		if err := CheckSessionURI(tt.uri); (err == nil) != tt.ok {
			t.Errorf("CheckSessionURI(%q) = %v, want ok=%v", clip(tt.uri), err, tt.ok)
		}
	}
}

func TestNewSnapshotStateOfNamedSessions(t *testing.T) {
	tests := []struct {
		uri  string
		want string
	}{
		{"ahp-session:/s1", "*protocol.SessionState"},
		{"echo:/s1", "*protocol.SessionState"},
		{"vscode-agent://host/p", "*protocol.SessionState"},
		{"echo:/s1/annotations", "*protocol.AnnotationsState"},
		{"ahp-chat:/c1", "*protocol.ChatState"},
		{"ahp-future:/x", "<nil>"},
		{"file:///x", "<nil>"},
		{"no scheme", "<nil>"},
	}
	for _, tt := range tests {
		if got := fmt.Sprintf("%T", NewSnapshotState(tt.uri)); got != tt.want {
			t.Errorf("NewSnapshotState(%q) is %s, want %s", tt.uri, got, tt.want)
		}
	}
}

func TestChannelStringZero(t *testing.T) {
	if s := (Channel{}).String(); s != "" {
		t.Errorf("Channel{}.String() = %q, want empty", s)
	}
}

func FuzzParseChannel(f *testing.F) {
	for _, s := range []string{
		"ahp-root://", "ahp-session:/s1", "ahp-session:/s1/annotations",
		"ahp-session:/s1/changeset/turn/t1", "ahp-chat:/s1/c1", "ahp-otlp://logs?level=info", "",
		"echo:/s1", "echo:/s1/annotations",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		c, err := ParseChannel(uri)
		if err != nil {
			if c != (Channel{}) {
				t.Fatalf("ParseChannel(%q) returned %+v with error %v", uri, c, err)
			}
			return
		}
		if got := c.String(); got != uri {
			t.Fatalf("ParseChannel(%q).String() = %q", uri, got)
		}
	})
}

func ExampleParseChannel() {
	for _, uri := range []string{
		"ahp-root://",
		"ahp-chat:/c1",
		"ahp-session:/s1/annotations",
		"ahp-session:/s1/changeset/turn/t1",
		"mcp://server",
	} {
		c, err := ParseChannel(uri)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: kind=%s id=%q session=%q\n", uri, c.Kind, c.ID, c.Session)
	}
	// Output:
	// ahp-root://: kind=root id="" session=""
	// ahp-chat:/c1: kind=chat id="c1" session=""
	// ahp-session:/s1/annotations: kind=annotations id="s1" session="s1"
	// ahp-session:/s1/changeset/turn/t1: kind=changeset id="turn/t1" session="s1"
	// protocol: not an AHP channel scheme: "mcp://server"
}
