package changeset

import (
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// TestChannelURIs: changeset channels are ahp-changeset: URIs, the same
// for the same session whenever they are made (after a restart too), and
// different for different sessions, whatever their URIs look like.
func TestChannelURIs(t *testing.T) {
	tests := []struct {
		session, want string
	}{
		{"ahp-session:/s1", "ahp-changeset:/43acf4f51e7901f492f09ca9/uncommitted/k"},
		{"echo:/s1", "ahp-changeset:/a44a4257aa8d774bcf2167c1/uncommitted/k"},
		{"vscode-agent://host/a/b?c", ""},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		got := newTracker(&Manager{}, tt.session).channelURI(KindUncommitted, "k")
		if again := newTracker(&Manager{}, tt.session).channelURI(KindUncommitted, "k"); again != got {
			t.Errorf("%s: %s, then %s", tt.session, got, again)
		}
		if tt.want != "" && got != tt.want {
			t.Errorf("%s: %s, want %s", tt.session, got, tt.want)
		}
		c, err := protocol.ParseChannel(got)
		if err != nil || c.Kind != protocol.ChannelChangeset {
			t.Errorf("%s: %s parses as %+v, %v", tt.session, got, c, err)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("%s and %s share %s", other, tt.session, got)
		}
		seen[got] = tt.session
	}
}
