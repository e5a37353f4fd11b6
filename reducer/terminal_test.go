package reducer_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

func TestTerminal(t *testing.T) {
	runChannelCases(t, "TerminalState", []channelCase{{
		name:    "input is side-effect only and returns the same state",
		initial: `{"title":"sh","content":[{"type":"unclassified","value":"$ "}],"claim":{"kind":"client","clientId":"c1"}}`,
		actions: []string{`{"type":"terminal/input","data":"ls\r"}`},
		want:    `{"title":"sh","content":[{"type":"unclassified","value":"$ "}],"claim":{"kind":"client","clientId":"c1"}}`,
		same:    true,
	}, {
		name:    "an action of another channel returns the same state",
		initial: `{"title":"sh","content":[],"claim":{"kind":"client","clientId":"c1"}}`,
		actions: []string{`{"type":"changeset/cleared"}`, `{"type":"chat/delta","turnId":"t","partId":"p","content":"x"}`},
		want:    `{"title":"sh","content":[],"claim":{"kind":"client","clientId":"c1"}}`,
		same:    true,
	}, {
		// Terminals guide, "Data Flow": data goes to the tail part only
		// when it is unclassified or a running command; "otherwise" a new
		// unclassified part starts. A part of a kind this package does
		// not know is such an otherwise, and is kept verbatim.
		name:    "data after a part of unknown type starts an unclassified part",
		initial: `{"title":"sh","content":[{"type":"image","src":"x"}],"claim":{"kind":"client","clientId":"c1"}}`,
		actions: []string{`{"type":"terminal/data","data":"$ "}`},
		want:    `{"title":"sh","content":[{"type":"image","src":"x"},{"type":"unclassified","value":"$ "}],"claim":{"kind":"client","clientId":"c1"}}`,
	}, {
		// The reference reducer also starts a part for empty data; doing
		// the same keeps states identical across implementations.
		name:    "empty data on empty content starts an empty unclassified part",
		initial: `{"title":"sh","content":[],"claim":{"kind":"client","clientId":"c1"}}`,
		actions: []string{`{"type":"terminal/data","data":""}`},
		want:    `{"title":"sh","content":[{"type":"unclassified","value":""}],"claim":{"kind":"client","clientId":"c1"}}`,
	}, {
		name: "a second command while one is running takes the following output",
		initial: `{"title":"sh","content":[
			{"type":"command","commandId":"c1","commandLine":"a","output":"x","timestamp":1,"isComplete":false}
		],"claim":{"kind":"client","clientId":"c1"},"supportsCommandDetection":true}`,
		actions: []string{
			`{"type":"terminal/commandExecuted","commandId":"c2","commandLine":"b","timestamp":2}`,
			`{"type":"terminal/data","data":"y"}`,
		},
		want: `{"title":"sh","content":[
			{"type":"command","commandId":"c1","commandLine":"a","output":"x","timestamp":1,"isComplete":false},
			{"type":"command","commandId":"c2","commandLine":"b","output":"y","timestamp":2,"isComplete":false}
		],"claim":{"kind":"client","clientId":"c1"},"supportsCommandDetection":true}`,
	}, {
		// TerminalCommandFinishedAction: exitCode is undefined when the
		// shell did not report one.
		name: "commandFinished without an exit code completes the part",
		initial: `{"title":"sh","content":[
			{"type":"command","commandId":"c1","commandLine":"a","output":"","timestamp":1,"isComplete":false}
		],"claim":{"kind":"client","clientId":"c1"}}`,
		actions: []string{`{"type":"terminal/commandFinished","commandId":"c1"}`},
		want: `{"title":"sh","content":[
			{"type":"command","commandId":"c1","commandLine":"a","output":"","timestamp":1,"isComplete":true}
		],"claim":{"kind":"client","clientId":"c1"}}`,
	}, {
		name: "commandFinished for an unknown command returns the same state",
		initial: `{"title":"sh","content":[
			{"type":"command","commandId":"c1","commandLine":"a","output":"","timestamp":1,"isComplete":false}
		],"claim":{"kind":"client","clientId":"c1"}}`,
		actions: []string{`{"type":"terminal/commandFinished","commandId":"nope","exitCode":1}`},
		want: `{"title":"sh","content":[
			{"type":"command","commandId":"c1","commandLine":"a","output":"","timestamp":1,"isComplete":false}
		],"claim":{"kind":"client","clientId":"c1"}}`,
		same: true,
	}, {
		// cleared empties content even while a command runs: its later
		// output has no command part to go to, and its commandFinished
		// finds nothing to complete.
		name: "clearing during a command sends its later output to an unclassified part",
		initial: `{"title":"sh","content":[
			{"type":"command","commandId":"c1","commandLine":"top","output":"...","timestamp":1,"isComplete":false}
		],"claim":{"kind":"client","clientId":"c1"},"supportsCommandDetection":true}`,
		actions: []string{
			`{"type":"terminal/cleared"}`,
			`{"type":"terminal/data","data":"more"}`,
			`{"type":"terminal/commandFinished","commandId":"c1","exitCode":0}`,
		},
		want: `{"title":"sh","content":[{"type":"unclassified","value":"more"}],
			"claim":{"kind":"client","clientId":"c1"},"supportsCommandDetection":true}`,
	}, {
		// TerminalExitedAction: exitCode is undefined when the process
		// was killed without one; 1.x's lifecycle keeps such an exit
		// (TerminalLifecycleState).
		name:    "exited without an exit code is exited",
		initial: `{"title":"sh","content":[],"lifecycle":{"status":"running"},"claim":{"kind":"client","clientId":"c1"}}`,
		actions: []string{`{"type":"terminal/exited"}`},
		want:    `{"title":"sh","content":[],"lifecycle":{"status":"exited"},"claim":{"kind":"client","clientId":"c1"}}`,
	}, {
		// 1.x: the lifecycle moves to exited, keeping an exit even without
		// a code.
		name:    "exited sets the 1.x lifecycle",
		initial: `{"title":"sh","content":[],"lifecycle":{"status":"running"},"claim":{"kind":"client","clientId":"c1"}}`,
		actions: []string{`{"type":"terminal/exited"}`},
		want:    `{"title":"sh","content":[],"lifecycle":{"status":"exited"},"claim":{"kind":"client","clientId":"c1"}}`,
	}, {
		name:    "exit code 0 is kept",
		initial: `{"title":"sh","content":[],"lifecycle":{"status":"running"},"claim":{"kind":"client","clientId":"c1"}}`,
		actions: []string{`{"type":"terminal/exited","exitCode":0}`},
		want:    `{"title":"sh","content":[],"lifecycle":{"status":"exited","exitCode":0},"claim":{"kind":"client","clientId":"c1"}}`,
	}, {
		// Terminals guide, "Claims and Ownership": the claim is replaced
		// as a whole, here from a backgrounded session claim back to one
		// tied to a tool call ("Session Reclaims a Background Terminal").
		name:    "claimed replaces the whole claim",
		initial: `{"title":"sh","content":[],"claim":{"kind":"session","session":"ahp-session:/s1"}}`,
		actions: []string{`{"type":"terminal/claimed","claim":{"kind":"session","session":"ahp-session:/s1","turnId":"t2","toolCallId":"tc5"}}`},
		want:    `{"title":"sh","content":[],"claim":{"kind":"session","session":"ahp-session:/s1","turnId":"t2","toolCallId":"tc5"}}`,
	}, {
		name:    "resized sets dimensions that were absent and keeps isPty",
		initial: `{"title":"sh","content":[],"claim":{"kind":"client","clientId":"c1"},"isPty":false}`,
		actions: []string{`{"type":"terminal/resized","cols":200,"rows":50}`},
		want:    `{"title":"sh","content":[],"claim":{"kind":"client","clientId":"c1"},"isPty":false,"cols":200,"rows":50}`,
	}})
}

func TestTerminalNilState(t *testing.T) {
	if got := reducer.Terminal(nil, &protocol.TerminalDataAction{Data: "x"}); got != nil {
		t.Errorf("Terminal(nil) = %v, want nil", got)
	}
}

// TestTerminalDataBranches checks that states derived from one state stay
// independent: output appended on one branch never shows in another, nor
// in the state they share, for both kinds of tail part.
func TestTerminalDataBranches(t *testing.T) {
	tails := map[string]protocol.TerminalContentPart{
		"unclassified": &protocol.TerminalUnclassifiedPart{Value: protocol.TextOf("$ ")},
		"command":      &protocol.TerminalCommandPart{CommandID: "c", Output: protocol.TextOf("$ ")},
	}
	for name, tail := range tails {
		t.Run(name, func(t *testing.T) {
			base := &protocol.TerminalState{Content: []protocol.TerminalContentPart{tail}}
			// Grow base first so its text has spare capacity to write into.
			base = reducer.Terminal(base, &protocol.TerminalDataAction{Data: "0"})
			a := reducer.Terminal(base, &protocol.TerminalDataAction{Data: "a"})
			b := reducer.Terminal(base, &protocol.TerminalDataAction{Data: "b"})
			a2 := reducer.Terminal(a, &protocol.TerminalDataAction{Data: "aa"})
			for s, want := range map[*protocol.TerminalState]string{base: "$ 0", a: "$ 0a", b: "$ 0b", a2: "$ 0aaa"} {
				if got := reducer.TerminalOutput(s); got != want {
					t.Errorf("output = %q, want %q", got, want)
				}
			}
		})
	}
}

// TestTerminalConcurrent applies actions to one state from many goroutines,
// as the package documentation allows; run it with -race.
func TestTerminalConcurrent(t *testing.T) {
	base := reducer.Terminal(&protocol.TerminalState{}, &protocol.TerminalDataAction{Data: "$ "})
	const n = 16
	got := make([]*protocol.TerminalState, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s := base
			for range 100 {
				s = reducer.Terminal(s, &protocol.TerminalDataAction{Data: fmt.Sprint(i)})
			}
			got[i] = s
		})
	}
	wg.Wait()
	for i, s := range got {
		want := "$ "
		for range 100 {
			want += fmt.Sprint(i)
		}
		if out := reducer.TerminalOutput(s); out != want {
			t.Errorf("goroutine %d: output %q, want %q", i, out, want)
		}
	}
	if out := reducer.TerminalOutput(base); out != "$ " {
		t.Errorf("base output = %q, want %q", out, "$ ")
	}
}
