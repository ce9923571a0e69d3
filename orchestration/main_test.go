package orchestration

import (
	"os"
	"testing"

	"github.com/intentgate/intentgate/internal/anchortest"
)

func TestMain(m *testing.M) { os.Exit(anchortest.Main(m, AnchorDirEnv)) }
