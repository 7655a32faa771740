// spin.go - symbolizer fixture: prints the address of main.spin, then spins in it until killed.
package main

import (
	"fmt"
	"os"
	"reflect"
)

//go:noinline
func spin(n int) int {
	for {
		n = n*31 + 7
	}
}

func main() {
	fmt.Printf("spin=%#x\n", reflect.ValueOf(spin).Pointer())
	os.Stdout.Sync()
	spin(len(os.Args))
}
