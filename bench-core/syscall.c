/* syscall: getppid() in a loop (will-it-scale getppid1): the cost of a minimal system call. */
#include "bench_common.h"

#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct bench_options options = bench_parse("syscall", argc, argv, 0);
	unsigned long long ops = 0;
	double start = bench_now();
	double elapsed;

	do {
		int i;

		/* raw syscall: libc must not cache or short-cut the call */
		for (i = 0; i < 1000; i++) {
			syscall(SYS_getppid);
		}
		ops += 1000;
		elapsed = bench_now() - start;
	} while (elapsed < options.seconds);
	bench_report("syscall", ops, elapsed);
	return 0;
}
