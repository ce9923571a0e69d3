package agent

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/intentgate/intentgate/agent/provider"
	"github.com/intentgate/intentgate/internal/catalog"
)

// TokenUsage is a task's usage in tokens and money (tokenUsageSchema).
type TokenUsage struct {
	TotalTokensIn    int     `json:"totalTokensIn"`
	TotalTokensOut   int     `json:"totalTokensOut"`
	TotalCacheWrites int     `json:"totalCacheWrites"`
	TotalCacheReads  int     `json:"totalCacheReads"`
	TotalCost        float64 `json:"totalCost"`
	// ContextTokens is the size of the last request's context.
	ContextTokens int `json:"contextTokens"`
}

// ToolUsage counts, per tool, the calls attempted and failed
// (toolUsageSchema).
type ToolUsage map[string]*ToolCount

// ToolCount is one tool's usage.
type ToolCount struct {
	Attempts int `json:"attempts"`
	Failures int `json:"failures"`
}

func (u ToolUsage) attempt(tool string) {
	if u[tool] == nil {
		u[tool] = &ToolCount{}
	}
	u[tool].Attempts++
}

func (u ToolUsage) fail(tool string) {
	if u[tool] == nil {
		u[tool] = &ToolCount{}
	}
	u[tool].Failures++
}

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input         float64 `json:"input"`
	Output        float64 `json:"output"`
	CacheWrite    float64 `json:"cache_write"`
	CacheRead     float64 `json:"cache_read"`
	ContextWindow int     `json:"context_window"`
	Source        string  `json:"source"`
}

//go:embed prices.json
var pricesJSON []byte

// Prices is the price table of prices.json, keyed by model id.
func Prices() (map[string]Price, error) {
	var f struct {
		Models map[string]Price `json:"models"`
	}
	if err := json.Unmarshal(pricesJSON, &f); err != nil {
		return nil, fmt.Errorf("agent/prices.json: %w", err)
	}
	return f.Models, nil
}

// PriceOf returns the price of model: an exact entry, else the longest entry
// that is a prefix of the id (dated snapshots such as
// claude-sonnet-4-5-20250929 cost what their family costs).
func PriceOf(table map[string]Price, model string) (Price, bool) {
	if p, ok := table[model]; ok {
		return p, true
	}
	best := ""
	for id := range table {
		if strings.HasPrefix(model, id) && len(id) > len(best) {
			best = id
		}
	}
	if best == "" {
		return Price{}, false
	}
	return table[best], true
}

// Cost is what usage costs at price p.
func (p Price) Cost(u provider.Usage) float64 {
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheWriteTokens)*p.CacheWrite + float64(u.CacheReadTokens)*p.CacheRead) / 1e6
}

// ReferenceTools are the names of the catalog's tools that are Roo Code's
// too (@roo-code/types toolNames, the keys toolUsageSchema accepts), in
// catalog order.
func ReferenceTools() []string {
	var out []string
	for _, t := range catalog.Tools() {
		if !t.Own {
			out = append(out, t.Name)
		}
	}
	return out
}

// Split separates the usage of the reference's tools (valid for
// toolUsageSchema) from that of intentgate's own (select_active_intent) and
// of names no tool has.
func (u ToolUsage) Split() (roo, own ToolUsage) {
	roo, own = ToolUsage{}, ToolUsage{}
	for k, v := range u {
		c := *v
		if t, ok := catalog.Lookup(k); ok && !t.Own {
			roo[k] = &c
		} else {
			own[k] = &c
		}
	}
	return roo, own
}
