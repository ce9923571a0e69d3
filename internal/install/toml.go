package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
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
func cutTOMLBlock(data string) (string, bool) { return cutMarkedBlock(data, tomlBegin) }

// cutMarkedBlock removes the block that begins with the line begin and ends
// with tomlEnd, and the newline install put before it, from data.
func cutMarkedBlock(data, begin string) (string, bool) {
	i := strings.Index(data, begin+"\n")
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

// Codex runs a project's hooks only when the project is trusted in the
// user's config.toml ([projects."<dir>"] trust_level = "trusted"), and skips
// them without a word otherwise. install records that trust only when asked
// (--trust), in a marked block that uninstall removes.

func codexTrustBegin(root string) string {
	return "# >>> intentgate trust for " + strconv.Quote(root) + " (added by `intentgate install codex --trust`; `intentgate uninstall codex` removes this block)"
}

func codexTrustBlock(root string) string {
	return codexTrustBegin(root) + "\n[projects." + strconv.Quote(root) + "]\ntrust_level = \"trusted\"\n" + tomlEnd + "\n"
}

// codexTrusted says whether the Codex config doc trusts the project root.
func codexTrusted(doc map[string]any, root string) (trusted, present bool) {
	projects, _ := doc["projects"].(map[string]any)
	p, ok := projects[root].(map[string]any)
	if !ok {
		return false, false
	}
	level, _ := p["trust_level"].(string)
	return level == "trusted", true
}

// addCodexTrust plans the project's trust in the user's Codex config at path.
func (p *installPlan) addCodexTrust(o *Options, path, root string, remove bool) error {
	e := fileEdit{path: path, show: path, perm: 0o600}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		e.before, e.exists = data, true
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	e.keep, e.after = e.exists, e.before
	rest, had := cutMarkedBlock(string(data), codexTrustBegin(root))
	switch {
	case remove:
		if had {
			e.after, e.keep = []byte(rest), rest != ""
		}
	case had:
	default:
		doc, err := parseTOML(path, string(data))
		if err != nil {
			return err
		}
		trusted, present := codexTrusted(doc, root)
		switch {
		case trusted:
		case !o.Trust:
			p.untrusted = fmt.Sprintf("Codex skips the hooks of a project it does not trust, without a word, so Codex would run ungoverned here.\n"+
				"Trust the project and install again:\n  intentgate install codex --trust -w %s\n"+
				"(it adds [projects.%q] trust_level = \"trusted\" to %s; `intentgate uninstall codex` removes it), or trust the project when codex asks and run install again",
				shellQuote(root), root, path)
		case present:
			return fmt.Errorf("%s sets a trust_level other than \"trusted\" for [projects.%q]; change it to trust_level = \"trusted\" by hand", path, root)
		default:
			out := codexTrustBlock(root)
			if len(data) > 0 {
				out = string(data) + "\n" + out
			}
			if _, err := parseTOML(path, out); err != nil {
				return fmt.Errorf("recording the project's trust would break %s (%v); add [projects.%q] trust_level = \"trusted\" by hand", path, err, root)
			}
			e.keep, e.after = true, []byte(out)
		}
	}
	p.edits = append(p.edits, e)
	return nil
}
