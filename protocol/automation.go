package protocol

// RunCreatedAt returns when the automation run a lifecycle describes was
// created: every stage of the lifecycle carries it. It returns "" for a
// lifecycle of no known stage (nil included).
func RunCreatedAt(l AutomationRunLifecycle) string {
	switch l := l.(type) {
	case *AutomationPendingRunLifecycle:
		return l.CreatedAt
	case *AutomationRunningRunLifecycle:
		return l.CreatedAt
	case *AutomationCompletedRunLifecycle:
		return l.CreatedAt
	case *AutomationFailedRunLifecycle:
		return l.CreatedAt
	case *AutomationCancelledRunLifecycle:
		return l.CreatedAt
	}
	return ""
}
