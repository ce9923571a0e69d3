package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Codex registers MCP servers in config.toml ([mcp_servers.<name>]). No TOML
// library keeps comments and layout when it re-encodes a document, so install
// does not re-encode: it appends one marked block, and uninstall cuts exactly
// that block out again, leaving every byte of the person's file as it was.
// go-toml/v2 parses the file before and after, to refuse a config.toml that
// is already broken (naming line and column) or one the block would break
// (an inline mcp_servers table cannot be extended), and to notice an
// intentgate server the person configured themselves.
const (
	tomlBegin = "# >>> intentgate (added by `intentgate install codex`; `intentgate uninstall codex` removes this block)"
	tomlEnd   = "# <<< intentgate"
)

func codexMCPBlock(command string) string {
	return tomlBegin + "\n[mcp_servers.intentgate]\ncommand = " + strconv.Quote(command) + "\nargs = [\"mcp\"]\n" + tomlEnd + "\n"
}

// cutTOMLBlock removes intentgate's block, and the newline install put before
// it, from data.
func cutTOMLBlock(data string) (string, bool) {
	i := strings.Index(data, tomlBegin)
	if i < 0 || (i > 0 && data[i-1] != '\n') {
		return data, false
	}
	j := strings.Index(data[i:], "\n"+tomlEnd)
	if j < 0 {
		return data, false
	}
	end := i + j + 1 + len(tomlEnd)
	if end < len(data) && data[end] == '\n' {
		end++
	}
	start := i
	if start > 0 {
		start-- // the newline install added to separate the block
	}
	return data[:start] + data[end:], true
}

func parseTOML(path, data string) (map[string]any, error) {
	var doc map[string]any
	if err := toml.Unmarshal([]byte(data), &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("%s:%d:%d: %s", path, row, col, de.Error())
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// installTOMLBlock returns data with intentgate's MCP server registered, and
// a note when the file already configures a server of that name itself.
func installTOMLBlock(path, data, command string) (string, string, error) {
	rest, _ := cutTOMLBlock(data)
	doc, err := parseTOML(path, rest)
	if err != nil {
		return "", "", err
	}
	if servers, ok := doc["mcp_servers"].(map[string]any); ok {
		if _, mine := servers["intentgate"]; mine {
			return data, fmt.Sprintf("%s already configures an MCP server named intentgate; it is left as it is", path), nil
		}
	}
	out := codexMCPBlock(command)
	if rest != "" {
		out = rest + "\n" + out
	}
	if _, err := parseTOML(path, out); err != nil {
		return "", "", fmt.Errorf("registering intentgate's MCP server would break %s (%v); add [mcp_servers.intentgate] with command = %q and args = [\"mcp\"] by hand", path, err, command)
	}
	return out, "", nil
}
