/* mmap: mmap/munmap churn of an anonymous region without touching it (VMA setup and teardown).
 * One op = one mmap + munmap pair. */
#include "bench_common.h"

#include <sys/mman.h>

int main(int argc, char **argv)
{
	struct bench_options options = bench_parse("mmap", argc, argv, 128);
	size_t size = (size_t)options.size_kb * 1024;
	unsigned long long ops = 0;
	double start = bench_now();
	double elapsed;

	do {
		int i;

		for (i = 0; i < 100; i++) {
			void *region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (region == MAP_FAILED) {
				perror("mmap: mmap");
				return 1;
			}
			munmap(region, size);
		}
		ops += 100;
		elapsed = bench_now() - start;
	} while (elapsed < options.seconds);
	bench_report("mmap", ops, elapsed);
	return 0;
}
