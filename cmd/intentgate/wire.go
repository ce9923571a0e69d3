package main

import (
	"fmt"
	"path/filepath"

	"github.com/intentgate/intentgate/agent/mcphub"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/orchestration/audit"
)

// governed is one workspace under intentgate: the engine with every policy
// plugged in, and the stores behind it.
type governed struct {
	ws       *engine.Workspace
	eng      *engine.Engine
	intents  hooks.Intents
	store    *orchestration.IntentStore
	sessions *orchestration.SessionStore
	ledger   *orchestration.Ledger
	git      *orchestration.Git
	modes    *orchestration.ModeStore
	mcp      *mcphub.Hub
	orch     string
}

// failedIntents stands in for an intents file that could not be loaded: every
// question about intents fails, so every mutating call is refused.
type failedIntents struct{ err error }

func (f failedIntents) Current() (*orchestration.IntentSet, error) { return nil, f.err }

func open(dir string) (*governed, error) {
	ws, err := engine.OpenWorkspace(dir)
	if err != nil {
		return nil, err
	}
	g := &governed{ws: ws, orch: filepath.Join(ws.Dir, ".orchestration")}
	if err := orchestration.CheckIntact(g.orch); err != nil {
		// Nothing may be opened through a redirected directory; every call
		// is answered with the refusal that says why.
		g.eng = engine.New(engine.NewRegistry())
		g.eng.Use(hooks.Intact(g.orch))
		return g, nil
	}
	store, err := orchestration.OpenIntentStore(filepath.Join(g.orch, "active_intents.yaml"))
	if err != nil {
		g.intents = failedIntents{fmt.Errorf("cannot load intents: %w", err)}
	} else {
		g.store, g.intents = store, store
	}
	g.sessions = orchestration.OpenSessions(filepath.Join(g.orch, "sessions"))
	if g.ledger, err = orchestration.OpenLedger(filepath.Join(g.orch, "agent_trace.jsonl")); err != nil {
		g.close()
		return nil, err
	}
	if g.git, err = orchestration.OpenGit(ws.Dir); err != nil {
		g.close()
		return nil, err
	}

	g.modes = orchestration.OpenModes(filepath.Join(g.orch, "modes.yaml"))
	g.mcp = mcphub.New(mcphub.Options{Workspace: ws.Dir, GlobalConfig: mcphub.DefaultGlobalConfig(), Version: version})
	usage := hooks.NewUsage(g.sessions)
	reg := usage.Tools(newRegistry(g))
	hl := hooks.NewHashLock(reg, g.sessions)
	modes := hooks.NewModes(reg, g.sessions, g.modes)

	tr := hooks.NewTrace(hooks.TraceConfig{
		Ledger: g.ledger, Git: g.git, Version: version,
		Then: []hooks.Recorder{
			hooks.NewIntentMap(g.intents, g.orch),
			// Line fingerprints of each version, so blame can follow lines
			// that later edits move.
			audit.NewCapture(ws.Dir, g.ledger.Path()),
		},
	})
	e := engine.New(reg)
	e.Use(
		hooks.Intact(g.orch),
		hooks.Gatekeeper(reg, g.intents, g.sessions),
		modes,
		hooks.Protected(reg, ws),
		hooks.Scope(reg, g.intents),
		hooks.PathArgScope(reg, ws, g.intents, mcphub.ArgsOf(g.mcp)),
		hl,
	)
	e.After(
		hooks.CommandAudit(reg, ws, g.intents),
		hl,
		modes,
		tr,
		usage,
	)
	e.OnDenial(tr, usage)
	g.eng = e
	return g, nil
}

func (g *governed) close() {
	if g.mcp != nil {
		g.mcp.Close()
	}
	if g.store != nil {
		g.store.Close()
	}
	if g.ledger != nil {
		g.ledger.Close()
	}
	g.ws.Close()
}
