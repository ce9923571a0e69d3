package ipc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Options are the settings of one task that a StartNewTask configuration
// chooses, in the agent's terms. Zero values mean "the agent's default".
type Options struct {
	// Provider is "anthropic" or "openai" (any OpenAI-compatible endpoint).
	Provider string
	Model    string
	BaseURL  string
	// APIKey comes from the configuration only when the client sent one;
	// otherwise the agent reads its usual environment variables.
	APIKey string
	Mode   string

	// AutoApprove lists the groups whose asks are approved without asking:
	// read, edit, command, mcp, browser, modes, subtasks, followup, todo.
	// Only set when autoApprovalEnabled is true, as in Roo Code, where the
	// per-group switches do nothing while the master switch is off.
	AutoApprove []string
	// FollowupTimeout is how long a follow-up question waits before its first
	// suggestion is taken (when followup is auto-approved).
	FollowupTimeout time.Duration
	// MaxRequests caps the auto-approved requests; 0 is no cap.
	MaxRequests int
	// MaxMistakes is the consecutive-mistake limit; 0 is the default.
	MaxMistakes int
	// AllowedCommands and DeniedCommands are command prefixes.
	AllowedCommands []string
	DeniedCommands  []string
	// CommandTimeout bounds one command; 0 is the default.
	CommandTimeout time.Duration
	// OutputLineLimit bounds the command output shown to the model.
	OutputLineLimit int
	Temperature     *float64
	MaxTokens       int
	// CustomInstructions are appended to the system prompt.
	CustomInstructions string
	// MCP and Browser enable those tool groups when set.
	MCP     *bool
	Browser *bool
}

// settings is the subset of rooCodeSettingsSchema that maps onto Options.
// Every other setting is ignored, as zod's default object strips unknown
// keys.
type settings struct {
	APIProvider       *string `json:"apiProvider"`
	APIModelID        *string `json:"apiModelId"`
	OpenAIModelID     *string `json:"openAiModelId"`
	OpenRouterModelID *string `json:"openRouterModelId"`
	OllamaModelID     *string `json:"ollamaModelId"`
	LMStudioModelID   *string `json:"lmStudioModelId"`

	AnthropicBaseURL    *string `json:"anthropicBaseUrl"`
	OpenAIBaseURL       *string `json:"openAiBaseUrl"`
	OpenAINativeBaseURL *string `json:"openAiNativeBaseUrl"`
	OpenRouterBaseURL   *string `json:"openRouterBaseUrl"`
	OllamaBaseURL       *string `json:"ollamaBaseUrl"`
	LMStudioBaseURL     *string `json:"lmStudioBaseUrl"`

	APIKey           *string `json:"apiKey"`
	OpenAIAPIKey     *string `json:"openAiApiKey"`
	OpenAINativeKey  *string `json:"openAiNativeApiKey"`
	OpenRouterAPIKey *string `json:"openRouterApiKey"`
	OllamaAPIKey     *string `json:"ollamaApiKey"`

	Mode *string `json:"mode"`

	AutoApprovalEnabled          *bool    `json:"autoApprovalEnabled"`
	AlwaysAllowReadOnly          *bool    `json:"alwaysAllowReadOnly"`
	AlwaysAllowWrite             *bool    `json:"alwaysAllowWrite"`
	AlwaysAllowExecute           *bool    `json:"alwaysAllowExecute"`
	AlwaysAllowMCP               *bool    `json:"alwaysAllowMcp"`
	AlwaysAllowBrowser           *bool    `json:"alwaysAllowBrowser"`
	AlwaysAllowModeSwitch        *bool    `json:"alwaysAllowModeSwitch"`
	AlwaysAllowSubtasks          *bool    `json:"alwaysAllowSubtasks"`
	AlwaysAllowFollowupQuestions *bool    `json:"alwaysAllowFollowupQuestions"`
	AlwaysAllowUpdateTodoList    *bool    `json:"alwaysAllowUpdateTodoList"`
	FollowupAutoApproveTimeoutMs *float64 `json:"followupAutoApproveTimeoutMs"`
	AllowedMaxRequests           *float64 `json:"allowedMaxRequests"`
	ConsecutiveMistakeLimit      *float64 `json:"consecutiveMistakeLimit"`

	AllowedCommands         []string `json:"allowedCommands"`
	DeniedCommands          []string `json:"deniedCommands"`
	CommandExecutionTimeout *float64 `json:"commandExecutionTimeout"`
	TerminalOutputLineLimit *float64 `json:"terminalOutputLineLimit"`

	ModelTemperature   *float64 `json:"modelTemperature"`
	ModelMaxTokens     *float64 `json:"modelMaxTokens"`
	CustomInstructions *string  `json:"customInstructions"`
	MCPEnabled         *bool    `json:"mcpEnabled"`
	BrowserToolEnabled *bool    `json:"browserToolEnabled"`
}

// openAICompatible are the providers served through the OpenAI-compatible
// client, with the base URL each uses when none is configured ("" is the
// client's default).
var openAICompatible = map[string]string{
	"openai":        "",
	"openai-native": "https://api.openai.com/v1",
	"openrouter":    "https://openrouter.ai/api/v1",
	"ollama":        "http://localhost:11434/v1",
	"lmstudio":      "http://localhost:1234/v1",
}

// OptionsFromConfiguration maps a StartNewTask configuration onto Options.
// A setting of the wrong JSON type, or a provider the agent cannot speak, is
// an error that names the setting.
func OptionsFromConfiguration(raw json.RawMessage) (Options, error) {
	var o Options
	if len(raw) == 0 || string(raw) == "null" {
		return o, nil
	}
	var s settings
	if err := json.Unmarshal(raw, &s); err != nil {
		return o, fmt.Errorf("configuration: %s", describeJSONError(err))
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	provider := str(s.APIProvider)
	switch {
	case provider == "" || provider == "anthropic":
		if provider != "" {
			o.Provider = "anthropic"
		}
		o.Model = str(s.APIModelID)
		o.BaseURL = str(s.AnthropicBaseURL)
		o.APIKey = str(s.APIKey)
	default:
		def, ok := openAICompatible[provider]
		if !ok {
			return o, fmt.Errorf("configuration: apiProvider %q is not supported: use anthropic, or an OpenAI-compatible one (openai, openai-native, openrouter, ollama, lmstudio)", provider)
		}
		o.Provider = "openai"
		o.BaseURL = def
		switch provider {
		case "openai":
			o.Model, o.APIKey = str(s.OpenAIModelID), str(s.OpenAIAPIKey)
			o.BaseURL = str(s.OpenAIBaseURL)
		case "openai-native":
			o.Model, o.APIKey = str(s.APIModelID), str(s.OpenAINativeKey)
			if b := str(s.OpenAINativeBaseURL); b != "" {
				o.BaseURL = b
			}
		case "openrouter":
			o.Model, o.APIKey = str(s.OpenRouterModelID), str(s.OpenRouterAPIKey)
			if b := str(s.OpenRouterBaseURL); b != "" {
				o.BaseURL = b
			}
		case "ollama":
			o.Model, o.APIKey = str(s.OllamaModelID), str(s.OllamaAPIKey)
			if b := str(s.OllamaBaseURL); b != "" {
				// Roo Code takes the server's address and adds /v1 itself.
				o.BaseURL = strings.TrimRight(b, "/") + "/v1"
			}
		case "lmstudio":
			o.Model = str(s.LMStudioModelID)
			if b := str(s.LMStudioBaseURL); b != "" {
				o.BaseURL = strings.TrimRight(b, "/") + "/v1"
			}
		}
	}
	o.Mode = str(s.Mode)

	on := func(p *bool) bool { return p != nil && *p }
	if on(s.AutoApprovalEnabled) {
		for _, g := range []struct {
			set   *bool
			group string
		}{
			{s.AlwaysAllowReadOnly, "read"},
			{s.AlwaysAllowWrite, "edit"},
			{s.AlwaysAllowExecute, "command"},
			{s.AlwaysAllowMCP, "mcp"},
			{s.AlwaysAllowBrowser, "browser"},
			{s.AlwaysAllowModeSwitch, "modes"},
			{s.AlwaysAllowSubtasks, "subtasks"},
			{s.AlwaysAllowFollowupQuestions, "followup"},
			{s.AlwaysAllowUpdateTodoList, "todo"},
		} {
			if on(g.set) {
				o.AutoApprove = append(o.AutoApprove, g.group)
			}
		}
	}
	var err error
	count := func(name string, p *float64) int {
		if p == nil || err != nil {
			return 0
		}
		if *p < 0 || *p != float64(int(*p)) || *p > 1e9 {
			err = fmt.Errorf("configuration: %s must be a whole number from 0, got %v", name, *p)
			return 0
		}
		return int(*p)
	}
	o.FollowupTimeout = time.Duration(count("followupAutoApproveTimeoutMs", s.FollowupAutoApproveTimeoutMs)) * time.Millisecond
	o.MaxRequests = count("allowedMaxRequests", s.AllowedMaxRequests)
	o.MaxMistakes = count("consecutiveMistakeLimit", s.ConsecutiveMistakeLimit)
	o.CommandTimeout = time.Duration(count("commandExecutionTimeout", s.CommandExecutionTimeout)) * time.Second
	o.OutputLineLimit = count("terminalOutputLineLimit", s.TerminalOutputLineLimit)
	o.MaxTokens = count("modelMaxTokens", s.ModelMaxTokens)
	if err != nil {
		return Options{}, err
	}
	o.AllowedCommands, o.DeniedCommands = s.AllowedCommands, s.DeniedCommands
	o.Temperature = s.ModelTemperature
	o.CustomInstructions = str(s.CustomInstructions)
	o.MCP, o.Browser = s.MCPEnabled, s.BrowserToolEnabled
	return o, nil
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("setting %q must be of JSON type %s, got %s", te.Field, te.Type.String(), te.Value)
	}
	return err.Error()
}

// StartSettings are the settings of a task started over IPC, as a person
// gives them on a command line; Configuration turns them into Roo Code's
// names.
type StartSettings struct {
	Mode, Provider, Model, BaseURL string
	// AutoApprove lists the groups approved without asking: read, edit,
	// command, mcp, browser, modes, subtasks, followup, todo.
	AutoApprove []string
	// MaxRequests, when above 0, caps auto-approved requests.
	MaxRequests int
	// Extra is more settings as a JSON object, in Roo Code's names.
	Extra string
}

// autoApproveKeys are Roo Code's setting per auto-approval group.
var autoApproveKeys = map[string]string{"read": "alwaysAllowReadOnly", "edit": "alwaysAllowWrite", "command": "alwaysAllowExecute",
	"mcp": "alwaysAllowMcp", "browser": "alwaysAllowBrowser", "modes": "alwaysAllowModeSwitch",
	"subtasks": "alwaysAllowSubtasks", "followup": "alwaysAllowFollowupQuestions", "todo": "alwaysAllowUpdateTodoList"}

// Configuration builds a StartNewTask configuration in Roo Code's setting
// names (the model and base URL keys depend on the provider), and refuses
// what a server would refuse (OptionsFromConfiguration), with the same
// words.
func (s StartSettings) Configuration() (json.RawMessage, error) {
	conf := map[string]any{}
	if s.Extra != "" {
		if err := json.Unmarshal([]byte(s.Extra), &conf); err != nil || conf == nil {
			return nil, fmt.Errorf("--config must be a JSON object of settings: %v", err)
		}
	}
	if s.Mode != "" {
		conf["mode"] = s.Mode
	}
	if s.Provider != "" {
		conf["apiProvider"] = s.Provider
	}
	if s.Model != "" || s.BaseURL != "" {
		p := s.Provider
		if p == "" {
			p, _ = conf["apiProvider"].(string)
		}
		modelKey, urlKey := "apiModelId", "anthropicBaseUrl"
		switch p {
		case "openai":
			modelKey, urlKey = "openAiModelId", "openAiBaseUrl"
		case "openai-native":
			urlKey = "openAiNativeBaseUrl"
		case "openrouter":
			modelKey, urlKey = "openRouterModelId", "openRouterBaseUrl"
		case "ollama":
			modelKey, urlKey = "ollamaModelId", "ollamaBaseUrl"
		case "lmstudio":
			modelKey, urlKey = "lmStudioModelId", "lmStudioBaseUrl"
		}
		if s.Model != "" {
			conf[modelKey] = s.Model
		}
		if s.BaseURL != "" {
			conf[urlKey] = s.BaseURL
		}
	}
	for _, g := range s.AutoApprove {
		key, ok := autoApproveKeys[strings.TrimSpace(g)]
		if !ok {
			return nil, fmt.Errorf("--auto-approve %q: the groups are read, edit, command, mcp, browser, modes, subtasks, followup, todo", g)
		}
		conf["autoApprovalEnabled"] = true
		conf[key] = true
	}
	if s.MaxRequests > 0 {
		conf["allowedMaxRequests"] = s.MaxRequests
	}
	b, err := json.Marshal(conf)
	if err != nil {
		return nil, err
	}
	if _, err := OptionsFromConfiguration(b); err != nil {
		return nil, err
	}
	return b, nil
}
