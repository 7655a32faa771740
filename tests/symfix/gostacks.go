// gostacks.go - unwinder fixture: Go code a frame-pointer walk loses frames of.
//
//	gostacks cpu    main.cpuLoop calls main.leaf, which Go gives no frame (a nosplit leaf
//	                without locals), until killed
//	gostacks block  the main goroutine waits in Accept (one thread in epoll_wait), the others
//	                idle in futex waits, until killed
//
// Each prints "ready" once it is where it stays; cpu first prints where main.leaf, main.cpuLoop
// and main.main begin, which a stripped build's stacks have no names for.
package main

import (
	"fmt"
	"net"
	"os"
	"reflect"
)

//go:nosplit
//go:noinline
func leaf(x uint64) uint64 {
	for i := 0; i < 1000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func cpuLoop(x uint64) uint64 {
	for {
		x = leaf(x)
	}
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "block" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("ready")
		os.Stdout.Sync()
		l.Accept()
		return
	}
	fmt.Printf("leaf=%#x cpuLoop=%#x main=%#x\n", reflect.ValueOf(leaf).Pointer(),
		reflect.ValueOf(cpuLoop).Pointer(), reflect.ValueOf(main).Pointer())
	fmt.Println("ready")
	os.Stdout.Sync()
	fmt.Println(cpuLoop(uint64(len(os.Args))))
}
