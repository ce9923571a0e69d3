package agent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"testing"

	"github.com/intentgate/intentgate/internal/fakemodel"
)

// fakeScriptEnv, when set, makes the test binary the fake model server of
// the script in that file: it prints its URL and serves until stdin ends.
const fakeScriptEnv = "INTENTGATE_AGENT_TEST_FAKEMODEL"

func TestMain(m *testing.M) {
	if path := os.Getenv(fakeScriptEnv); path != "" {
		serveFake(path)
		return
	}
	os.Exit(m.Run())
}

func serveFake(path string) {
	b, err := os.ReadFile(path)
	var turns []fakemodel.Turn
	if err == nil {
		err = json.Unmarshal(b, &turns)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake model:", err)
		os.Exit(2)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake model:", err)
		os.Exit(2)
	}
	fmt.Printf("http://%s\n", l.Addr())
	go http.Serve(l, fakemodel.New(turns...))
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// fakeProcess runs the fake model server in a child process, so that the
// CPU time of this process is the client's alone; it returns its URL.
func fakeProcess(tb testing.TB, turns []fakemodel.Turn) string {
	tb.Helper()
	b, err := json.Marshal(turns)
	if err != nil {
		tb.Fatal(err)
	}
	script := tb.TempDir() + "/script.json"
	if err := os.WriteFile(script, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fakeScriptEnv+"="+script)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		tb.Fatalf("fake model process: %v", err)
	}
	return line[:len(line)-1]
}
