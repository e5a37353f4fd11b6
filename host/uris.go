package host

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ahp-go/ahp/protocol"
)

// Channels are found by looking them up (Host.channels, sessions and
// chats), never by their URI's scheme: clients name their sessions as
// they like, VS Code with the agent's provider as the scheme
// (<provider>:/<uuid>). These helpers check URIs a client sends before
// the lookup, and name the sessions the host creates itself.

// checkChannelURI checks a channel URI a client names: a well-formed AHP
// channel URI, or any other absolute URI (a session a client named).
func checkChannelURI(uri string) error {
	_, err := protocol.ParseChannel(uri)
	if err == nil || !errors.Is(err, protocol.ErrUnknownChannelScheme) {
		return err
	}
	return protocol.CheckURI(uri)
}

// sessionURIFor returns a new session URI on an agent provider, as VS
// Code names sessions: the provider is the scheme, so clients that read
// the provider from the URI see it.
func sessionURIFor(provider, id string) string {
	return provider + ":/" + id
}

// CheckProvider refuses provider names that cannot be the scheme of the
// URIs of their sessions: those that are not URI schemes (RFC 3986), that
// have upper-case letters (schemes compare without regard to case, and
// clients may lower-case them), or that the host reserves.
func CheckProvider(provider string) error {
	switch {
	case !protocol.ValidScheme(provider):
		return fmt.Errorf("agent provider %q is not a valid URI scheme (a letter, then letters, digits, '+', '-' or '.'), which it must be to name its sessions", provider)
	case strings.ToLower(provider) != provider:
		return fmt.Errorf("agent provider %q has upper-case letters; use %q, as URI schemes are lower-case", provider, strings.ToLower(provider))
	case protocol.ReservedScheme(provider):
		return fmt.Errorf("agent provider %q clashes with a URI scheme the host uses for its own channels or files", provider)
	}
	return nil
}
