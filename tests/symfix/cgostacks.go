// cgostacks.go - unwinder fixture: a cgo call, whose C frames gcc gives no frame pointer and
// only .eh_frame describes, over the Go frames that called it.
//
//	cgostacks block  the main goroutine calls C, which waits in read() of a pipe no one
//	                writes, until killed; meanwhile Go's own traceback of every goroutine
//	                is printed, then "ready"
//	cgostacks cpu MS  the main goroutine calls C's c_spin MS milliseconds long, its samples
//	                in c_leaf
package main

/*
#include <stdint.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static uint64_t c_leaf(uint64_t x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noinline)) uint64_t c_spin(long ms)
{
	struct timespec t0, t;
	uint64_t x = 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		x = c_leaf(x);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	return x;
}

__attribute__((noinline)) static int c_block(int fd)
{
	char b;

	return (int)read(fd, &b, 1);
}

__attribute__((noinline)) int c_wait(int fd)
{
	return c_block(fd) + 1;
}
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

//go:noinline
func waitInC(fd int) int {
	return int(C.c_wait(C.int(fd)))
}

//go:noinline
func spinInC(ms int) uint64 {
	return uint64(C.c_spin(C.long(ms)))
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "block" {
		var p [2]int
		if syscall.Pipe(p[:]) != nil {
			os.Exit(1)
		}
		go func() {
			time.Sleep(300 * time.Millisecond)
			buf := make([]byte, 1<<16)
			os.Stdout.Write(buf[:runtime.Stack(buf, true)])
			fmt.Println("ready")
		}()
		os.Exit(waitInC(p[0]))
	}
	if len(os.Args) == 3 && os.Args[1] == "cpu" {
		ms, err := strconv.Atoi(os.Args[2])
		if err == nil {
			fmt.Println(spinInC(ms) == 42)
			return
		}
	}
	fmt.Fprintln(os.Stderr, "usage: cgostacks block | cpu MS")
	os.Exit(2)
}
