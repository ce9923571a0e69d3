//go:build windows

package tools

import (
	"context"
	"io/fs"
	"os/exec"
)

func shell(ctx context.Context, command string) *exec.Cmd {
	return exec.CommandContext(ctx, "cmd.exe", "/C", command)
}

func inode(fs.FileInfo) uint64 { return 0 }
