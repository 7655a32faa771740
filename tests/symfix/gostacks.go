// gostacks.go - unwinder fixture: Go code a frame-pointer walk loses frames of.
//
//	gostacks cpu MS FILE  main.cpuLoop calls main.leaf, which Go gives no frame (a nosplit
//	                leaf without locals), for MS milliseconds
//	gostacks block  the main goroutine waits in Accept (one thread in epoll_wait), the others
//	                idle in futex waits, until killed
//	gostacks pingpong N  two threads hand a byte back and forth N times through pipes, in
//	                blocking reads (bench/stacks.sh: a Go program's blocking stacks)
//
// block prints "ready" once it is where it stays; cpu first writes to FILE where main.leaf,
// main.cpuLoop and main.main begin, which a stripped build's stacks have no names for.
package main

import (
	"fmt"
	"net"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
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
func cpuLoop(x uint64, stop *int32) uint64 {
	for atomic.LoadInt32(stop) == 0 {
		x = leaf(x)
	}
	return x
}

// pong reads a byte from in and writes it to out n times, on a thread of its own: the reads
// block the thread, not only the goroutine (raw pipe descriptors, no netpoller).
func pong(in, out int, n int, done chan<- bool) {
	runtime.LockOSThread()
	b := []byte{0}
	for i := 0; i < n; i++ {
		if r, _ := syscall.Read(in, b); r != 1 {
			break
		}
		syscall.Write(out, b)
	}
	done <- true
}

func pingpong(n int) {
	var a, b [2]int
	if syscall.Pipe(a[:]) != nil || syscall.Pipe(b[:]) != nil {
		os.Exit(1)
	}
	done := make(chan bool)
	go pong(a[0], b[1], n, done)
	runtime.LockOSThread()
	buf := []byte{0}
	for i := 0; i < n; i++ {
		syscall.Write(a[1], buf)
		syscall.Read(b[0], buf)
	}
	<-done
}

func main() {
	if len(os.Args) > 2 && os.Args[1] == "pingpong" {
		n, _ := strconv.Atoi(os.Args[2])
		pingpong(n)
		return
	}
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
	if len(os.Args) < 4 || os.Args[1] != "cpu" {
		fmt.Fprintln(os.Stderr, "usage: gostacks cpu MS FILE | block | pingpong N")
		os.Exit(2)
	}
	ms, _ := strconv.Atoi(os.Args[2])
	addrs := fmt.Sprintf("leaf=%#x cpuLoop=%#x main=%#x\n", reflect.ValueOf(leaf).Pointer(),
		reflect.ValueOf(cpuLoop).Pointer(), reflect.ValueOf(main).Pointer())
	if os.WriteFile(os.Args[3], []byte(addrs), 0o644) != nil {
		os.Exit(1)
	}
	var stop int32
	go func() {
		time.Sleep(time.Duration(ms) * time.Millisecond)
		atomic.StoreInt32(&stop, 1)
	}()
	fmt.Println(cpuLoop(uint64(len(os.Args)), &stop))
}
