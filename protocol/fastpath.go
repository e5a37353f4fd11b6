package protocol

import (
	"encoding/binary"
	"unicode/utf8"
)

// The fast path of DecodeMessageWith for streamed actions.
//
// Most of what a host sends is "action" notifications carrying a streamed
// chat/delta, chat/reasoning or terminal/data: tens of thousands per long
// answer, to every client. Decoding them token by token with a general
// JSON decoder costs several times what the message is worth, so they
// get a scanner of their own, which accepts exactly the common shape:
//
//	{"jsonrpc":"2.0","method":"action","params":{"channel":"…",
//	 "action":{"type":"chat/delta","turnId":"…","partId":"…","content":"…"},
//	 "serverSeq":123}}
//
// with members in any order (the action's type first), whitespace between
// tokens, and strings without escapes. Anything else (an escape, another
// member, another action type, a member seen twice, anything malformed)
// makes it give up, and the message is decoded by the general decoder,
// which tells every error. So the fast path never accepts what the general
// decoder would refuse, duplicate members included, and it never has to
// explain a failure.
//
// Every string it returns is a substring of one copy of the message: one
// allocation for all of them, which keeps a decoded action at four (that
// copy, the notification, the envelope and the action). The copy lives as
// long as any of those strings does; the messages taken this way are
// small.

// maxFastMessage is the largest message the fast path takes, so that a
// string kept from it holds no more than this alive.
const maxFastMessage = 4 << 10

// fastScanner reads a message from data; s is a copy of data made once the
// message is known to qualify, and strings are cut from it.
type fastScanner struct {
	data []byte
	i    int
}

func (s *fastScanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next skips whitespace and consumes c if it comes next.
func (s *fastScanner) next(c byte) bool {
	s.space()
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string without escapes and returns the offsets of its
// content. It fails on an escape, a control character or invalid UTF-8.
func (s *fastScanner) str() (start, end int, ok bool) {
	if !s.next('"') {
		return 0, 0, false
	}
	data, i := s.data, s.i
	start = i
	ascii := true
	for {
		// Eight bytes at a time while none of them needs a look.
		for i+8 <= len(data) && !fastSpecial(binary.LittleEndian.Uint64(data[i:])) {
			i += 8
		}
		for i < len(data) && fastPlain[data[i]] {
			i++
		}
		if i == len(data) {
			return 0, 0, false
		}
		switch c := data[i]; {
		case c == '"':
			s.i = i + 1
			if !ascii && !utf8.Valid(data[start:i]) {
				return 0, 0, false
			}
			return start, i, true
		case c >= 0x80:
			ascii = false
			i++
		default: // a backslash or a control character
			return 0, 0, false
		}
	}
}

// fastSpecial reports whether any of the eight bytes in x is a quote, a
// backslash, a control character or not ASCII (the classic bit tricks:
// a byte below n makes (x - n) borrow into its high bit).
func fastSpecial(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) &^ v & highs }
	below := (x - 0x20*ones) &^ x & highs
	return below|zero(x^('"'*ones))|zero(x^('\\'*ones))|x&highs != 0
}

// fastPlain tells the bytes a string may hold as they are: neither a
// quote, a backslash, a control character nor part of a multi-byte
// character.
var fastPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// lit consumes l if the data at the cursor starts with it, whitespace
// included: no skipping.
func (s *fastScanner) lit(l string) bool {
	if len(s.data)-s.i >= len(l) && string(s.data[s.i:s.i+len(l)]) == l {
		s.i += len(l)
		return true
	}
	return false
}

// is reads a string and reports whether it is want.
func (s *fastScanner) is(want string) bool {
	start, end, ok := s.str()
	return ok && string(s.data[start:end]) == want
}

// integer reads a JSON number that is an integer within int64.
func (s *fastScanner) integer() (int64, bool) {
	s.space()
	data, i := s.data, s.i
	neg := i < len(data) && data[i] == '-'
	if neg {
		i++
	}
	digits := i
	var u uint64
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		u = u*10 + uint64(data[i]-'0') // exact for up to 19 digits
		i++
	}
	n := i - digits
	switch {
	case n == 0, n > 1 && data[digits] == '0':
		return 0, false // no digits, or a leading zero
	case i < len(data) && (data[i] == '.' || data[i] == 'e' || data[i] == 'E'):
		return 0, false
	case n > 18: // near the limits of int64: let the careful parser decide
		s.i = i
		return rpcParseInt(data[digits-b2i(neg) : i])
	}
	s.i = i
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

// b2i is 1 for true.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// members reads the members of an object whose opening brace has been
// read, calling member with each name's offsets; member reads the value
// and reports the member's bit. It returns the bits seen. A name seen
// twice fails, as does a member that member refuses.
func (s *fastScanner) members(member func(start, end int) (bit uint8, ok bool)) (seen uint8, ok bool) {
	if s.next('}') {
		return 0, true
	}
	for {
		start, end, ok := s.str()
		if !ok || !s.next(':') {
			return 0, false
		}
		bit, ok := member(start, end)
		if !ok || seen&bit != 0 {
			return 0, false
		}
		seen |= bit
		if s.next('}') {
			return seen, true
		}
		if !s.next(',') {
			return 0, false
		}
	}
}

// fastScan reads data as an "action" notification of the common shape,
// without allocating. It returns the envelope as offsets, and where the
// params are in data.
func fastScan(data []byte) (env fastEnvelope, params [2]int, ok bool) {
	if len(data) > maxFastMessage {
		return env, params, false
	}
	if env, params, ok = fastScanCompact(data); ok {
		return env, params, true
	}
	s := &fastScanner{data: data}
	if !s.next('{') {
		return env, params, false
	}
	var methodSeen bool
	seen, ok := s.members(func(start, end int) (uint8, bool) {
		switch string(data[start:end]) {
		case "jsonrpc":
			return 1, s.is("2.0")
		case "method":
			methodSeen = true
			return 2, s.is("action")
		case "params":
			// The method must come first, as paramsFor chooses by it.
			if !methodSeen {
				return 0, false
			}
			s.space()
			params[0] = s.i
			if !s.next('{') || !env.read(s) {
				return 0, false
			}
			params[1] = s.i
			return 4, true
		}
		return 0, false
	})
	if !ok || seen != 7 {
		return env, params, false
	}
	if s.space(); s.i != len(data) {
		return env, params, false
	}
	return env, params, true
}

// A host encodes the members of a message in one order, without
// whitespace: the order of the schema, which ahpd's own encoder follows.
// Such a message is matched against that layout first, piece by piece,
// so that only the values are scanned. The layout fixes every member
// name, so nothing in it can be a duplicate; anything that differs
// (another order, whitespace, another member) goes to the scanner above.
const compactHead = `{"jsonrpc":"2.0","method":"action","params":`

// fastCompactFields are the action members of each type in that order,
// each with the punctuation before its value.
var fastCompactFields = [...][]string{
	fastDelta:        {`,"turnId":`, `,"partId":`, `,"content":`},
	fastReasoning:    {`,"turnId":`, `,"partId":`, `,"content":`},
	fastTerminalData: {`,"data":`},
}

// fastScanCompact is fastScan for a message in the compact layout.
func fastScanCompact(data []byte) (env fastEnvelope, params [2]int, ok bool) {
	s := &fastScanner{data: data}
	if !s.lit(compactHead) {
		return env, params, false
	}
	params[0] = s.i
	if !s.lit("{") || !env.readCompact(s) {
		return env, params, false
	}
	params[1] = s.i
	return env, params, s.lit("}") && s.i == len(data)
}

// readCompact reads the members of an envelope in the compact layout,
// after its opening brace, up to and including its closing one.
func (e *fastEnvelope) readCompact(s *fastScanner) bool {
	var ok bool
	if !s.lit(`"channel":`) {
		return false
	}
	if e.channel[0], e.channel[1], ok = s.str(); !ok || !s.lit(`,"action":{"type":"`) {
		return false
	}
	switch {
	case s.lit(`chat/delta"`):
		e.kind = fastDelta
	case s.lit(`chat/reasoning"`):
		e.kind = fastReasoning
	case s.lit(`terminal/data"`):
		e.kind = fastTerminalData
	default:
		return false
	}
	for i, name := range fastCompactFields[e.kind] {
		if !s.lit(name) {
			return false
		}
		if e.fields[i][0], e.fields[i][1], ok = s.str(); !ok {
			return false
		}
	}
	if !s.lit(`},"serverSeq":`) {
		return false
	}
	e.seq, ok = s.integer()
	return ok && s.lit("}")
}

// fastActionNotification decodes data as an "action" notification when it
// has the common shape and paramsFor asks for an ActionEnvelope; ok is
// false otherwise, and nothing was changed.
func fastActionNotification(data []byte, paramsFor func(string) any) (msg JSONRPCMessage, decoded any, ok bool) {
	env, params, ok := fastScan(data)
	if !ok {
		return JSONRPCMessage{}, nil, false
	}
	target, isEnv := paramsFor("action").(*ActionEnvelope)
	if !isEnv || target == nil {
		return JSONRPCMessage{}, nil, false
	}
	env.fill(target, string(data)) // every string is cut from this one copy
	n := &Notification{Method: "action", Params: data[params[0]:params[1]:params[1]]}
	return JSONRPCMessage{Notification: n}, target, true
}

// fastNotification is DecodeMessage for an "action" notification of the
// common shape: the message is checked, and its params left encoded.
func fastNotification(data []byte) (JSONRPCMessage, bool) {
	_, params, ok := fastScan(data)
	if !ok {
		return JSONRPCMessage{}, false
	}
	return JSONRPCMessage{Notification: &Notification{Method: "action", Params: data[params[0]:params[1]:params[1]]}}, true
}

// fastDecodeEnvelope decodes data into env when it is an ActionEnvelope of
// the common shape, and reports whether it was; env is unchanged otherwise.
func fastDecodeEnvelope(data []byte, env *ActionEnvelope) bool {
	if len(data) > maxFastMessage {
		return false
	}
	s := &fastScanner{data: data}
	var fe fastEnvelope
	if !s.lit("{") || !fe.readCompact(s) || s.i != len(data) {
		s.i, fe = 0, fastEnvelope{}
		if !s.next('{') || !fe.read(s) {
			return false
		}
	}
	if s.space(); s.i != len(data) {
		return false
	}
	fe.fill(env, string(data))
	return true
}

// fastEnvelope is an ActionEnvelope as offsets into the message, read
// before anything is allocated.
type fastEnvelope struct {
	channel [2]int
	seq     int64
	kind    fastKind
	fields  [3][2]int // the action's string members, in fastFields order
}

type fastKind uint8

const (
	fastNone fastKind = iota
	fastDelta
	fastReasoning
	fastTerminalData
)

// fastFields names the string members of each action type the fast path
// takes; all of them are required.
var fastFields = [...][]string{
	fastDelta:        {"turnId", "partId", "content"},
	fastReasoning:    {"turnId", "partId", "content"},
	fastTerminalData: {"data"},
}

// read reads the members of the envelope object after its opening brace.
func (e *fastEnvelope) read(s *fastScanner) bool {
	seen, ok := s.members(func(start, end int) (uint8, bool) {
		var good bool
		switch string(s.data[start:end]) {
		case "channel":
			e.channel[0], e.channel[1], good = s.str()
			return 1, good
		case "serverSeq":
			e.seq, good = s.integer()
			return 2, good
		case "action":
			return 4, s.next('{') && e.readAction(s)
		}
		return 0, false
	})
	return ok && seen == 7
}

// readAction reads the members of an action object after its opening
// brace: its type first, then the string members of that type.
func (e *fastEnvelope) readAction(s *fastScanner) bool {
	start, end, ok := s.str()
	if !ok || string(s.data[start:end]) != "type" || !s.next(':') {
		return false
	}
	start, end, ok = s.str()
	if !ok {
		return false
	}
	switch string(s.data[start:end]) {
	case "chat/delta":
		e.kind = fastDelta
	case "chat/reasoning":
		e.kind = fastReasoning
	case "terminal/data":
		e.kind = fastTerminalData
	default:
		return false
	}
	names := fastFields[e.kind]
	var seen uint8
	for s.next(',') {
		start, end, ok := s.str()
		if !ok || !s.next(':') {
			return false
		}
		i := 0
		for i < len(names) && names[i] != string(s.data[start:end]) {
			i++
		}
		if i == len(names) || seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		if e.fields[i][0], e.fields[i][1], ok = s.str(); !ok {
			return false
		}
	}
	return s.next('}') && seen == 1<<len(names)-1
}

// fill sets env to the envelope, cutting its strings from text, a copy
// of the scanned data.
func (e *fastEnvelope) fill(env *ActionEnvelope, text string) {
	cut := func(r [2]int) string { return text[r[0]:r[1]] }
	*env = ActionEnvelope{Channel: cut(e.channel), ServerSeq: e.seq, Action: e.build(cut)}
}

// build makes the action, cutting its strings with cut.
func (e *fastEnvelope) build(cut func([2]int) string) StateAction {
	switch e.kind {
	case fastDelta:
		return &ChatDeltaAction{TurnID: cut(e.fields[0]), PartID: cut(e.fields[1]), Content: cut(e.fields[2])}
	case fastReasoning:
		return &ChatReasoningAction{TurnID: cut(e.fields[0]), PartID: cut(e.fields[1]), Content: cut(e.fields[2])}
	case fastTerminalData:
		return &TerminalDataAction{Data: cut(e.fields[0])}
	}
	return nil
}
