/* Shared helpers of the bench-core microbenchmarks: option parsing, timing, LKP-style output. */
#ifndef BISECTD_BENCH_COMMON_H
#define BISECTD_BENCH_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct bench_options {
	double seconds;    /* how long to measure (--seconds S) */
	long size_kb;      /* region size for the memory benchmarks (--size-kb N) */
};

/* Wall clock in seconds (CLOCK_MONOTONIC). */
static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void bench_usage(const char *name)
{
	fprintf(stderr, "usage: %s [--seconds S] [--size-kb N]\n", name);
	exit(2);
}

/* Parses --seconds S (default 2) and --size-kb N (default `default_size_kb`); exits 2 on bad input. */
static inline struct bench_options bench_parse(const char *name, int argc, char **argv, long default_size_kb)
{
	struct bench_options options = { 2.0, default_size_kb };
	int i;

	for (i = 1; i < argc; i++) {
		char *end = NULL;

		if (i + 1 >= argc) {
			bench_usage(name);
		}
		if (strcmp(argv[i], "--seconds") == 0) {
			options.seconds = strtod(argv[++i], &end);
			if (*end != '\0' || !(options.seconds > 0 && options.seconds <= 3600)) {
				fprintf(stderr, "%s: --seconds: expected a number in (0, 3600], got '%s'\n", name, argv[i]);
				exit(2);
			}
		} else if (strcmp(argv[i], "--size-kb") == 0) {
			options.size_kb = strtol(argv[++i], &end, 10);
			if (*end != '\0' || options.size_kb < 4 || options.size_kb > 4 * 1024 * 1024) {
				fprintf(stderr, "%s: --size-kb: expected 4..4194304, got '%s'\n", name, argv[i]);
				exit(2);
			}
		} else {
			bench_usage(name);
		}
	}
	return options;
}

/* Prints the LKP-style result lines: <name>.ops_per_sec (primary), .ops, .seconds, .ns_per_op. */
static inline void bench_report(const char *name, unsigned long long ops, double seconds)
{
	printf("%s.ops_per_sec: %.1f\n", name, (double)ops / seconds);
	printf("%s.ops: %llu\n", name, ops);
	printf("%s.seconds: %.3f\n", name, seconds);
	printf("%s.ns_per_op: %.1f\n", name, ops ? seconds * 1e9 / (double)ops : 0.0);
	fflush(stdout);
}

#endif
