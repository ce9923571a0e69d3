package prompts

import (
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
)

// Every denial code the engine can return is explained to the model.
func TestIntentProtocolCoversEveryCode(t *testing.T) {
	p := IntentProtocol()
	for _, c := range engine.Codes() {
		if !strings.Contains(p, "- "+string(c)+": ") {
			t.Errorf("IntentProtocol() does not explain %s", c)
		}
	}
	if !strings.Contains(p, "select_active_intent") {
		t.Error("IntentProtocol() does not name select_active_intent")
	}
}
