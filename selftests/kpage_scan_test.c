// SPDX-License-Identifier: GPL-2.0
/*
 * What a distribution user and an mm developer do with the struct pages the
 * series gives new meanings to, on a kernel booted with the options they
 * debug with (ci/selftests.sh boots it with hugetlb_free_vmemmap=on,
 * init_on_free=1, debug_pagealloc=on, page_owner=on ...):
 *
 *   - fill the HugeTLB pool, use every page, let a forked child COW half
 *     of them, unmap and dissolve the pool (its vmemmap is restored when
 *     HVO is on), three rounds;
 *   - read all of /proc/kpagecgroup, /proc/kpageflags and /proc/kpagecount,
 *     which look at every struct page, freed or not;
 *   - read all of /sys/kernel/debug/page_owner when page_owner is on.
 *
 * A case passes when the operation completes; what the kernel thinks of
 * it (Bad page, BUG, WARNING, Oops) is judged from the console by
 * ci/selftests_report.py.  Output is TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define POOL_PAGES	32
#define ROUNDS		3

static int test_nr, failures;

static void result(bool ok, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void result(bool ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n%sok %d %s\n", ok ? "" : "not ", ++test_nr, what);
	if (!ok)
		failures++;
}

static void skip(const char *what, const char *why)
{
	printf("ok %d %s # SKIP %s\n", ++test_nr, what, why);
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", v) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/*
 * One round: a pool of POOL_PAGES default-size huge pages; half of them
 * mapped and written by the parent, the other half left for the child's
 * COW copies of them; then everything unmapped and the pool dissolved.
 */
static void hugetlb_round(int round, long hpage)
{
	const char *nr = "/proc/sys/vm/nr_hugepages";
	long got, left, n;
	char what[96];
	char *area;
	pid_t pid;
	int status;
	long i;

	snprintf(what, sizeof(what), "hugetlb pool round %d: fill, map, COW in a child, dissolve", round);
	if (write_long(nr, POOL_PAGES) || (got = read_long(nr)) < 2) {
		skip(what, "no huge pages could be allocated");
		return;
	}
	n = got / 2;
	area = mmap(NULL, n * hpage, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (area == MAP_FAILED) {
		result(false, what, "mmap of %ld huge pages: %s", n, strerror(errno));
		write_long(nr, 0);
		return;
	}
	for (i = 0; i < n; i++)
		memset(area + i * hpage, 0x5a + round, hpage);
	pid = fork();
	if (!pid) {
		for (i = 0; i < n; i++)
			area[i * hpage] = 1;	/* hugetlb COW */
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		result(false, what, "fork: %s", strerror(errno));
		munmap(area, n * hpage);
		write_long(nr, 0);
		return;
	}
	for (i = 0; i < n; i++)
		if (area[i * hpage] != 0x5a + round)
			break;
	munmap(area, n * hpage);
	write_long(nr, 0);
	left = read_long(nr);
	result(WIFEXITED(status) && !WEXITSTATUS(status) && i == n && left == 0, what,
	       "pool of %ld, %ld mapped, child %s, parent's data %s, %ld left after dissolving",
	       got, n, WIFEXITED(status) && !WEXITSTATUS(status) ? "wrote all" : "failed",
	       i == n ? "intact" : "changed", left);
}

/* Read a whole file in chunks, as a tool scanning it would. */
static void read_all(const char *path, size_t chunk)
{
	char what[96];
	ssize_t r;
	size_t total = 0;
	char *buf;
	int fd;

	snprintf(what, sizeof(what), "read all of %s", path);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		if (errno == ENOENT && strstr(path, "page_owner"))
			skip(what, "page_owner is not enabled (boot with page_owner=on)");
		else if (errno == ENOENT)
			skip(what, "the kernel has no such file");
		else
			result(false, what, "open: %s", strerror(errno));
		return;
	}
	buf = malloc(chunk);
	if (!buf) {
		result(false, what, "malloc: %s", strerror(errno));
		close(fd);
		return;
	}
	while ((r = read(fd, buf, chunk)) > 0)
		total += r;
	if (r < 0 && errno == EINVAL && !total && strstr(path, "page_owner"))
		skip(what, "page_owner is not enabled (boot with page_owner=on)");
	else
		result(r == 0, what, "%zu bytes read%s%s", total,
		       r < 0 ? ", then: " : "", r < 0 ? strerror(errno) : "");
	free(buf);
	close(fd);
}

int main(void)
{
	const char *nr = "/proc/sys/vm/nr_hugepages";
	long hpage, orig;
	int round;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* It changes the HugeTLB pool: only ever inside the test VM. */
	if (access("/selftests-initramfs", F_OK)) {
		printf("Bail out! not in the make selftests initramfs\n");
		return 1;
	}
	printf("TAP version 13\n1..%d\n", ROUNDS + 4);
	hpage = read_long("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
	orig = read_long(nr);
	for (round = 1; round <= ROUNDS; round++) {
		if (hpage <= 0)
			skip("hugetlb pool round", "no PMD size known");
		else
			hugetlb_round(round, hpage);
	}
	/* Give the programs after this one the pool they had. */
	if (orig > 0)
		write_long(nr, orig);
	read_all("/proc/kpagecgroup", 1 << 16);
	read_all("/proc/kpageflags", 1 << 16);
	read_all("/proc/kpagecount", 1 << 16);
	read_all("/sys/kernel/debug/page_owner", 1 << 16);
	return failures ? 1 : 0;
}
