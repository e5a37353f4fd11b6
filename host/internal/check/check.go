// Package check holds the host's generic validators: the checks of what a
// client sends that depend on the protocol's shapes (required and
// well-typed members, URIs, names) and not on the state of a session or
// chat. The domain's rules stay in package host; they return the same
// Rejection, so that callers handle every refusal alike.
//
// Contract: a validator returns nil, or a *Rejection whose Reason says,
// for the client, what to fix (quoting, clipped, what it sent). A
// Rejection is never the host failing: callers tell it apart from other
// errors (a store miss, a failed read) with errors.As. The validators
// read nothing but their arguments and are safe for concurrent use.
package check

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ahp-go/ahp/protocol"
)

// A Kind is the sort of rule a Rejection reports.
type Kind int

const (
	// Rule: a rule of the domain (a session's or chat's state, a
	// capability) refuses what the client sent.
	Rule Kind = iota
	// Member: required members are missing or of the wrong shape.
	Member
	// URI: a URI is not well-formed.
	URI
	// Name: a name cannot serve its purpose (an agent provider that is
	// not a URI scheme).
	Name
)

func (k Kind) String() string {
	switch k {
	case Rule:
		return "rule"
	case Member:
		return "member"
	case URI:
		return "URI"
	case Name:
		return "name"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// A Rejection is why the host refuses what a client sent (an action, a
// message, a URI): the client's to fix, and told to it, as the reason of
// a rejected action's echo or in an error's message.
type Rejection struct {
	Kind   Kind
	Reason string
}

func (r *Rejection) Error() string { return r.Reason }

// Reject returns reason as a Rule *Rejection, nil when it is "".
func Reject(reason string) error {
	if reason == "" {
		return nil
	}
	return &Rejection{Kind: Rule, Reason: reason}
}

// Rejectf returns a Rule *Rejection with a formatted reason.
func Rejectf(format string, args ...any) error {
	return &Rejection{Kind: Rule, Reason: fmt.Sprintf(format, args...)}
}

// Members rejects an action of type actionType whose decoding found
// required members absent or of the wrong shape (missing, nil when none),
// sent by a client speaking version. A client at a version before 0.9
// (the 0.x shapes) may leave out the members 1.x made required.
func Members(version, actionType string, missing *protocol.MissingError) error {
	if missing == nil {
		return nil
	}
	var err error = missing
	if v, perr := protocol.ParseVersion(version); perr == nil && v.Legacy() {
		soft := softBefore1[actionType]
		err = missing.Without(func(path string) bool { return slices.Contains(soft, path) })
	}
	if err == nil {
		return nil
	}
	m := err.(*protocol.MissingError)
	var reasons []string
	switch len(m.Paths) {
	case 0:
	case 1:
		reasons = append(reasons, fmt.Sprintf("required member %s is missing", m.Paths[0]))
	default:
		reasons = append(reasons, fmt.Sprintf("required members %s are missing", strings.Join(m.Paths, ", ")))
	}
	for _, inv := range m.Invalid {
		reasons = append(reasons, "member "+inv.String())
	}
	if len(reasons) == 0 {
		return nil
	}
	return &Rejection{Kind: Member, Reason: strings.Join(reasons, "; ")}
}

// softBefore1 lists, per client action type, the members the 1.x schema
// requires that versions before 1.0 do not send.
var softBefore1 = map[string][]string{
	"session/customizationToggled": {"action.enablement"},
	"annotations/set":              {"action.annotation.origin"},
	"terminal/claimed":             {"action.claim.chat"},
}

// ChannelURI checks a channel URI a client names: a well-formed AHP
// channel URI, or any other absolute URI (a session a client named, as
// VS Code names them with the agent's provider as the scheme).
func ChannelURI(uri string) error {
	_, err := protocol.ParseChannel(uri)
	if err != nil && errors.Is(err, protocol.ErrUnknownChannelScheme) {
		err = protocol.CheckURI(uri)
	}
	if err != nil {
		return &Rejection{Kind: URI, Reason: err.Error()}
	}
	return nil
}

// Provider refuses agent provider names that cannot be the scheme of the
// URIs of their sessions: those that are not URI schemes (RFC 3986), that
// have upper-case letters (schemes compare without regard to case, and
// clients may lower-case them), or that the host reserves.
func Provider(provider string) error {
	var reason string
	switch {
	case !protocol.ValidScheme(provider):
		reason = fmt.Sprintf("agent provider %q is not a valid URI scheme (a letter, then letters, digits, '+', '-' or '.'), which it must be to name its sessions", provider)
	case strings.ToLower(provider) != provider:
		reason = fmt.Sprintf("agent provider %q has upper-case letters; use %q, as URI schemes are lower-case", provider, strings.ToLower(provider))
	case protocol.ReservedScheme(provider):
		reason = fmt.Sprintf("agent provider %q clashes with a URI scheme the host uses for its own channels or files", provider)
	default:
		return nil
	}
	return &Rejection{Kind: Name, Reason: reason}
}
