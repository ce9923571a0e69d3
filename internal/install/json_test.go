package install

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// userClaudeSettings is a Claude Code settings file as a person keeps it
// (shared with the binary-driven install tests in cmd/intentgate).
var userClaudeSettings = mustRead("testdata/user-claude-settings.json")

func mustRead(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Whatever settings file install merges into, uninstall gives back the same
// JSON; and a file laid out the usual way (two spaces, a final newline, as
// Claude Code and json.MarshalIndent write it) comes back byte for byte.
func FuzzJSONInstallUninstall(f *testing.F) {
	for _, s := range []string{
		userClaudeSettings, "{}", "{}\n", `{"a":[1,{"b":null}],"c":"\u00e9 <x>","d":1.50e3}`,
		"{\n\t\"theme\": \"x\",\n\t\"list\": [1, 2]\n}",
		`{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"intentgate hook claude-code"},{"type":"command","command":"mine"}]}]}}`,
	} {
		f.Add(s)
	}
	o := &Options{Command: "intentgate"}
	specs := []hookSpec{{event: "PreToolUse", matcher: "Write"}, {event: "SessionStart"}}
	f.Fuzz(func(t *testing.T, data string) {
		doc, err := parseJSONDoc([]byte(data))
		if err != nil || doc.kind != '{' {
			return
		}
		unit, nl := jsonStyle([]byte(data))
		if got := encodeJSONDoc(doc, unit, nl); strings.TrimSpace(string(got)) != strings.TrimSpace(data) {
			t.Fatalf("an unchanged document is written as %q, read as %q", got, data)
		}
		var before any
		if json.Unmarshal([]byte(data), &before) != nil {
			return
		}
		hadOurs := strings.Contains(data, "hook claude-code")
		edit := claudeHooks(specs, o.hookCommand("claude-code"), false, o.oursCommand("claude-code"))
		if _, _, err := edit(doc, false); err != nil {
			return // a "hooks" that is not an object: refused, nothing written
		}
		mid := encodeJSONDoc(doc, unit, nl)
		if !json.Valid(mid) {
			t.Fatalf("install writes invalid JSON %q", mid)
		}
		doc2, err := parseJSONDoc(mid)
		if err != nil {
			t.Fatalf("install's output does not parse: %v\n%s", err, mid)
		}
		if _, _, err := edit(doc2, false); err != nil {
			t.Fatal(err)
		}
		if again := encodeJSONDoc(doc2, unit, nl); !bytes.Equal(again, mid) {
			t.Fatalf("a second install changes the file:\n%s", unifiedDiff("first", "second", mid, again))
		}
		if _, _, err := edit(doc2, true); err != nil {
			t.Fatal(err)
		}
		out := encodeJSONDoc(doc2, unit, nl)
		if hadOurs {
			return // the file held hooks of ours already: uninstall removes them too
		}
		var after any
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("uninstall writes invalid JSON %q", out)
		}
		// An empty "hooks", or event list, is indistinguishable from one
		// install made, and goes with ours.
		m, _ := before.(map[string]any)
		if h, ok := m["hooks"].(map[string]any); ok {
			if len(h) == 0 {
				return
			}
			for _, v := range h {
				if a, ok := v.([]any); ok && len(a) == 0 {
					return
				}
			}
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("uninstall gives %s, want %s", out, data)
		}
		var v any
		json.Unmarshal([]byte(data), &v)
		canon, _ := json.MarshalIndent(v, "", "  ")
		canon = append(canon, '\n')
		if bytes.Equal(canon, []byte(data)) && !bytes.Equal(out, []byte(data)) && strings.Contains(string(canon), "\n") {
			t.Fatalf("uninstall changes the bytes of a usual file:\n%s", unifiedDiff("before", "after", []byte(data), out))
		}
	})
}

// FuzzJSONCSettings: settings with comments (Gemini CLI's) parse; what
// install writes parses again, means the same as the input plus
// intentgate's hooks, keeps every comment outside the hooks, and a second
// install changes nothing.
func FuzzJSONCSettings(f *testing.F) {
	for _, s := range []string{
		"// top\n{\n  /* a */ \"theme\": \"x\", // b\n  \"n\": [1, /* c */ 2]\n}\n",
		"{\"hooks\": {/* mine */}}",
		"{} // end",
		"/* only */ {\r\n\t\"a\": {\"b\": \"//not a comment\"}\r\n}",
	} {
		f.Add(s)
	}
	o := &Options{Command: "intentgate"}
	specs := []hookSpec{{event: "BeforeTool", matcher: ".*"}}
	f.Fuzz(func(t *testing.T, data string) {
		doc, err := parseJSONDoc([]byte(data))
		if err != nil || doc.kind != '{' {
			return
		}
		unit, nl := jsonStyle([]byte(data))
		if got := encodeJSONDoc(doc, unit, nl); strings.TrimRight(string(got), " \t\r\n") != strings.TrimRight(data, " \t\r\n") {
			t.Fatalf("an unchanged document is written as %q, read as %q", got, data)
		}
		hadHooks := doc.get("hooks") != nil
		edit := claudeHooks(specs, o.hookCommand("gemini"), true, o.oursCommand("gemini"))
		if _, _, err := edit(doc, false); err != nil {
			return
		}
		mid := encodeJSONDoc(doc, unit, nl)
		doc2, err := parseJSONDoc(mid)
		if err != nil {
			t.Fatalf("install's output does not parse: %v\n%s", err, mid)
		}
		if !doc2.get("hooks").equal(doc.get("hooks")) {
			t.Fatalf("the hooks written are not the hooks read back:\n%s", mid)
		}
		for i, k := range doc.keys {
			if k != "hooks" && !doc2.get(k).equal(doc.vals[i]) {
				t.Fatalf("%q changed:\n%s", k, mid)
			}
		}
		if !hadHooks {
			for _, c := range jsoncComments(data) {
				if !strings.Contains(string(mid), c) {
					t.Fatalf("the comment %q was lost:\n%s", c, mid)
				}
			}
		}
		if _, _, err := edit(doc2, false); err != nil {
			t.Fatal(err)
		}
		if again := encodeJSONDoc(doc2, unit, nl); !bytes.Equal(again, mid) {
			t.Fatalf("a second install changes the file:\n%s", unifiedDiff("first", "second", mid, again))
		}
	})
}

// jsoncComments lists the comments of a document the parser accepted,
// found by a scan of its own (strings skipped).
func jsoncComments(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case strings.HasPrefix(s[i:], "//"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			out = append(out, strings.TrimRight(s[i:i+j], "\r"))
			i += j
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			out = append(out, s[i:i+2+j+2])
			i += 2 + j + 1
		}
	}
	return out
}
