package automation

import (
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

func deleteRecord(kind, key string) store.Op { return store.DeleteRecord{Kind: kind, Key: key} }

// preload loads the time zones the queued actions name, without the
// service's lock, so that applying them reads no file while a caller
// holding the host's lock could wait for that lock.
func (s *Service) preload(q []queued) {
	for _, item := range q {
		var ts []protocol.AutomationTrigger
		switch a := item.action.(type) {
		case *protocol.AutomationCreateRequestedAction:
			ts = a.Definition.Triggers
		case *protocol.AutomationUpdateRequestedAction:
			ts = a.Changes.Triggers
		}
		for _, t := range ts {
			st, ok := t.(*protocol.AutomationScheduleTrigger)
			if !ok {
				continue
			}
			s.mu.Lock()
			_, have := s.locs[st.Schedule.TimeZone]
			s.mu.Unlock()
			if have {
				continue
			}
			if loc, err := time.LoadLocation(st.Schedule.TimeZone); err == nil {
				s.mu.Lock()
				s.locs[st.Schedule.TimeZone] = loc
				s.mu.Unlock()
			}
		}
	}
}
