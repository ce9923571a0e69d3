package gatecore

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/intentgate/intentgate/orchestration"
)

// Find returns the governed workspace that start lies in: the nearest
// directory upwards holding .orchestration/, unless a directory further up
// also holds .orchestration/active_intents.yaml, in which case the outermost
// such one governs (a nested workspace never takes over its parent's
// governance). It never creates anything; where no directory is governed,
// the error says to run `intentgate init`.
//
// The walk is lexical, so the root keeps the caller's spelling of the path.
// A .orchestration that is a link still marks the workspace: Open then
// refuses every call, rather than the calls escaping governance.
func Find(start string) (root string, err error) {
	abs, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	nearest, outer := "", ""
	for dir := abs; ; {
		if isGoverned(dir) {
			if nearest == "" {
				nearest = dir
			}
			if _, err := os.Lstat(filepath.Join(dir, orchestration.DirName, orchestration.IntentsName)); err == nil {
				outer = dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	switch {
	case outer != "" && nearest != "" && len(outer) < len(nearest):
		return outer, nil
	case nearest != "":
		return nearest, nil
	}
	return "", fmt.Errorf("%s is not governed: neither it nor a directory above it has %s/; run `intentgate init` in the workspace's root", abs, orchestration.DirName)
}

func isGoverned(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, orchestration.DirName))
	return err == nil
}
