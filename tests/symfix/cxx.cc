// cxx.cc - symbolizer fixture: a templated function in a namespace, whose symbol is mangled.
// Prints "scale=0xADDR", then waits to be killed.
#include <cstdio>
#include <unistd.h>

namespace symfix {
template <typename T> __attribute__((noinline)) T scale(T v)
{
	__asm__ volatile("" ::: "memory");
	return v * 3;
}
} // namespace symfix

int main(int argc, char **)
{
	int r = symfix::scale<int>(argc);

	std::printf("scale=%p r=%d\n", reinterpret_cast<void *>(&symfix::scale<int>), r);
	std::fflush(stdout);
	for (;;)
		pause();
}
