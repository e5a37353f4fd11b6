package protocol_test

import (
	"reflect"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// TestChannelMessages checks that the params of every server notification
// that carry a channel member, and the action envelope, report it through
// ChannelURI, which clients use to route them.
func TestChannelMessages(t *testing.T) {
	values := []any{&protocol.ActionEnvelope{Channel: "ahp-session:/x"}}
	for _, m := range protocol.Methods() {
		if m.Notification && m.FromServer && m.NewParams != nil {
			values = append(values, m.NewParams())
		}
	}
	for _, v := range values {
		f := reflect.ValueOf(v).Elem()
		if f.Kind() != reflect.Struct {
			continue
		}
		ch := f.FieldByName("Channel")
		cm, ok := v.(protocol.ChannelMessage)
		if !ch.IsValid() {
			if ok {
				t.Errorf("%T has ChannelURI but no Channel member", v)
			}
			continue
		}
		if !ok {
			t.Errorf("%T has a Channel member but no ChannelURI method", v)
			continue
		}
		ch.SetString("ahp-test:/" + f.Type().Name())
		if got := cm.ChannelURI(); got != ch.String() {
			t.Errorf("%T.ChannelURI() = %q, want %q", v, got, ch.String())
		}
	}
}
