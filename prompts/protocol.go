// Package prompts holds what the model reads: the definitions of the tools
// (one JSON Schema each, rendered for the OpenAI and Anthropic function-calling
// dialects), and the system prompt for each mode, with its intent protocol
// section.
package prompts

import "github.com/intentgate/intentgate/prompts/protocol"

// IntentProtocol is the system prompt section that explains intent-bound
// work to the model (protocol.IntentProtocol).
func IntentProtocol() string { return protocol.IntentProtocol() }
