package gatecore

import "testing"

func TestExplained(t *testing.T) {
	b := func(from, to string) otherStep { return otherStep{from: from, to: to, known: true} }
	pending := otherStep{}
	for _, tc := range []struct {
		name     string
		from, to string
		steps    []otherStep
		want     bool
	}{
		{"one edit by another session", "h1", "h2", []otherStep{b("h1", "h2")}, true},
		{"two edits in a row", "h1", "h3", []otherStep{b("h1", "h2"), b("h2", "h3")}, true},
		{"created by another session", "", "h1", []otherStep{b("", "h1")}, true},
		{"deleted by another session", "h1", "", []otherStep{b("h1", "")}, true},
		{"an edit already in the picture, then one during", "h2", "h3", []otherStep{b("h1", "h2"), b("h2", "h3")}, true},
		{"only edits already in the picture", "h2", "h3", []otherStep{b("h1", "h2")}, false},
		{"the command changed it before the other session", "h1", "h3", []otherStep{b("hX", "h3")}, false},
		{"the command changed it after the other session", "h1", "hY", []otherStep{b("h1", "h2")}, false},
		{"an edit under way", "h1", "h2", []otherStep{pending}, false},
		{"old content unknown", "?", "h2", []otherStep{b("h1", "h2")}, false},
	} {
		if got := explained(tc.from, tc.to, tc.steps); got != tc.want {
			t.Errorf("%s: explained(%q, %q) = %v, want %v", tc.name, tc.from, tc.to, got, tc.want)
		}
	}
}
