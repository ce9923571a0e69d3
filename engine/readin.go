package engine

import "os"

// ReadFileIn reads name in dir, an opened handle on the directory of
// canonical path rel, with ReadFile's checks: a regular file with a single
// link, not reached through a symlink, the same file that was checked. A
// walk that holds its directories open reads their files at a cost
// independent of their depth.
func ReadFileIn(dir *os.Root, rel, name string) ([]byte, error) {
	b, _, err := readIn(dir, rel, name)
	return b, err
}
