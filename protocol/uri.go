package protocol

import (
	"errors"
	"fmt"
	"strings"
)

// RootURI is the root channel. Connection-level commands (initialize, ping,
// the resource* family and others) always name it as their channel.
const RootURI = "ahp-root://"

// AutomationsURI is the URI of the automation catalogue channel, which,
// like the root channel, has one fixed URI.
const AutomationsURI = "ahp-automations://"

// Channel URI schemes. Apart from the root channel, which has one fixed URI,
// and telemetry channels, whose URIs hosts choose freely, a channel is
// addressed as scheme + "/" + id.
const (
	rootScheme          = "ahp-root:"
	sessionScheme       = "ahp-session:"
	chatScheme          = "ahp-chat:"
	terminalScheme      = "ahp-terminal:"
	changesetScheme     = "ahp-changeset:"
	resourceWatchScheme = "ahp-resource-watch:"
	telemetryScheme     = "ahp-otlp:"
	canvasScheme        = "ahp-canvas:"
	automationRunScheme = "ahp-automation-run:"
)

// Sub-paths that address a channel owned by a session below its URI:
// ahp-session:/<id>/annotations and ahp-session:/<id>/changeset/<name>.
const (
	annotationsSuffix = "annotations"
	changesetPrefix   = "changeset/"
)

// maxChannelLen bounds the length of a URI that ParseChannel accepts. Real
// channel URIs are a scheme and an identifier; anything near this size is
// garbage or an attack, and refusing it early keeps routing tables small.
const maxChannelLen = 4096

// ChannelKind says what a channel URI addresses. The values of the kinds that
// hold state are the reducer names used by the conformance fixtures and
// returned by ActionScope, so an action's scope can be compared with the kind
// of the channel it arrived on.
type ChannelKind string

// The channel kinds.
const (
	ChannelRoot          ChannelKind = "root"          // ahp-root://
	ChannelSession       ChannelKind = "session"       // ahp-session:/<id>
	ChannelChat          ChannelKind = "chat"          // ahp-chat:/<id>
	ChannelTerminal      ChannelKind = "terminal"      // ahp-terminal:/<id>
	ChannelChangeset     ChannelKind = "changeset"     // ahp-changeset:/<id> or ahp-session:/<id>/changeset/<name>
	ChannelAnnotations   ChannelKind = "annotations"   // ahp-session:/<id>/annotations
	ChannelResourceWatch ChannelKind = "resourceWatch" // ahp-resource-watch:/<id>
	ChannelTelemetry     ChannelKind = "otlp"          // ahp-otlp:<host-defined>; stateless
	ChannelCanvas        ChannelKind = "canvas"        // ahp-canvas:/<id>
	ChannelAutomation    ChannelKind = "automation"    // ahp-automations://, the catalogue
	ChannelAutomationRun ChannelKind = "automationRun" // ahp-automation-run:/<id>
)

// Errors returned by ParseChannel, always wrapped with the offending URI.
var (
	// ErrUnknownChannelScheme means the URI does not use one of the AHP
	// channel schemes. Such a URI may still be a valid routing target
	// handled elsewhere (an MCP side channel uses its own scheme).
	ErrUnknownChannelScheme = errors.New("protocol: not an AHP channel scheme")

	// ErrMalformedChannel means the URI uses an AHP channel scheme but is
	// not a well-formed channel URI of that scheme.
	ErrMalformedChannel = errors.New("protocol: malformed channel URI")
)

// Channel is a parsed channel URI.
type Channel struct {
	Kind ChannelKind

	// ID identifies the channel among those of its kind: the session,
	// chat, terminal, changeset or watch id. It is empty for the root
	// channel. For an annotations channel it is the owning session's id;
	// for a changeset below a session URI it is the part after
	// "/changeset/" (for example "session" or "turn/t1"). For a telemetry
	// channel it is everything after the scheme, which hosts define freely
	// and clients must not interpret.
	ID string

	// Session is the owning session's id for channels addressed below a
	// session URI (annotations and session changesets), and empty for
	// every other channel, including ahp-changeset: ones.
	Session string

	// Scheme is the scheme (without the colon) of a session URI that its
	// client named with a scheme of its own, such as "echo" for
	// echo:/<id>, for the session and the channels below it. It is empty
	// for ahp-session: URIs and every other channel.
	Scheme string
}

// SessionURI returns the URI of the session a session channel is, or that
// a channel below a session belongs to, and "" for any other channel.
func (c Channel) SessionURI() string {
	switch {
	case c.Kind == ChannelSession:
		return c.String()
	case c.Session == "":
		return ""
	case c.Scheme != "":
		return c.Scheme + ":/" + c.Session
	}
	return SessionURI(c.Session)
}

// String returns the channel's URI. For any Channel returned by
// ParseChannel it is the URI that was parsed.
func (c Channel) String() string {
	switch c.Kind {
	case ChannelRoot:
		return RootURI
	case ChannelSession:
		if c.Scheme != "" {
			return c.Scheme + ":/" + c.ID
		}
		return SessionURI(c.ID)
	case ChannelChat:
		return ChatURI(c.ID)
	case ChannelTerminal:
		return TerminalURI(c.ID)
	case ChannelChangeset:
		if c.Session != "" {
			return SessionChangesetURI(c.Session, c.ID)
		}
		return ChangesetURI(c.ID)
	case ChannelAnnotations:
		return c.SessionURI() + "/" + annotationsSuffix
	case ChannelResourceWatch:
		return ResourceWatchURI(c.ID)
	case ChannelTelemetry:
		return telemetryScheme + c.ID
	case ChannelCanvas:
		return canvasScheme + "/" + c.ID
	case ChannelAutomation:
		return AutomationsURI
	case ChannelAutomationRun:
		return automationRunScheme + "/" + c.ID
	}
	return ""
}

// SessionURI returns the URI of the session channel with the given id.
// The builders below do not validate their arguments; ParseChannel accepts
// what they return whenever the ids are non-empty and use only URI
// characters (and, for session ids, no "/").
func SessionURI(id string) string { return sessionScheme + "/" + id }

// ChatURI returns the URI of the chat channel with the given id.
func ChatURI(id string) string { return chatScheme + "/" + id }

// TerminalURI returns the URI of the terminal channel with the given id.
func TerminalURI(id string) string { return terminalScheme + "/" + id }

// ChangesetURI returns an ahp-changeset: URI with the given id. Clients
// normally get changeset URIs by expanding a session's changeset URI
// templates instead of building them.
func ChangesetURI(id string) string { return changesetScheme + "/" + id }

// SessionChangesetURI returns the URI of a changeset addressed below its
// session's URI, such as ahp-session:/<id>/changeset/session: the form
// hosts used before they named changesets ahp-changeset:/<id>, as the
// spec's URI table gives. ParseChannel still reads it.
func SessionChangesetURI(sessionID, name string) string {
	return SessionURI(sessionID) + "/" + changesetPrefix + name
}

// AnnotationsURI returns the URI of the annotations channel of the session
// with the given id.
func AnnotationsURI(sessionID string) string {
	return SessionURI(sessionID) + "/" + annotationsSuffix
}

// ResourceWatchURI returns the URI of the resource-watch channel with the
// given id.
func ResourceWatchURI(id string) string { return resourceWatchScheme + "/" + id }

// ParseChannel parses a channel URI. Scheme matching is exact and
// case-sensitive. Apart from the root URI, which must match RootURI exactly,
// a channel URI is a scheme, a "/" and a non-empty id made only of the
// characters RFC 3986 allows in a URI, without "?" or "#"; telemetry URIs
// are opaque after their scheme and may carry a query. Below a session URI
// only "/annotations" and "/changeset/<name>" are recognised, so a session id
// never contains "/". URIs longer than 4096 bytes are refused.
//
// Clients name sessions as they like (VS Code names them
// <provider>:/<uuid>), so a URI of the form scheme:/<id> or
// scheme:/<id>/annotations whose scheme is a valid one that is not
// reserved (see ReservedScheme) parses as a session or its annotations,
// with Channel.Scheme set. That is a reading of the URI's shape: only the
// host that holds the channel knows what it is.
//
// The error wraps ErrUnknownChannelScheme when the URI does not use an AHP
// channel scheme and is not of the session shape above, and
// ErrMalformedChannel otherwise.
func ParseChannel(uri string) (Channel, error) {
	if len(uri) > maxChannelLen {
		return Channel{}, channelError(ErrMalformedChannel, uri, "too long")
	}
	if uri == RootURI {
		return Channel{Kind: ChannelRoot}, nil
	}
	if uri == AutomationsURI {
		return Channel{Kind: ChannelAutomation}, nil
	}
	i := strings.IndexByte(uri, ':')
	if i < 0 {
		return Channel{}, channelError(ErrUnknownChannelScheme, uri, "")
	}
	scheme, rest := uri[:i+1], uri[i+1:]
	switch scheme {
	case rootScheme:
		return Channel{}, channelError(ErrMalformedChannel, uri, "the root channel is exactly "+RootURI)
	case telemetryScheme:
		if rest == "" || !uriChars(rest, true) {
			return Channel{}, channelError(ErrMalformedChannel, uri, "bad telemetry URI")
		}
		return Channel{Kind: ChannelTelemetry, ID: rest}, nil
	}
	kind, ok := idSchemes[scheme]
	if !ok {
		return parseNamedSession(uri, scheme[:i], rest)
	}
	id, err := pathID(rest)
	if err != nil {
		return Channel{}, channelError(ErrMalformedChannel, uri, err.Error())
	}
	if kind == ChannelSession {
		return parseSessionPath(uri, id)
	}
	return Channel{Kind: kind, ID: id}, nil
}

// idSchemes maps each scheme whose URIs have the form scheme + "/" + id to
// the kind of channel it addresses.
var idSchemes = map[string]ChannelKind{
	sessionScheme:       ChannelSession,
	chatScheme:          ChannelChat,
	terminalScheme:      ChannelTerminal,
	changesetScheme:     ChannelChangeset,
	resourceWatchScheme: ChannelResourceWatch,
	canvasScheme:        ChannelCanvas,
	automationRunScheme: ChannelAutomationRun,
}

// pathID checks the part of a URI after its scheme, which must be "/"
// followed by an id, and returns the id.
func pathID(rest string) (string, error) {
	id, ok := strings.CutPrefix(rest, "/")
	switch {
	case !ok:
		return "", errors.New(`want "/" after the scheme`)
	case id == "":
		return "", errors.New("missing id")
	case id[0] == '/':
		return "", errors.New("id starts with /")
	case !uriChars(id, false):
		return "", errors.New("id has characters not allowed in a URI")
	}
	return id, nil
}

// parseSessionPath interprets the id part of an ahp-session: URI, which
// names either a session or a channel owned by the session.
func parseSessionPath(uri, path string) (Channel, error) {
	session, sub, nested := strings.Cut(path, "/")
	if !nested {
		return Channel{Kind: ChannelSession, ID: session}, nil
	}
	if sub == annotationsSuffix {
		return Channel{Kind: ChannelAnnotations, ID: session, Session: session}, nil
	}
	if name, ok := strings.CutPrefix(sub, changesetPrefix); ok && name != "" {
		return Channel{Kind: ChannelChangeset, ID: name, Session: session}, nil
	}
	return Channel{}, channelError(ErrMalformedChannel, uri, "unknown channel below a session")
}

// parseNamedSession parses a session URI with a scheme of its client's
// choosing, or the annotations channel below one.
func parseNamedSession(uri, scheme, rest string) (Channel, error) {
	if !ValidScheme(scheme) || ReservedScheme(scheme) {
		return Channel{}, channelError(ErrUnknownChannelScheme, uri, "")
	}
	path, err := pathID(rest)
	if err != nil {
		return Channel{}, channelError(ErrUnknownChannelScheme, uri, "")
	}
	session, sub, nested := strings.Cut(path, "/")
	switch {
	case !nested:
		return Channel{Kind: ChannelSession, ID: session, Scheme: scheme}, nil
	case sub == annotationsSuffix:
		return Channel{Kind: ChannelAnnotations, ID: session, Session: session, Scheme: scheme}, nil
	}
	return Channel{}, channelError(ErrUnknownChannelScheme, uri, "")
}

// ValidScheme reports whether s (without the colon) is a URI scheme as
// RFC 3986 defines it: a letter followed by letters, digits, "+", "-" or
// ".".
func ValidScheme(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isAlpha(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// ReservedScheme reports whether a scheme (without the colon) is one that
// AHP or the host route themselves, and so can name neither a session nor
// an agent provider: every ahp-* scheme (the channels, ahp-session
// included, and the host's own such as ahp-changeset-content) and file,
// the scheme of working directories and resources. Schemes compare
// without regard to case, as RFC 3986 says.
func ReservedScheme(scheme string) bool {
	s := strings.ToLower(scheme)
	return strings.HasPrefix(s, "ahp-") || s == "file"
}

// SplitScheme returns the scheme of an absolute URI (without the colon)
// and the rest after the colon; ok is false when uri does not start with
// a valid scheme and a colon.
func SplitScheme(uri string) (scheme, rest string, ok bool) {
	i := strings.IndexByte(uri, ':')
	if i < 0 || !ValidScheme(uri[:i]) {
		return "", "", false
	}
	return uri[:i], uri[i+1:], true
}

// CheckURI checks that uri is an absolute URI: a valid scheme, a colon and
// a non-empty rest made only of characters RFC 3986 allows, at most 4096
// bytes in all.
func CheckURI(uri string) error {
	if len(uri) > maxChannelLen {
		return fmt.Errorf("protocol: URI %q is too long", clip(uri))
	}
	_, rest, ok := SplitScheme(uri)
	switch {
	case !ok:
		return fmt.Errorf("protocol: %q is not an absolute URI (it needs a scheme)", clip(uri))
	case rest == "" || !uriChars(rest, true):
		return fmt.Errorf("protocol: %q is not a valid URI", clip(uri))
	}
	return nil
}

// CheckSessionURI checks that uri can name a new session: an absolute URI
// that is either an ahp-session:/<id> URI or has a scheme that is not
// reserved (a client's own, such as <provider>:/<id>), and is not the URI
// of a channel below a session.
func CheckSessionURI(uri string) error {
	if err := CheckURI(uri); err != nil {
		return err
	}
	c, err := ParseChannel(uri)
	switch {
	case err == nil && c.Kind == ChannelSession:
		return nil
	case err == nil:
		return fmt.Errorf("protocol: %q is the URI of a %s channel", clip(uri), c.Kind)
	case errors.Is(err, ErrMalformedChannel):
		return err
	}
	if scheme, _, _ := SplitScheme(uri); ReservedScheme(scheme) {
		return fmt.Errorf("protocol: %q uses %s, a scheme the host reserves", clip(uri), scheme)
	}
	return nil
}

// uriChars reports whether s holds only characters allowed in a URI by
// RFC 3986 (unreserved, reserved and "%"). "?" and "#" are allowed only when
// query is set.
func uriChars(s string, query bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~:/[]@!$&'()*+,;=%", c) >= 0:
		case c == '?' || c == '#':
			if !query {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// channelError wraps kind with a shortened copy of uri and an optional
// reason.
func channelError(kind error, uri, reason string) error {
	if reason == "" {
		return fmt.Errorf("%w: %q", kind, clip(uri))
	}
	return fmt.Errorf("%w: %q: %s", kind, clip(uri), reason)
}

// clip shortens s for use in an error message, so that hostile input does
// not produce huge errors or logs.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

// A ChannelMessage is a message about one channel: an action envelope,
// or the params of a notification that names its channel. Every generated
// action and notification type with a required "channel" member
// implements it.
type ChannelMessage interface {
	ChannelURI() URI
}
