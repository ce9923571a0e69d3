//go:build !unix

package agent

import "time"

func processCPU() time.Duration { return 0 }
