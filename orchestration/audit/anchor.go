package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/intentgate/intentgate/internal/fsx"
	"github.com/intentgate/intentgate/orchestration"
)

// FaultAnchor: the checkpoints no longer hold what was anchored outside the
// workspace (the last seal made on this machine, or the team's remote).
const FaultAnchor = "anchor"

// anchored is the last checkpoint sealed on this machine, kept in the
// workspace's anchor directory (orchestration.AnchorDir), outside anything a
// command can write.
type anchored struct {
	Ledger   string    `json:"ledger"`
	Commit   string    `json:"commit"`
	Records  int       `json:"records"`
	Bytes    int64     `json:"bytes"`
	SHA256   string    `json:"sha256"`
	LastLine string    `json:"last_line,omitempty"`
	Time     time.Time `json:"time"`
}

func anchorFile(ws, key string) (string, error) {
	dir, err := orchestration.AnchorDir(ws)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, "checkpoint-"+hex.EncodeToString(sum[:6])+".json"), nil
}

func saveAnchor(ws string, cp *Checkpoint) error {
	p, err := anchorFile(ws, cp.Ledger)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(anchored{Ledger: cp.Ledger, Commit: cp.Commit, Records: cp.Records, Bytes: cp.Bytes,
		SHA256: cp.SHA256, LastLine: cp.LastLine, Time: cp.Time}, "", "  ")
	if err != nil {
		return err
	}
	return fsx.Replace(p, append(b, '\n'), 0o600, fsx.Durable)
}

func loadAnchor(ws, key string) (*anchored, error) {
	p, err := anchorFile(ws, key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var a anchored
	if err := json.Unmarshal(b, &a); err != nil || a.Ledger != key || len(a.SHA256) != 64 {
		return nil, fmt.Errorf("the checkpoint anchor %s is damaged (%v): seal again once the ledger verifies", p, err)
	}
	return &a, nil
}

func (a *anchored) checkpoint() *Checkpoint {
	return &Checkpoint{Format: checkpointFormat, Ledger: a.Ledger, Records: a.Records, Bytes: a.Bytes,
		SHA256: a.SHA256, LastLine: a.LastLine, Time: a.Time, Commit: a.Commit}
}

// remoteRef is where verify keeps the copy of a remote's checkpoint ref.
func remoteRef(remote string) string { return "refs/intentgate/remotes/" + remote + "/checkpoints" }

// defaultRemote is "origin" when the repository has it, else "".
func defaultRemote(repo *git.Repository) string {
	if _, err := repo.Remote("origin"); err == nil {
		return "origin"
	}
	return ""
}

// gitCmd runs git in dir and returns its combined output.
func gitCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return out, nil
}

// fetchRemoteCheckpoints copies remote's checkpoint ref to remoteRef(remote)
// and says whether the remote has one.
func fetchRemoteCheckpoints(ws, remote string) (bool, error) {
	out, err := gitCmd(ws, "fetch", "--no-tags", "--quiet", remote, "+"+CheckpointRef+":"+remoteRef(remote))
	if err != nil {
		if bytes.Contains(out, []byte("couldn't find remote ref")) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// PushCheckpoints sends the checkpoint ref to remote, fast-forward only: the
// remote refuses a ref that moved back. Make the remote refuse deletions too
// (git config receive.denyDeletes true) and it is the anchor no local shell
// can move.
func PushCheckpoints(workspace, remote string) error {
	if workspace == "" {
		workspace = "."
	}
	_, err := gitCmd(workspace, "push", "--quiet", remote, CheckpointRef+":"+CheckpointRef)
	return err
}
