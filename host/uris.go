package host

import "github.com/ahp-go/ahp/host/internal/check"

// Channels are found by looking them up (Host.channels, sessions and
// chats), never by their URI's scheme: clients name their sessions as
// they like, VS Code with the agent's provider as the scheme
// (<provider>:/<uuid>). URIs a client sends are checked before the lookup
// (check.ChannelURI); these helpers name the sessions the host creates
// itself.

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
	return check.Provider(provider)
}
