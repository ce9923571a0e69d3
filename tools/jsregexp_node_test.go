//go:build nodejs

package tools

import (
	"encoding/json"
	"math/rand"
	"os/exec"
	"strings"
	"testing"
)

// nodeReplace is String.prototype.replace as Node runs it, for each case.
const nodeReplace = `
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(cases.map(c => {
  try { return { ok: true, r: c.s.replace(new RegExp(c.p, c.i ? "gi" : "g"), c.t) } }
  catch (e) { return { ok: false, e: String(e) } }
})));`

// TestJSReplaceAgainstNode compares compileJS and replaceAll with Node on
// random patterns, inputs and replacements: go test -tags nodejs ./tools.
// Inputs stay in the Basic Multilingual Plane, where JavaScript's code units
// and Go's characters agree.
func TestJSReplaceAgainstNode(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	atoms := []string{"a", "b", "A", "x*", "b*", "(a)", "(?:ab)", "(?<n>b)", ".", `\d`, `\w`, `\s`, `\S`, "[a-c]",
		"[^a]", "[]", "[^]", "$", "^", `\b`, `\B`, "a|", "|b", "(a|)", "a+?", "b??", `\x41`, `\u0062`, `\101`, `\0`,
		`\8`, `\cJ`, `\c`, `[\b]`, `[\w-z]`, `[a-\d]`, "{", "}", "]", "a{2}", "a{1,}", "x{,2}", `\k`, `\p{L}`, "ſ",
		"K", "k", "s", "ß", "[s-t]", "(b)?", "((a)|b)", `\/`, `\-`, `\.`, "é", "É", "[é]", `\n`, `\r`, `[\s\S]`,
		`\1`, "(?=a)", "(?<=a)", `\k<n>`, "σ", "Σ", "ς", "ǅ", "ı", "İ", "ᾀ", "[α-ω]", "[A-Z]", `\12`, `\u00e9`,
		`\xe9`, `[\W]`, `\W`, `[^\W]`, `\uD83D`}
	inputs := []string{"", "a", "ab", "abc", "aab", "bab", "Ab aB", "a\nb", "a\r\nb", "xyz", "ſK kS", "ßẞ", "é É",
		"a1 b2", "ba ab", "aaa", "\u2028a", "\x00a", "k\u212a", "Σσς", "µΜμ", "ǅǄǆ", "İiIı", "ᾀᾈ"}
	tmpls := []string{"-", "[$&]", "$1", "$2", "$01", "$10", "$0", "$$", "$`", "$'", "$<n>", "$<x>", "$<", "$",
		"a$b", "$11", "${1}", "\n"}
	type jsCase struct {
		P string `json:"p"`
		S string `json:"s"`
		T string `json:"t"`
		I bool   `json:"i"`
	}
	r := rand.New(rand.NewSource(1))
	var cases []jsCase
	for i := 0; i < 30000; i++ {
		var p strings.Builder
		for j := 0; j < 1+r.Intn(3); j++ {
			p.WriteString(atoms[r.Intn(len(atoms))])
		}
		cases = append(cases, jsCase{P: p.String(), S: inputs[r.Intn(len(inputs))], T: tmpls[r.Intn(len(tmpls))], I: r.Intn(3) == 0})
	}
	in, _ := json.Marshal(cases)
	cmd := exec.Command("node", "-e", nodeReplace)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []struct {
		OK bool   `json:"ok"`
		R  string `json:"r"`
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, c := range cases {
		re, err := compileJS(c.P, c.I)
		if se, ok := err.(*jsSyntaxError); ok && se.unsupported {
			continue
		}
		switch {
		case err != nil && want[i].OK:
			t.Errorf("/%s/: compileJS: %v; Node accepts it", c.P, err)
		case err == nil && !want[i].OK:
			t.Errorf("/%s/: compiled; Node refuses it", c.P)
		case err == nil:
			if got, _ := re.replaceAll(c.S, c.T, "\n"); got != want[i].R {
				t.Errorf("%q.replace(/%s/g (i=%v), %q) = %q, Node %q", c.S, c.P, c.I, c.T, got, want[i].R)
			}
		}
		if t.Failed() {
			if bad++; bad > 20 {
				t.FailNow()
			}
		}
	}
}
