package ipc

import (
	"encoding/json"
	"strings"
	"testing"
)

// Configuration names each setting as Roo Code does, by provider, and
// refuses what a server would refuse.
func TestStartSettingsConfiguration(t *testing.T) {
	for _, tc := range []struct {
		s    StartSettings
		want map[string]any
		err  string
	}{
		{s: StartSettings{Provider: "openai", Model: "m", BaseURL: "http://x"},
			want: map[string]any{"apiProvider": "openai", "openAiModelId": "m", "openAiBaseUrl": "http://x"}},
		{s: StartSettings{Model: "claude", Extra: `{"apiProvider":"ollama"}`},
			want: map[string]any{"apiProvider": "ollama", "ollamaModelId": "claude"}},
		{s: StartSettings{Model: "claude"}, want: map[string]any{"apiModelId": "claude"}},
		{s: StartSettings{AutoApprove: []string{"read", " edit"}, MaxRequests: 3},
			want: map[string]any{"autoApprovalEnabled": true, "alwaysAllowReadOnly": true, "alwaysAllowWrite": true, "allowedMaxRequests": 3.0}},
		{s: StartSettings{AutoApprove: []string{"everything"}}, err: `--auto-approve "everything"`},
		{s: StartSettings{Extra: `[1]`}, err: "--config must be a JSON object"},
		{s: StartSettings{Extra: `null`}, err: "--config must be a JSON object"},
	} {
		raw, err := tc.s.Configuration()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: err %v, want %q", tc.s, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc.s, err)
			continue
		}
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%+v: %s = %v, want %v (all: %s)", tc.s, k, got[k], v, raw)
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("%+v: %s, want only %v", tc.s, raw, tc.want)
		}
	}
}
