package workspace_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/files"
)

// Command params are checked against their schema types too: a value
// outside an enumeration or a null where the type has none is -32602
// naming the member, and nothing is written.
func TestResourceParamsTypesChecked(t *testing.T) {
	dir := t.TempDir()
	srv := startHost(t, nil, nil)
	c := srv.Dial(t, "c1")
	initialize(t, c)
	createSession(t, c, "s1", dir)
	uri := files.URIOf(filepath.Join(dir, "a.txt"))
	for _, tc := range []struct {
		name, method, params, want string
	}{
		{"enumeration", "resourceWrite", `{"uri":"` + uri + `","data":"x","encoding":"utf-8","mode":"sideways"}`, `member mode is "sideways"`},
		{"null required", "resourceWrite", `{"uri":"` + uri + `","data":null,"encoding":"utf-8"}`, "member data is null"},
		{"wrong kind", "resourceWrite", `{"uri":"` + uri + `","data":5,"encoding":"utf-8"}`, "member data: want a JSON string"},
		{"null in an array", "createResourceWatch", `{"uri":"` + files.URIOf(dir) + `","excludes":{"items":[null]}}`, "member excludes.items[0] is null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := rpcCode(t, c.Call(tc.method, jsontext.Value(tc.params), nil))
			if e.Code != protocol.CodeInvalidParams || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("got %v, want -32602 with %q", e, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "a.txt")); err == nil {
				t.Fatal("a.txt was written")
			}
		})
	}
	// A null optional member reads as absent.
	must(t, c.Call("resourceWrite", jsontext.Value(`{"uri":"`+uri+`","data":"x","encoding":"utf-8","mode":null}`), nil))
}

// The actions clients dispatch on a terminal are held to their schema
// types like those on sessions and chats (host's
// TestWrongMemberTypesRejected): each, with a member null or of the wrong
// JSON kind, is rejected naming the member, and a second subscriber sees
// none of them.
func TestTerminalActionTypesChecked(t *testing.T) {
	const uri = "ahp-terminal:/types"
	srv, c := shTerminal(t, uri)
	other := srv.Dial(t, "c2")
	initialize(t, other)
	other.Subscribe(uri)
	seq := int64(100)
	tested := 0
	for _, info := range protocol.Actions() {
		if !info.ClientDispatchable || info.Scope != protocol.ChannelTerminal {
			continue
		}
		v, err := protocol.Decode("StateAction", []byte(`{"type":"`+info.Type+`"}`))
		must(t, err)
		base, err := protocol.Marshal(v)
		must(t, err)
		var m map[string]jsontext.Value
		must(t, protocol.Unmarshal(base, &m))
		delete(m, "type")
		names := slices.Sorted(maps.Keys(m))
		if len(names) == 0 {
			continue
		}
		name := names[0]
		wrong := "[]"
		if m[name].Kind() == '[' {
			wrong = "5"
		}
		for _, value := range []string{"null", wrong} {
			m[name] = jsontext.Value(value)
			action, err := protocol.Marshal(m)
			must(t, err)
			action = append([]byte(`{"type":"`+info.Type+`",`), action[1:]...)
			seq++
			params := jsontext.Value(`{"channel":"` + uri + `","clientSeq":` + strconv.FormatInt(seq, 10) + `,"action":` + string(action) + `}`)
			must(t, c.RPC.Notify(t.Context(), "dispatchAction", params))
			s := seq
			envs := c.WaitFor(info.Type+" rejected", func(envs []protocol.ActionEnvelope) bool {
				return slices.ContainsFunc(envs, func(e protocol.ActionEnvelope) bool {
					return e.Origin != nil && e.Origin.ClientSeq == s && e.RejectionReason != nil
				})
			})
			for _, e := range envs {
				if e.Origin != nil && e.Origin.ClientSeq == s && e.RejectionReason != nil && !strings.Contains(*e.RejectionReason, "member action."+name) {
					t.Errorf("%s with %s = %s: reason %q", info.Type, name, value, *e.RejectionReason)
				}
			}
		}
		tested++
	}
	if tested < 4 {
		t.Fatalf("only %d terminal actions tested", tested)
	}
	// A valid action afterwards reaches the other subscriber, with none of
	// the rejected ones before it.
	c.Dispatch(uri, &protocol.TerminalTitleChangedAction{Title: "sentinel"})
	envs := other.WaitFor("the sentinel", func(envs []protocol.ActionEnvelope) bool {
		return slices.ContainsFunc(envs, func(e protocol.ActionEnvelope) bool {
			a, ok := e.Action.(*protocol.TerminalTitleChangedAction)
			return ok && a.Title == "sentinel"
		})
	})
	for _, e := range envs {
		if e.Origin != nil && e.Origin.ClientID == "c1" && e.Origin.ClientSeq > 100 {
			t.Errorf("c2 received c1's rejected action %d (%s)", e.Origin.ClientSeq, e.Action.Type())
		}
	}
}
