package orchestration

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/intentgate/intentgate/internal/fsx"
)

// The anchor is the per-workspace state intentgate keeps outside the
// workspace, where neither the governed agent's file tools nor a confined
// command can write: the user's configuration directory
// (os.UserConfigDir()/intentgate/workspaces/ID, mode 0700, files 0600).
// git config and refs are not such a place: they live in .git, inside the
// workspace, which an unconfined agent's shell writes like any other file.
//
// It holds the workspace's secret key, which authenticates the state a
// decision rests on (session files, pending pictures, the intent map's
// summary), and the digest of the last checkpoint sealed here, so that verify
// notices a checkpoint ref that was deleted or moved back.
//
// The agent runs as the same user, so an agent whose shell is not confined
// can read the key and rewrite this directory too: the anchor raises the bar
// to "leave the workspace", and the checkpoint pushed to the team's remote
// (trace seal --push) is the anchor that holds beyond this machine.

// AnchorDirEnv overrides the anchor's base directory (tests, and machines
// without a configuration directory).
const AnchorDirEnv = "INTENTGATE_ANCHOR_DIR"

// AnchorDir returns the anchor directory of the workspace ws, creating it.
func AnchorDir(ws string) (string, error) {
	base := os.Getenv(AnchorDirEnv)
	if base == "" {
		cfg, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("anchor: no configuration directory for intentgate's per-workspace key (set %s): %w", AnchorDirEnv, err)
		}
		base = filepath.Join(cfg, "intentgate", "workspaces")
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	sum := sha256.Sum256([]byte(abs))
	dir := filepath.Join(base, hex.EncodeToString(sum[:12]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("anchor: %w", err)
	}
	return dir, nil
}

// WorkspaceKey returns the workspace's 32-byte secret, made on first use.
func WorkspaceKey(ws string) ([]byte, error) {
	dir, err := AnchorDir(ws)
	if err != nil {
		return nil, err
	}
	p := filepath.Join(dir, "key")
	b, err := os.ReadFile(p)
	if err == nil && len(b) == 32 {
		return b, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("anchor: %w", err)
	}
	if err == nil {
		return nil, fmt.Errorf("anchor: %s is not a 32-byte key; remove it to make a new one (sessions of this workspace start over)", p)
	}
	lock, err := fsx.Acquire(p + ".lock")
	if err != nil {
		return nil, fmt.Errorf("anchor: %w", err)
	}
	defer lock.Release()
	if b, err := os.ReadFile(p); err == nil && len(b) == 32 {
		return b, nil // made meanwhile
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := fsx.Replace(p, key, 0o600, fsx.Settled); err != nil {
		return nil, fmt.Errorf("anchor: %w", err)
	}
	return key, nil
}

// MAC is the hex HMAC-SHA256 of the parts under key, each part
// length-prefixed so that no two lists of parts share a MAC.
func MAC(key []byte, parts ...[]byte) string {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		var n [8]byte
		for i, l := 0, uint64(len(p)); i < 8; i++ {
			n[i] = byte(l >> (8 * i))
		}
		m.Write(n[:])
		m.Write(p)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// MACEqual compares two MACs in constant time.
func MACEqual(a, b string) bool { return hmac.Equal([]byte(a), []byte(b)) }

// pendingFile is where the digest of a pending picture (what a pre-tool event
// left for its post event) is noted outside the workspace.
func pendingFile(ws, session, key string) (string, error) {
	dir, err := AnchorDir(ws)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(session + "\x00" + key))
	return filepath.Join(dir, "pending", hex.EncodeToString(sum[:16])), nil
}

// NotePending records, outside the workspace, that session left a pending
// state under key whose bytes have the SHA-256 digest (hex).
func NotePending(ws, session, key, digest string) error {
	p, err := pendingFile(ws, session, key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("anchor: %w", err)
	}
	return fsx.Replace(p, []byte(digest), 0o600, fsx.Settled)
}

// TakePending returns and forgets the digest NotePending recorded, "" when
// there is none.
func TakePending(ws, session, key string) (string, error) {
	p, err := pendingFile(ws, session, key)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("anchor: %w", err)
	}
	os.Remove(p)
	return string(b), nil
}
