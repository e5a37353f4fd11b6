package host

import (
	"context"
	"errors"
	"testing"

	"github.com/ahp-go/ahp/host/internal/check"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// TestStepReadsBeforeChange: Host.locked runs a step's read phase again
// after each read from the store, with what was read at hand, and its
// change once, after the last read; a change that would need the store
// fails with errReadAfterChange and is not run again; a read that fails
// ends the step without its change.
func TestStepReadsBeforeChange(t *testing.T) {
	const chat = "ahp-chat:/stepped"
	st := store.NewMemory()
	defer st.Close()
	ctx := context.Background()
	var ops store.Batch
	for i := range 3 {
		data, err := protocol.Marshal(protocol.Turn{ID: "t" + string(rune('0'+i))})
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, store.PutTurn{Turn: store.Turn{Chat: chat, Ordinal: int64(i), ID: "t", Data: data}})
	}
	if err := st.Write(ctx, ops); err != nil {
		t.Fatal(err)
	}
	h, err := New(&Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ch := &channel{uri: chat, kind: protocol.ChannelChat, channelDomain: channelDomain{chat: chatTurns{base: 3}}}

	for _, tc := range []struct {
		name string
		// reads are the turn ranges the read phase needs, [from, to).
		reads [][2]int64
		// late is a range the change needs that was not read.
		late *[2]int64
		// missing: the change returns a store miss of its own.
		missing     bool
		wantRuns    int // read phases run
		wantChanges int
		wantErr     error // nil, errReadAfterChange, or errAny
	}{
		{"no reads", nil, nil, false, 1, 1, nil},
		{"one read", [][2]int64{{0, 2}}, nil, false, 2, 1, nil},
		{"two reads", [][2]int64{{0, 1}, {1, 3}}, nil, false, 3, 1, nil},
		{"read in the change", [][2]int64{{0, 1}}, &[2]int64{1, 2}, false, 2, 1, errReadAfterChange},
		{"miss from the change", nil, nil, true, 1, 1, errReadAfterChange},
		{"failed read", [][2]int64{{0, 5}}, nil, false, 1, 0, errAny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs, changes := 0, 0
			err := h.locked(ctx, func(rd *storeReads) (change, error) {
				runs++
				var got []protocol.Turn
				for _, r := range tc.reads {
					turns, err := storedTurnsLocked(rd, ch, r[0], r[1])
					if err != nil {
						return nil, err
					}
					got = append(got, turns...)
				}
				return func() error {
					changes++
					if tc.missing {
						return &storeMiss{turns: &turnRange{chat: chat, from: 0, to: 1}}
					}
					if tc.late != nil {
						if _, err := storedTurnsLocked(rd, ch, tc.late[0], tc.late[1]); err != nil {
							return err
						}
					}
					var want int64
					for _, r := range tc.reads {
						want += r[1] - r[0]
					}
					if int64(len(got)) != want {
						t.Errorf("the change saw %d turns, want %d", len(got), want)
					}
					return nil
				}, nil
			})
			switch {
			case tc.wantErr == errAny && err == nil:
				t.Errorf("locked = nil, want an error")
			case tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
				t.Errorf("locked = %v, want %v", err, tc.wantErr)
			}
			var miss *storeMiss
			if errors.As(err, &miss) {
				t.Errorf("locked returned a store miss: %v", err)
			}
			if runs != tc.wantRuns || changes != tc.wantChanges {
				t.Errorf("%d read phases and %d changes, want %d and %d", runs, changes, tc.wantRuns, tc.wantChanges)
			}
		})
	}
}

// errAny stands for any error in TestStepReadsBeforeChange.
var errAny = errors.New("any error")

// TestValidatorsReject: validators answer what the client must fix with a
// *check.Rejection, and what the store must give first with a *storeMiss.
func TestValidatorsReject(t *testing.T) {
	h, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	rd := &storeReads{turns: map[turnRange][]protocol.Turn{}, failed: map[*session]error{}}
	var rej *check.Rejection
	_, err = h.transcriptLocked(rd, &protocol.MessageChatAttachment{Resource: "ahp-chat:/nowhere"})
	if !errors.As(err, &rej) || rej.Reason == "" {
		t.Errorf("an attachment of an unknown chat: %v, want a rejection", err)
	}
	if err := check.Reject(""); err != nil {
		t.Errorf(`check.Reject("") = %v, want nil`, err)
	}
	ch := &channel{uri: "ahp-chat:/old", kind: protocol.ChannelChat, channelDomain: channelDomain{chat: chatTurns{base: 2}}}
	var miss *storeMiss
	if _, err := storedTurnsLocked(rd, ch, 0, 2); !errors.As(err, &miss) {
		t.Errorf("turns not read yet: %v, want a store miss", err)
	}
	rd.sealed = true
	if _, err := storedTurnsLocked(rd, ch, 0, 2); !errors.Is(err, errReadAfterChange) || errors.As(err, &miss) {
		t.Errorf("turns not read, once changing: %v, want errReadAfterChange", err)
	}
}
