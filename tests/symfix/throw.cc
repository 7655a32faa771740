// throw.cc - unwinding fixture: catcher() calls thrower(), which throws at once, N times (the
// argument); built as Debian builds C++, without frame pointers, so that samples taken inside
// the exception's unwinding (libgcc_s, libstdc++) can only be walked by their CFI.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

__attribute__((noinline)) int thrower(int i)
{
	if (i >= 0)
		throw std::runtime_error("thrown");
	return i;
}

__attribute__((noinline)) int catcher(int i)
{
	try {
		return thrower(i);
	} catch (const std::exception &) {
		return 1;
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? std::atol(argv[1]) : 1, sum = 0;

	for (long i = 0; i < n; i++)
		sum += catcher(static_cast<int>(i));
	std::printf("%ld\n", sum);
	return 0;
}
