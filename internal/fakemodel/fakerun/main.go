// Command fakerun serves a fakemodel script on loopback until interrupted,
// for capturing an agent's hook payloads by hand:
//
//	fakerun script.json requests.log   (the URL is written to requests.log.url)
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/intentgate/intentgate/internal/fakemodel"
)

func main() {
	raw, _ := os.ReadFile(os.Args[1])
	var steps []fakemodel.Step
	if err := json.Unmarshal(raw, &steps); err != nil {
		panic(err)
	}
	s, err := fakemodel.Start(steps)
	if err != nil {
		panic(err)
	}
	os.WriteFile(os.Args[2]+".url", []byte(s.URL), 0o644)
	fmt.Println(s.URL)
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	<-c
	os.WriteFile(os.Args[2], []byte(strings.Join(s.Requests(), "\n=====\n")), 0o644)
}
