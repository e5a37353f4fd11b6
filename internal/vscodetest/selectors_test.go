package vscodetest

// Every part of VS Code's UI the test relies on (VS Code 1.139.1, the web
// build in code-server 4.139.1). When VS Code changes its UI, this is the
// file to update; take the new names from the screenshots and the DOM of a
// failing run.
const (
	// selWorkbench is the workbench once it has loaded.
	selWorkbench = `.monaco-workbench`
	// selInputOnEcho is the chat input once the echo agent is its target
	// (its accessible label names the target).
	selInputOnEcho = `.interactive-session .interactive-input-part .native-edit-context[aria-label*="Echo"]`
	// selChatInput is the chat view's prompt editor (a Monaco editor).
	selChatInput = `.interactive-session .interactive-input-part .monaco-editor`
	// selTargetPicker is the chat input's session target picker, showing
	// "Local" until another target is picked.
	selTargetPicker = `.interactive-session a.action-label[aria-label="Local"]`
	// selTargetEcho is ahpd's echo agent among the targets the picker
	// lists; its label is the agent's display name and description.
	selTargetEcho = `.context-view .monaco-list-row[aria-label^="Echo,"]`
	// selTargetLocal is the picker's "Local" target, always listed.
	selTargetLocal = `.context-view .monaco-list-row[aria-label^="Local,"]`
	// selSendEnabled is the chat input's send button, once it can send.
	selSendEnabled = `.interactive-session .interactive-input-part a.action-label.codicon-arrow-up-compact:not(.disabled)`
	// selConfirmAllow is the button that allows a tool call waiting for
	// confirmation ("Allow in this Session"); VS Code shows the widget
	// above the chat input and keeps a hidden copy in the response.
	selConfirmAllow = `.interactive-session .chat-confirmation-widget-buttons a.monaco-button[aria-label^="Allow"]`
	// selShowSessions shows the chat view's sessions sidebar (VS Code's
	// Sessions view).
	selShowSessions = `.part.auxiliarybar a.action-label[aria-label="Show Agent Sessions Sidebar"]`
	// selResponse is one response in the chat list.
	selResponse = `.interactive-session .interactive-item-container.interactive-response`
)

// selSessionRow is the Sessions view's row of the session with this title
// (a session's title is its first prompt).
func selSessionRow(title string) string {
	return `.part.auxiliarybar .monaco-list-row.agent-session-item-row[aria-label*=` + jsString(title) + `]`
}
