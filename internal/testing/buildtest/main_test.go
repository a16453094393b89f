package buildtest

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := RemoveLayerCache(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}
