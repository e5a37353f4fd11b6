package protocol_test

import (
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

func TestRunCreatedAt(t *testing.T) {
	const at = "2026-12-02T03:00:00.000Z"
	for _, l := range []protocol.AutomationRunLifecycle{
		&protocol.AutomationPendingRunLifecycle{CreatedAt: at},
		&protocol.AutomationRunningRunLifecycle{CreatedAt: at},
		&protocol.AutomationCompletedRunLifecycle{CreatedAt: at},
		&protocol.AutomationFailedRunLifecycle{CreatedAt: at},
		&protocol.AutomationCancelledRunLifecycle{CreatedAt: at},
	} {
		if got := protocol.RunCreatedAt(l); got != at {
			t.Errorf("%T: %q, want %q", l, got, at)
		}
	}
	if got := protocol.RunCreatedAt(nil); got != "" {
		t.Errorf("nil: %q", got)
	}
}
