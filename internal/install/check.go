package install

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/intentgate/intentgate/internal/selfexe"
)

// resolveCommand makes sure the command the agent will run for its hooks
// exists: an agent that cannot start it runs ungoverned (most agents treat a
// hook that fails to start as no opinion). The default, "intentgate", is
// written as the absolute path of this binary when no intentgate is on PATH;
// a --command that names nothing runnable is an error.
func (o *Options) resolveCommand(out io.Writer) error {
	if filepath.IsAbs(o.Command) {
		fi, err := os.Stat(o.Command)
		if err != nil {
			return fmt.Errorf("--command %s: %w; name the intentgate binary the agent should run", o.Command, err)
		}
		if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 && filepath.Separator == '/' {
			return fmt.Errorf("--command %s is not an executable file; name the intentgate binary the agent should run", o.Command)
		}
		return nil
	}
	if _, err := exec.LookPath(o.Command); err == nil {
		return nil
	}
	if o.Command != "intentgate" {
		return fmt.Errorf("--command %q is not on PATH, so the agent could not run its hooks and would work ungoverned; "+
			"give its absolute path, or put it on PATH", o.Command)
	}
	self, err := selfexe.Intentgate()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return errors.New("intentgate is not on PATH and the path of this binary is unknown, so the agent could not run its hooks; " +
			"put intentgate on PATH or give --command /absolute/path/to/intentgate")
	}
	fmt.Fprintf(out, "note: intentgate is not on PATH; the hooks run %s\n", self)
	o.Command = self
	return nil
}

// codexTrustNote tells how to make Codex run the hooks: Codex skips, without
// a word, project hooks of an untrusted project and hooks nobody trusted.
func codexTrustNote(root string) string {
	return fmt.Sprintf("Codex skips untrusted hooks without a word. Trust them once: run `codex` in %s, "+
		"answer the trust question for the project, then type /hooks and trust the intentgate hooks "+
		"(project trust alone is [projects.%q] trust_level = \"trusted\" in ~/.codex/config.toml; "+
		"for unattended runs that already vet their hooks: codex exec --dangerously-bypass-hook-trust ...). "+
		"`intentgate doctor codex` checks the result", root, root)
}
