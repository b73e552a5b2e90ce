/* pipe: one-byte ping-pong between two processes over two pipes (will-it-scale pipe1).
 * One op = one round trip (two writes, two reads, two wakeups). */
#include "bench_common.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* The child echoes every byte back until its input closes. */
static void echo_loop(int in, int out)
{
	char byte;

	while (read(in, &byte, 1) == 1) {
		if (write(out, &byte, 1) != 1) {
			break;
		}
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	struct bench_options options = bench_parse("pipe", argc, argv, 0);
	int to_child[2], to_parent[2];
	unsigned long long ops = 0;
	double start, elapsed;
	char byte = 'x';
	pid_t child;

	if (pipe(to_child) != 0 || pipe(to_parent) != 0) {
		perror("pipe: pipe");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("pipe: fork");
		return 1;
	}
	if (child == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		echo_loop(to_child[0], to_parent[1]);
	}
	close(to_child[0]);
	close(to_parent[1]);
	start = bench_now();
	do {
		int i;

		for (i = 0; i < 100; i++) {
			if (write(to_child[1], &byte, 1) != 1 || read(to_parent[0], &byte, 1) != 1) {
				perror("pipe: round trip");
				kill(child, SIGKILL);
				return 1;
			}
		}
		ops += 100;
		elapsed = bench_now() - start;
	} while (elapsed < options.seconds);
	close(to_child[1]);
	waitpid(child, NULL, 0);
	bench_report("pipe", ops, elapsed);
	return 0;
}
