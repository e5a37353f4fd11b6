package main

import (
	"strings"
	"sync"

	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/glamour/styles"
)

// markdown returns how replies' markdown is shown: rendered for the
// terminal (emphasis, headings, tables, code blocks) when stdout is one
// that takes colour, as it is otherwise (piped output stays the text the
// agent wrote).
//
// The style is glamour's dark one, or $GLAMOUR_STYLE (a standard style
// name, such as light, or a JSON style file); it is never guessed by
// asking the terminal, which would answer on stdin.
func (a *app) markdown() func(string) string {
	plain := func(s string) string { return s }
	if !a.stdoutTTY || !a.color || a.g.json {
		return plain
	}
	a.mdOnce.Do(func() {
		width := 0
		if a.width != nil {
			width = a.width()
		}
		if width <= 0 || width > 120 {
			width = min(max(width, 80), 120)
		}
		style := glamour.WithStandardStyle(styles.DarkStyle)
		switch s := a.getenv("GLAMOUR_STYLE"); {
		case s == "":
		case styles.DefaultStyles[s] != nil:
			style = glamour.WithStandardStyle(s)
		default:
			style = glamour.WithStylePath(s)
		}
		r, err := glamour.NewTermRenderer(style, glamour.WithWordWrap(width-4), glamour.WithEmoji())
		if err == nil {
			a.md = r
		}
	})
	if a.md == nil {
		return plain
	}
	return func(s string) string {
		a.mdMu.Lock()
		defer a.mdMu.Unlock()
		out, err := a.md.Render(s)
		if err != nil {
			return s
		}
		return strings.Trim(out, "\n")
	}
}

// mdState is the renderer, made once per run.
type mdState struct {
	mdOnce sync.Once
	mdMu   sync.Mutex
	md     *glamour.TermRenderer
}
