package terminal

import (
	"fmt"
	"strings"
	"testing"
)

func TestScanner(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   string // events, joined
	}{
		{"plain", []string{"hello"}, "out(hello)"},
		{"strips 633", []string{"a\x1b]633;A\x07b\x1b]633;E;ls -l\x07\x1b]633;C\x07out\x1b]633;D;2\x07"},
			"out(a) prompt out(b) cmd(ls -l) out(out) done(2)"},
		{"split sequence", []string{"x\x1b]63", "3;D;0\x07y"}, "out(x) done(0) out(y)"},
		{"ST terminator and 133", []string{"\x1b]133;A\x1b\\$ \x1b]133;C\x1b\\"}, "prompt out($ ) cmd()"},
		{"title kept in output", []string{"\x1b]0;my title\x07z"}, "out(\x1b]0;my title\x07) title(my title) out(z)"},
		{"osc 7 cwd", []string{"\x1b]7;file://host/tmp/x\x07"}, "out(\x1b]7;file://host/tmp/x\x07) cwd(/tmp/x)"},
		{"633 cwd escaped", []string{"\x1b]633;P;Cwd=/a\\x3bb\x07"}, "cwd(/a;b)"},
		{"utf-8 split", []string{"caf\xc3", "\xa9!"}, "out(caf) out(é!)"},
		{"utf-8 split alone", []string{"\xc3", "\xa9", "\xe2\x82", "\xac"}, "out(é) out(€)"},
		{"not utf-8", []string{"a\xffb", "c\x1b]0;t\xfe\x07\xc3("}, "out(a\uFFFDb) out(c\x1b]0;t\uFFFD\x07) title(t\uFFFD) out(\uFFFD()"},
		{"plain then sequence", []string{"ab", "c\x1b]633;A\x07d"}, "out(ab) out(c) prompt out(d)"},
		{"escaped command line", []string{"\x1b]633;E;echo a\\x3bb\\\\\x07\x1b]633;C\x07"}, `cmd(echo a;b\)`},
		{"other osc passes", []string{"\x1b]8;;http://x\x07link"}, "out(\x1b]8;;http://x\x07link)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s scanner
			var got []string
			for _, c := range tt.chunks {
				s.feed([]byte(c), func(ev Event) { got = append(got, describe(ev)) })
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Fatalf("got  %q\nwant %q", g, tt.want)
			}
		})
	}
}

func describe(ev Event) string {
	switch ev.Kind {
	case Output:
		return "out(" + ev.Data + ")"
	case Title:
		return "title(" + ev.Text + ")"
	case Cwd:
		return "cwd(" + ev.Text + ")"
	case PromptStarted:
		return "prompt"
	case CommandStarted:
		return "cmd(" + ev.Text + ")"
	case CommandFinished:
		if ev.ExitCode == nil {
			return "done()"
		}
		return fmt.Sprintf("done(%d)", *ev.ExitCode)
	}
	return "?"
}
