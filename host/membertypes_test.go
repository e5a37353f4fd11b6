package host_test

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
)

// wrongMember picks a member of a client action and two values its schema
// type does not allow: null, and a value of the wrong JSON kind. It picks
// the first member, by name, that has a type (untyped members take
// anything); ok is false when there is none.
func wrongMember(a protocol.StateAction) (name string, null, kind string, ok bool) {
	rt := reflect.TypeOf(a).Elem()
	var names []string
	kinds := map[string]string{}
	for f := range rt.Fields() {
		n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if n == "" || n == "-" || !f.IsExported() {
			continue
		}
		t := f.Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case t == reflect.TypeFor[jsontext.Value]() || t == reflect.TypeFor[protocol.JSONPrimitive]():
			continue
		case t.Kind() == reflect.Slice:
			kinds[n] = "5"
		default:
			kinds[n] = "[]" // wrong for strings, numbers, booleans, objects and unions alike
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return "", "", "", false
	}
	slices.Sort(names)
	return names[0], "null", kinds[names[0]], true
}

// withMember returns the action, encoded, with member name set to value.
// The zero action encodes every required member; the one replaced goes
// last.
func withMember(t *testing.T, a protocol.StateAction, name, value string) jsontext.Value {
	t.Helper()
	b, err := protocol.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]jsontext.Value
	if err := protocol.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString(`{"type":"` + a.Type() + `"`)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "type" && k != name {
			sb.WriteString(`,"` + k + `":` + string(m[k]))
		}
	}
	sb.WriteString(`,"` + name + `":` + value + `}`)
	return jsontext.Value(sb.String())
}

// TestWrongMemberTypesRejected: every action a client may dispatch on the
// root, a session or a chat, sent with a member of a type its schema does
// not allow (null, or the wrong JSON kind), is rejected: echoed to the
// sender alone with a reason naming the member, and never applied or
// broadcast. Clients speaking the 0.8.0 shapes are held to the same
// types. The cases come from the action table and the generated types, so
// an action added to the schema is covered once generated.
func TestWrongMemberTypesRejected(t *testing.T) {
	for _, version := range []string{"1.1.0", "0.8.0"} {
		t.Run(version, func(t *testing.T) {
			th := startHost(t, nil)
			a, b := th.dial(t, "a"), th.dial(t, "b")
			for _, c := range []*client{a, b} {
				var res protocol.InitializeResult
				c.Must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{version}, ClientID: c.ID, InitialSubscriptions: []string{protocol.RootURI}}, &res)
				if res.ProtocolVersion != version {
					t.Fatalf("negotiated %s", res.ProtocolVersion)
				}
			}
			session, chat := a.newSession("s")
			b.Subscribe(session)
			b.Subscribe(chat)
			channels := map[protocol.ChannelKind]string{protocol.ChannelRoot: protocol.RootURI, protocol.ChannelSession: session, protocol.ChannelChat: chat}

			seq := int64(1000)
			send := func(channel string, action jsontext.Value) int64 {
				seq++
				params := jsontext.Value(`{"channel":"` + channel + `","clientSeq":` + strconv.FormatInt(seq, 10) + `,"action":` + string(action) + `}`)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := a.RPC.Notify(ctx, "dispatchAction", params); err != nil {
					t.Fatal(err)
				}
				return seq
			}
			tested := 0
			for _, info := range protocol.Actions() {
				channel, ok := channels[info.Scope]
				if !info.ClientDispatchable || !ok || !protocol.ActionKnownToVersion(info.Type, version) {
					continue
				}
				v, err := protocol.Decode("StateAction", []byte(`{"type":"`+info.Type+`"}`))
				if err != nil {
					t.Fatal(err)
				}
				action := v.(protocol.StateAction)
				name, null, kind, ok := wrongMember(action)
				if !ok {
					continue
				}
				for _, value := range []string{null, kind} {
					s := send(channel, withMember(t, action, name, value))
					env := rejectionOf(s, a.WaitFor(info.Type+" rejected", rejected(s)))
					if want := "member action." + name; !strings.Contains(*env.RejectionReason, want) {
						t.Errorf("%s with %s = %s: reason %q does not name %s", info.Type, name, value, *env.RejectionReason, want)
					}
					if env.Action.Type() != info.Type {
						t.Errorf("%s: the rejection echoes a %s", info.Type, env.Action.Type())
					}
				}
				tested++
			}
			if tested < 25 {
				t.Fatalf("only %d actions tested", tested)
			}
			// The example of the report: a null title.
			s := send(session, jsontext.Value(`{"type":"session/titleChanged","title":null}`))
			if r := *rejectionOf(s, a.WaitFor("null title", rejected(s))).RejectionReason; !strings.Contains(r, "action.title is null") {
				t.Errorf("null title: %s", r)
			}
			// Nothing was broadcast: b sees a's sentinel and nothing of
			// a's before it.
			s = send(session, jsontext.Value(`{"type":"session/titleChanged","title":"sentinel"}`))
			envs := b.WaitFor("the sentinel", hasTitle("sentinel"))
			for _, e := range envs {
				if e.Origin != nil && e.Origin.ClientID == "a" && e.Origin.ClientSeq != s {
					t.Errorf("b received a's action %d: %s", e.Origin.ClientSeq, e.Action.Type())
				}
			}
			for _, e := range a.Envelopes() {
				if e.Origin != nil && e.Origin.ClientID == "a" && e.Origin.ClientSeq != s && e.RejectionReason == nil {
					t.Errorf("a's action %d (%s) was accepted", e.Origin.ClientSeq, e.Action.Type())
				}
			}
			t.Logf("%d actions, 2 wrong values each", tested)
		})
	}
}

// The params of client requests are held to their schema types too: a
// member of the wrong kind, a null where the type has none or a string
// outside an enumeration is -32602 naming the member.
func TestCommandParamTypesChecked(t *testing.T) {
	th := startHost(t, nil)
	c := th.dial(t, "c")
	c.initialize()
	_, chat := c.newSession("s")
	for _, tc := range []struct {
		method, params, want string
	}{
		{"listSessions", `{"limit":"ten"}`, "member limit: want a JSON number"},
		{"fetchTurns", `{"channel":null}`, "member channel is null"},
		{"completions", `{"channel":"` + chat + `","kind":"shout","text":"","offset":0}`, `member kind is "shout"`},
	} {
		err := c.Call(tc.method, jsontext.Value(tc.params), nil)
		var e *protocol.Error
		if !errors.As(err, &e) || e.Code != protocol.CodeInvalidParams || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s %s: got %v, want -32602 with %q", tc.method, tc.params, err, tc.want)
		}
	}
}
