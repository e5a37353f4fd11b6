package host

import (
	"strings"
	"unicode"

	"github.com/ahp-go/ahp/protocol"
)

// defaultSessionTitle is the title of a session nobody has named yet.
const defaultSessionTitle = "New Session"

// maxPromptTitle bounds a title taken from a prompt, in runes.
const maxPromptTitle = 80

// titleFromPromptLocked names a session that still has the default title
// after the first words said in it, as the reference host does: an agent
// that names the session later (ACP session_info_update, say) renames it,
// and so can a client.
func (h *Host) titleFromPromptLocked(s *session, prompt string) {
	ch, ok := h.channels[s.uri]
	if !ok {
		return
	}
	st, ok := ch.state.(*protocol.SessionState)
	if !ok || st.Title != defaultSessionTitle {
		return
	}
	if title := promptTitle(prompt); title != "" {
		h.commitLocked(ch, &protocol.SessionTitleChangedAction{Title: title}, nil)
	}
}

// promptTitle returns the first non-blank line of a prompt, its spaces
// collapsed, cut at a word boundary to at most maxPromptTitle runes.
func promptTitle(prompt string) string {
	var line string
	for l := range strings.SplitSeq(prompt, "\n") {
		if line = strings.Join(strings.Fields(l), " "); line != "" {
			break
		}
	}
	line = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, line)
	r := []rune(line)
	if len(r) <= maxPromptTitle {
		return line
	}
	cut := string(r[:maxPromptTitle-1])
	if i := strings.LastIndexByte(cut, ' '); i > maxPromptTitle/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,.;:") + "…"
}
