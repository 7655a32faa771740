// spin.go - symbolizer fixture: prints the address of main.spin, then spins in it until killed;
// with the argument "now", spins calling time.Now instead, in the vDSO most of the time.
package main

import (
	"fmt"
	"os"
	"reflect"
	"time"
)

//go:noinline
func spin(n int) int {
	for {
		n = n*31 + 7
	}
}

//go:noinline
func spinNow() {
	for {
		time.Now()
	}
}

func main() {
	fmt.Printf("spin=%#x\n", reflect.ValueOf(spin).Pointer())
	os.Stdout.Sync()
	if len(os.Args) > 1 && os.Args[1] == "now" {
		spinNow()
	}
	spin(len(os.Args))
}
