// Package datagen turns the spec's data files (data/methods.json,
// data/versions.json and data/action-origin.json) into the Go tables of the
// protocol package: the supported versions, every action type with its
// channel scope, origin and introducing version, the version of every server
// notification, and the JSON-RPC method table.
//
// It is the library behind the gendata command that go generate runs in the
// protocol package; tests call Generate to check that the committed output
// is current. See ../README.md.
package datagen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json"
)

// Input files, relative to the spec folder, in the order the generated
// header lists them.
const (
	methodsFile      = "data/methods.json"
	versionsFile     = "data/versions.json"
	actionOriginFile = "data/action-origin.json"
)

// Inputs lists the files Generate reads from the spec folder.
var Inputs = []string{methodsFile, versionsFile, actionOriginFile}

// LegacyInput names the 0.8.0 pack's versions file in the output's header.
const LegacyInput = "0.8.0 pack data/versions.json"

// LegacyMethodsInput names the 0.8.0 pack's methods file in the output's
// header: the methods it lists are the ones versions before 0.9.0 know.
const LegacyMethodsInput = "0.8.0 pack data/methods.json"

// input is one data file read from the spec folder.
type input struct {
	Name   string // relative to the spec folder
	SHA256 string // hex digest of its bytes
	data   []byte
}

func readInput(specDir, name string) (input, error) {
	data, err := os.ReadFile(filepath.Join(specDir, filepath.FromSlash(name)))
	if err != nil {
		return input{}, err
	}
	sum := sha256.Sum256(data)
	return input{Name: name, SHA256: hex.EncodeToString(sum[:]), data: data}, nil
}

// versionsDoc is the part of data/versions.json the generator uses.
type versionsDoc struct {
	ActionIntroducedIn       map[string]string `json:"ACTION_INTRODUCED_IN"`
	NotificationIntroducedIn map[string]string `json:"NOTIFICATION_INTRODUCED_IN"`
	ProtocolVersion          string            `json:"PROTOCOL_VERSION"`
	SupportedVersions        []string          `json:"SUPPORTED_PROTOCOL_VERSIONS"`
}

// actionOriginDoc is the part of data/action-origin.json the generator uses.
type actionOriginDoc struct {
	Count                int             `json:"count"`
	Actions              []actionEntry   `json:"actions"`
	IsClientDispatchable map[string]bool `json:"isClientDispatchable"`
}

type actionEntry struct {
	Type               string `json:"type"`
	Scope              string `json:"scope"`
	ClientDispatchable bool   `json:"clientDispatchable"`
	Origin             string `json:"origin"`
}

// methodsDoc is the part of data/methods.json the generator uses.
type methodsDoc struct {
	Counts  map[string]int `json:"counts"`
	Methods []methodEntry  `json:"methods"`
}

type methodEntry struct {
	Method         string   `json:"method"`
	Maps           []string `json:"maps"`
	Kind           string   `json:"kind"`
	Params         string   `json:"params"`
	Result         string   `json:"result"`
	ParamsChannel  string   `json:"paramsChannel"`
	ClientToServer bool     `json:"clientToServer"`
	ServerToClient bool     `json:"serverToClient"`
	HasID          bool     `json:"hasId"`
}

// The four method maps of methods.json.
const (
	commandMap            = "CommandMap"
	serverCommandMap      = "ServerCommandMap"
	clientNotificationMap = "ClientNotificationMap"
	serverNotificationMap = "ServerNotificationMap"
)

// actionNotification is the server notification that carries actions; it
// is versioned per action rather than as a method.
const actionNotification = "action"

// scopeKinds maps the scope names of action-origin.json to the
// protocol.ChannelKind constants.
var scopeKinds = map[string]string{
	"root":          "ChannelRoot",
	"session":       "ChannelSession",
	"chat":          "ChannelChat",
	"terminal":      "ChannelTerminal",
	"changeset":     "ChannelChangeset",
	"annotations":   "ChannelAnnotations",
	"resourceWatch": "ChannelResourceWatch",
	"canvas":        "ChannelCanvas",
	"automation":    "ChannelAutomation",
	"automationRun": "ChannelAutomationRun",
}

// originSides maps the origin names of action-origin.json to the
// protocol.Side constants.
var originSides = map[string]string{
	"client": "ClientSide",
	"server": "ServerSide",
}

func decode(in input, v any) error {
	if err := json.Unmarshal(in.data, v); err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	return nil
}

// version is a parsed MAJOR.MINOR.PATCH string.
type version [3]uint64

var versionRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

func parseVersion(s string) (version, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return version{}, fmt.Errorf("invalid version %q", s)
	}
	var v version
	for i := range v {
		n, err := strconv.ParseUint(m[i+1], 10, 64)
		if err != nil {
			return version{}, fmt.Errorf("invalid version %q: %w", s, err)
		}
		v[i] = n
	}
	return v, nil
}

func (v version) compare(w version) int { return slices.Compare(v[:], w[:]) }

// checkVersions validates the version list: well formed, strictly
// descending, none newer than the protocol version, and, for the 0.8.0
// pack (headed), headed by it. The 1.x list holds released baselines
// below the development version.
func checkVersions(doc *versionsDoc, headed bool) error {
	proto, err := parseVersion(doc.ProtocolVersion)
	if err != nil {
		return fmt.Errorf("%s: PROTOCOL_VERSION: %w", versionsFile, err)
	}
	if len(doc.SupportedVersions) == 0 || headed && doc.SupportedVersions[0] != doc.ProtocolVersion {
		return fmt.Errorf("%s: supported versions %v do not start with PROTOCOL_VERSION %q",
			versionsFile, doc.SupportedVersions, doc.ProtocolVersion)
	}
	if v, err := parseVersion(doc.SupportedVersions[0]); err == nil && v.compare(proto) > 0 {
		return fmt.Errorf("%s: supported version %q is newer than PROTOCOL_VERSION %q",
			versionsFile, doc.SupportedVersions[0], doc.ProtocolVersion)
	}
	var prev version
	for i, s := range doc.SupportedVersions {
		v, err := parseVersion(s)
		if err != nil {
			return fmt.Errorf("%s: supported versions: %w", versionsFile, err)
		}
		if i > 0 && v.compare(prev) >= 0 {
			return fmt.Errorf("%s: supported versions are not strictly descending at %q", versionsFile, s)
		}
		prev = v
	}
	return nil
}

// checkLegacy checks that the 0.8.0 pack is older than the 1.x one and
// that the 1.x tables date every action and notification it lists alike.
func checkLegacy(current, legacy *versionsDoc) error {
	cur, _ := parseVersion(current.SupportedVersions[len(current.SupportedVersions)-1])
	old, _ := parseVersion(legacy.ProtocolVersion)
	if old.compare(cur) >= 0 {
		return fmt.Errorf("%s: PROTOCOL_VERSION %s is not older than every 1.x baseline", LegacyInput, legacy.ProtocolVersion)
	}
	for _, table := range []struct {
		what     string
		old, cur map[string]string
	}{
		{"action", legacy.ActionIntroducedIn, current.ActionIntroducedIn},
		{"notification", legacy.NotificationIntroducedIn, current.NotificationIntroducedIn},
	} {
		for name, v := range table.old {
			if table.cur[name] != v {
				return fmt.Errorf("%s: %s %s introduced in %s, but %s in %s", LegacyInput, table.what, name, v, table.cur[name], versionsFile)
			}
		}
	}
	return nil
}

// checkActions validates the action list against its own dispatchability
// table and against the introducing versions.
func checkActions(doc *actionOriginDoc, introduced map[string]string) error {
	if len(doc.Actions) != doc.Count {
		return fmt.Errorf("%s: count is %d but %d actions are listed", actionOriginFile, doc.Count, len(doc.Actions))
	}
	seen := map[string]bool{}
	for _, a := range doc.Actions {
		switch {
		case seen[a.Type]:
			return fmt.Errorf("%s: action %q listed twice", actionOriginFile, a.Type)
		case scopeKinds[a.Scope] == "":
			return fmt.Errorf("%s: action %q: unknown scope %q", actionOriginFile, a.Type, a.Scope)
		case originSides[a.Origin] == "":
			return fmt.Errorf("%s: action %q: unknown origin %q", actionOriginFile, a.Type, a.Origin)
		}
		if d, ok := doc.IsClientDispatchable[a.Type]; !ok || d != a.ClientDispatchable {
			return fmt.Errorf("%s: action %q: isClientDispatchable disagrees with the action list", actionOriginFile, a.Type)
		}
		if _, err := parseVersion(introduced[a.Type]); err != nil {
			return fmt.Errorf("%s: action %q: ACTION_INTRODUCED_IN: %w", versionsFile, a.Type, err)
		}
		seen[a.Type] = true
	}
	if len(doc.IsClientDispatchable) != len(seen) {
		return fmt.Errorf("%s: isClientDispatchable lists actions missing from the action list", actionOriginFile)
	}
	for t := range introduced {
		if !seen[t] {
			return fmt.Errorf("%s: ACTION_INTRODUCED_IN names %q, which %s does not list", versionsFile, t, actionOriginFile)
		}
	}
	return nil
}

// checkMethods validates the method list: map membership agrees with the
// direction and kind flags and with the published counts, and every server
// notification but "action" has an introducing version.
func checkMethods(doc *methodsDoc, notifIntroduced map[string]string) error {
	counts := map[string]int{}
	seen := map[string]bool{}
	serverNotifs := map[string]bool{}
	for _, m := range doc.Methods {
		if seen[m.Method] {
			return fmt.Errorf("%s: method %q listed twice", methodsFile, m.Method)
		}
		seen[m.Method] = true
		if err := checkMethod(m); err != nil {
			return fmt.Errorf("%s: method %q: %w", methodsFile, m.Method, err)
		}
		for _, name := range m.Maps {
			counts[name]++
		}
		if slices.Contains(m.Maps, serverNotificationMap) && m.Method != actionNotification {
			serverNotifs[m.Method] = true
			if _, err := parseVersion(notifIntroduced[m.Method]); err != nil {
				return fmt.Errorf("%s: notification %q: NOTIFICATION_INTRODUCED_IN: %w", versionsFile, m.Method, err)
			}
		}
	}
	for name, n := range doc.Counts {
		if counts[name] != n {
			return fmt.Errorf("%s: counts say %s has %d methods, the list has %d", methodsFile, name, n, counts[name])
		}
	}
	for name := range notifIntroduced {
		if !serverNotifs[name] {
			return fmt.Errorf("%s: NOTIFICATION_INTRODUCED_IN names %q, which is not a server notification", versionsFile, name)
		}
	}
	return nil
}

// checkMethod checks that one method's flags agree with the maps it is in.
func checkMethod(m methodEntry) error {
	in := func(name string) bool { return slices.Contains(m.Maps, name) }
	for _, name := range m.Maps {
		switch name {
		case commandMap, serverCommandMap, clientNotificationMap, serverNotificationMap:
		default:
			return fmt.Errorf("unknown map %q", name)
		}
	}
	notification := m.Kind == "notification"
	switch {
	case m.Kind != "request" && !notification:
		return fmt.Errorf("unknown kind %q", m.Kind)
	case m.HasID == notification:
		return fmt.Errorf("hasId is %v for a %s", m.HasID, m.Kind)
	case m.ClientToServer != (in(commandMap) || in(clientNotificationMap)):
		return fmt.Errorf("clientToServer disagrees with its maps %v", m.Maps)
	case m.ServerToClient != (in(serverCommandMap) || in(serverNotificationMap)):
		return fmt.Errorf("serverToClient disagrees with its maps %v", m.Maps)
	case notification != (in(clientNotificationMap) || in(serverNotificationMap)):
		return fmt.Errorf("kind %q disagrees with its maps %v", m.Kind, m.Maps)
	case in(serverCommandMap) && !in(commandMap):
		return fmt.Errorf("a server request must also be a client request")
	case !isGoName(m.Params):
		return fmt.Errorf("params type %q is not a Go identifier", m.Params)
	case notification && m.Result != "":
		return fmt.Errorf("a notification has result %q", m.Result)
	case !notification && m.Result != "null" && !isGoName(m.Result):
		return fmt.Errorf("result type %q is not a Go identifier", m.Result)
	}
	if _, err := rootOnly(m.ParamsChannel); err != nil {
		return err
	}
	return nil
}

// rootOnly interprets paramsChannel: the quoted root URI pins the channel,
// "URI" allows any channel.
func rootOnly(paramsChannel string) (bool, error) {
	switch paramsChannel {
	case "'ahp-root://'":
		return true, nil
	case "URI":
		return false, nil
	}
	return false, fmt.Errorf("unknown paramsChannel %q", paramsChannel)
}

var goNameRE = regexp.MustCompile(`^[A-Z][A-Za-z0-9_]*$`)

func isGoName(s string) bool { return goNameRE.MatchString(s) }
