package gatecore

import (
	"path/filepath"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// Ownership says who may change one path of a workspace, and why the others
// may not: what "intentgate intents check" prints.
type Ownership struct {
	// Rel is the path canonicalized as the engine does (links resolved,
	// kept inside the workspace).
	Rel string
	// Protected says why no intent may change Rel ("governance" for a file
	// of .orchestration/ or an agent's settings, "intentignore" for a match
	// of .intentignore); "" when intents decide.
	Protected string
	// Intents is one verdict per declared intent, in file order.
	Intents []IntentVerdict
}

// IntentVerdict is what one intent may do to a path.
type IntentVerdict struct {
	Intent *orchestration.Intent
	// Owns: the intent's owned_scope covers the path, through Glob.
	Owns bool
	Glob string
	// Err: the scope could not be decided (a bad glob); the path is
	// denied.
	Err error
}

// May reports whether the intent may change the path: it owns it and is
// IN_PROGRESS.
func (v IntentVerdict) May() bool {
	return v.Err == nil && v.Owns && v.Intent.Status == orchestration.StatusInProgress
}

// May reports whether some intent may change the path.
func (o *Ownership) May() bool {
	if o.Protected != "" {
		return false
	}
	for _, v := range o.Intents {
		if v.May() {
			return true
		}
	}
	return false
}

// Explain works out who may change path in the workspace at dir, with the
// same rules the engine applies to a call: protection first, then each
// intent's owned_scope and status. A path that escapes the workspace is an
// error.
func Explain(dir, path string) (*Ownership, error) {
	ws, err := engine.OpenWorkspace(dir)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	rel, err := ws.Canonical(path)
	if err != nil {
		return nil, err
	}
	o := &Ownership{Rel: rel}
	if orchestration.IsGoverned(rel) {
		o.Protected = "governance"
		return o, nil
	}
	ig, err := orchestration.LoadIgnore(ws.Dir)
	if err != nil {
		return nil, err
	}
	if ig.Match(rel, false) {
		o.Protected = "intentignore"
		return o, nil
	}
	set, err := orchestration.LoadIntents(filepath.Join(ws.Dir, orchestration.DirName, orchestration.IntentsName))
	if err != nil {
		return nil, err
	}
	for i := range set.Intents {
		in := &set.Intents[i]
		owns, glob, err := in.Owns(rel)
		o.Intents = append(o.Intents, IntentVerdict{Intent: in, Owns: owns, Glob: glob, Err: err})
	}
	return o, nil
}
