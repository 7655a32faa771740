// gotrace writes a Go execution trace of its own to the file named by its argument, with
// runtime/trace, while its goroutines do what lxtrace report counts: wait on a mutex and a
// channel, sleep, and spin on every P. For lxtrace's tests of the traces Go itself writes.
package main

import (
	"os"
	"runtime"
	"runtime/trace"
	"sync"
	"time"
)

func spin(d time.Duration) int {
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); n++ {
	}
	return n
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := trace.Start(f); err != nil {
		panic(err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	ch := make(chan int)
	for i := 0; i < 2*runtime.GOMAXPROCS(0); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 20; k++ {
				mu.Lock()
				spin(200 * time.Microsecond)
				mu.Unlock()
				time.Sleep(time.Millisecond)
			}
		}()
	}
	go func() {
		for k := 0; k < 50; k++ {
			ch <- spin(100 * time.Microsecond)
		}
		close(ch)
	}()
	for range ch {
		time.Sleep(100 * time.Microsecond)
	}
	wg.Wait()
	trace.Stop()
	f.Close()
}
