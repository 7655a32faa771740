// main.go - a Go program whose scheduler waits are known, traced by Go's own runtime/trace:
// on one P, two goroutines hand a value back and forth 200 times, each spinning 100 µs
// between, so each waits for the P about as long as the other spins. bench/go_schedwait.sh
// compares Go 1.23's /sched profile of this trace with its goroutine table's "Sched wait
// time": the viewer's over-count in a trace Go itself wrote (docs/format.md §18.6.1).
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/trace"
	"time"
)

func spin(d time.Duration) {
	for t := time.Now(); time.Since(t) < d; {
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go_schedwait TRACE")
		os.Exit(2)
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	runtime.GOMAXPROCS(1)
	if err := trace.Start(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	a, b := make(chan int), make(chan int)
	go func() {
		for v := range a {
			spin(100 * time.Microsecond)
			b <- v
		}
	}()
	for i := 0; i < 200; i++ {
		a <- i
		<-b
		spin(100 * time.Microsecond)
	}
	trace.Stop()
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
