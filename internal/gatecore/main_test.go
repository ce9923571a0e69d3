package gatecore

import (
	"os"
	"testing"

	"github.com/intentgate/intentgate/internal/anchortest"
	"github.com/intentgate/intentgate/orchestration"
)

func TestMain(m *testing.M) { os.Exit(anchortest.Main(m, orchestration.AnchorDirEnv)) }
