package agent

// CommandMetaKey is the _meta key of the attachment the host's completions
// give a slash command (a simple attachment labelled "/name"; the value is
// the name). The message's text holds the command already, so agents do
// not add such attachments to the prompt.
const CommandMetaKey = "ahp-go/command"
