/* page_fault: mmap an anonymous region, write one byte per page, munmap (will-it-scale page_fault1).
 * One op = one page fault on fresh anonymous memory. */
#include "bench_common.h"

#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct bench_options options = bench_parse("page_fault", argc, argv, 4096);
	size_t size = (size_t)options.size_kb * 1024;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long long ops = 0;
	double start = bench_now();
	double elapsed;

	do {
		char *region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		size_t offset;

		if (region == MAP_FAILED) {
			perror("page_fault: mmap");
			return 1;
		}
		for (offset = 0; offset < size; offset += page) {
			region[offset] = 1;
			ops++;
		}
		munmap(region, size);
		elapsed = bench_now() - start;
	} while (elapsed < options.seconds);
	bench_report("page_fault", ops, elapsed);
	return 0;
}
