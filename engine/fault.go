package engine

import "strings"

// faultListed reports whether the fault list v (NAME[=COUNT],...) names name.
func faultListed(v, name string) bool {
	for _, p := range strings.Split(v, ",") {
		if n, _, _ := strings.Cut(strings.TrimSpace(p), "="); n == name {
			return true
		}
	}
	return false
}
