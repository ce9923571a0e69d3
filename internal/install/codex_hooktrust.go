package install

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Codex runs a project's hooks only when the person trusted each one: the
// user's config.toml keeps, per hook, [hooks.state."KEY"] trusted_hash =
// "sha256:…", where KEY is "<absolute hooks.json>:<event>:<group>:<handler>"
// and the hash is Codex's own digest of the handler. Codex does not document
// how it computes it, so install asks Codex itself: `codex app-server`
// answers the JSON-RPC method hooks/list with every hook it sees for a
// directory, its key and its current hash.

// codexHookTrust trusts the hooks install wrote into hooks for root.
type codexHookTrust struct {
	root, hooks, user, command string
}

// codexTrustTimeout bounds the app-server exchange.
const codexTrustTimeout = 60 * time.Second

type codexListedHook struct {
	Key         string `json:"key"`
	Command     string `json:"command"`
	SourcePath  string `json:"sourcePath"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
}

// apply asks Codex for the hashes and writes them into the trust block
// install already put in the user's config, so uninstall removes them with
// it. With codex on PATH, a failure is an error (the agent would run
// ungoverned); without it, install says how to trust the hooks later.
func (t *codexHookTrust) apply(st *installState, statePath string, out io.Writer) error {
	bin, err := exec.LookPath("codex")
	if err != nil {
		// Without Codex here there is nobody to ask, and nothing that
		// would run the hooks yet: say how to trust them later.
		fmt.Fprintf(out, "note: codex is not on PATH, so the hooks' hashes could not be asked for; run install again once it is, or: %s\n", codexTrustNote(t.root))
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), codexTrustTimeout)
	defer cancel()
	hooks, err := codexListHooks(ctx, bin, t.root)
	if err != nil {
		return fmt.Errorf("asking %s app-server for the hooks' hashes: %v; the hooks are installed but Codex skips them until they are trusted: %s", bin, err, codexTrustNote(t.root))
	}
	states := map[string]string{}
	for _, h := range hooks {
		if h.SourcePath == t.hooks && h.Command == t.command && strings.HasPrefix(h.CurrentHash, "sha256:") {
			states[h.Key] = h.CurrentHash
		}
	}
	if len(states) != len(codexSpecs) {
		return fmt.Errorf("%s app-server lists %d of intentgate's %d hooks in %s; the hooks are installed but not trusted: %s", bin, len(states), len(codexSpecs), t.hooks, codexTrustNote(t.root))
	}
	data, err := os.ReadFile(t.user)
	if err != nil {
		return err
	}
	// The project's trust is in intentgate's block, or was the person's
	// own (then the block holds only the hooks' states).
	rest, had := cutMarkedBlock(string(data), codexTrustBegin(t.root))
	doc, err := parseTOML(t.user, rest)
	if err != nil {
		return err
	}
	if hs, ok := doc["hooks"].(map[string]any); ok {
		known, _ := hs["state"].(map[string]any)
		for k, v := range known {
			want, ours := states[k]
			if !ours {
				continue
			}
			entry, _ := v.(map[string]any)
			if got, _ := entry["trusted_hash"].(string); got != want {
				return fmt.Errorf("%s already has [hooks.state.%q] with another trusted_hash; remove that table or trust the hook again with /hooks in codex", t.user, k)
			}
			delete(states, k) // trusted by the person already
		}
	}
	block := codexTrustBlockWith(t.root, had, states)
	if !had && len(states) == 0 {
		fmt.Fprintf(out, "the hooks of %s are already trusted in %s\n", t.hooks, t.user)
		return nil
	}
	after := block
	if rest != "" {
		after = rest + "\n" + block
	}
	if _, err := parseTOML(t.user, after); err != nil {
		return fmt.Errorf("trusting the hooks would break %s (%v); trust them with /hooks in codex instead", t.user, err)
	}
	if after != string(data) {
		e := fileEdit{path: t.user, show: t.user, perm: 0o600, exists: true, keep: true, before: data, after: []byte(after)}
		if err := applyEdit(e); err != nil {
			return err
		}
		if st != nil && statePath != "" {
			f, ok := st.Files[t.user]
			switch {
			case ok && f.After == hexSHA(data):
				f.After = hexSHA(e.after)
			case !ok:
				f = installedFile{Existed: true, Before: data, After: hexSHA(e.after)}
			}
			st.Files[t.user] = f
			if err := writeInstallState(statePath, st); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(out, "trusted %d hooks of %s in %s (the hashes codex app-server gave)\n", len(states), t.hooks, t.user)
	return nil
}

// codexTrustBlockWith is the trust block, with the project's trust when
// intentgate recorded it, and the hooks' states.
func codexTrustBlockWith(root string, project bool, states map[string]string) string {
	var b strings.Builder
	b.WriteString(codexTrustBegin(root) + "\n")
	if project {
		b.WriteString("[projects." + strconv.Quote(root) + "]\ntrust_level = \"trusted\"\n")
	}
	keys := make([]string, 0, len(states))
	for k := range states {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString("[hooks.state." + strconv.Quote(k) + "]\ntrusted_hash = " + strconv.Quote(states[k]) + "\n")
	}
	b.WriteString(tomlEnd + "\n")
	return b.String()
}

// codexListHooks runs `codex app-server` in dir and asks it hooks/list.
func codexListHooks(ctx context.Context, bin, dir string) ([]codexListedHook, error) {
	cmd := exec.CommandContext(ctx, bin, "app-server")
	cmd.Dir = dir
	cmd.WaitDelay = 2 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	send := func(v any) error {
		b, _ := json.Marshal(v)
		_, err := in.Write(append(b, '\n'))
		return err
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	await := func(id int) (json.RawMessage, error) {
		for sc.Scan() {
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil || *m.ID != id {
				continue // notifications
			}
			if m.Error != nil {
				return nil, errors.New(m.Error.Message)
			}
			return m.Result, nil
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("it exited without answering (%s)", strings.TrimSpace(tailString(stderr.String(), 400)))
	}
	if err := send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{"clientInfo": map[string]string{"name": "intentgate", "version": "1"}}}); err != nil {
		return nil, err
	}
	if _, err := await(1); err != nil {
		return nil, err
	}
	if err := send(map[string]any{"jsonrpc": "2.0", "method": "initialized"}); err != nil {
		return nil, err
	}
	if err := send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": map[string]any{"cwd": dir}}); err != nil {
		return nil, err
	}
	res, err := await(2)
	if err != nil {
		return nil, err
	}
	var list struct {
		Data []struct {
			Hooks []codexListedHook `json:"hooks"`
		} `json:"data"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		return nil, fmt.Errorf("hooks/list answer: %v", err)
	}
	var all []codexListedHook
	for _, d := range list.Data {
		all = append(all, d.Hooks...)
	}
	return all, nil
}

func tailString(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
