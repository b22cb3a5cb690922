// SPDX-License-Identifier: GPL-2.0
/*
 * folio_bench - micro-benchmark of PTE-mapped large anonymous folios.
 *
 * For small (base page) folios and each size in
 * /sys/kernel/mm/transparent_hugepage/hugepages-<N>kB, THP is configured to
 * use only that size and, on a fresh populated region of BENCH_MB MiB, we time
 *   munmap            munmap() of the whole region
 *   fork              fork() seen by the parent (child waits, exits later)
 *   cow-byte          parent writes a byte per page while a child shares it
 *   reuse-byte        parent writes a byte per page after the child exited
 *   child-reuse-byte  child writes a byte per page after the parent unmapped
 * PMD-sized folios are PTE-mapped on purpose (an mprotect() of one page per
 * PMD splits the PMD mapping, not the folio), so every size exercises the
 * PTE-mapped large folio paths.
 *
 * Run as /init (PID 1) of an initramfs under QEMU -no-reboot. Boot params
 * BENCH_REPS=5 BENCH_MB=32 BENCH_SIZES=4,64,2048 (KiB filter) reach init as
 * env vars. At the end it prints BENCH-DONE and reboots, ending QEMU.
 * Not PID 1: folio_bench [-r reps] [-m mb] [-s kb,...] [-w]. Without -w no
 * sysfs file is written and the current setting is measured as size_kb=0;
 * with -w (root) sizes are configured and the old values restored at exit.
 *
 * As PID 1 we put khugepaged to sleep for a day, scanning one page a pass:
 * it would otherwise collapse the PTE-mapped PMD-sized folios back into PMD
 * mappings (or copy them) at any time, and under QEMU -icount virtual time
 * runs fast. Defrag is left alone. MADV_(NO)HUGEPAGE is never used.
 *
 * Output lines: BENCH-START, BENCH-KERNEL, BENCH-CMDLINE, BENCH-CONFIG,
 * BENCH-INFO size_kb=S thp_pages=n pages=N anon_huge_kb=x (+ probe lines),
 * BENCH,<size_kb>,<op>,<rep>,<ns>, BENCH-WARN, BENCH-ERROR: and BENCH-DONE.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#ifndef THP_DIR		/* overridable for testing against fake files */
#define THP_DIR		"/sys/kernel/mm/transparent_hugepage"
#endif
#define MAX_SIZES	32
#define KPF_HEAD	15	/* KPF_COMPOUND_HEAD */
#define KPF_TAIL	16	/* KPF_COMPOUND_TAIL */
#define KPF_THP		22
#define PM_PRESENT	(1ULL << 63)
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define FILL_BYTE	((char)0xa5)	/* never equal to rep_val() */
#define BIT(v, n)	((int)((v) >> (n) & 1))

enum { OP_MUNMAP, OP_FORK, OP_COW, OP_REUSE, OP_CHILD_REUSE, NR_OPS };
static const char *const op_names[NR_OPS] = {
	"munmap", "fork", "cow-byte", "reuse-byte", "child-reuse-byte",
};

static int is_init, may_write;
static unsigned long reps = 5, mb = 32;
static size_t page_sz, page_kb, pmd_sz, region_len;
static unsigned long thp_kb[MAX_SIZES];	/* hugepages-<N>kB, ascending */
static unsigned long want_kb[MAX_SIZES];	/* BENCH_SIZES filter */
static int nr_thp, nr_want;

/* Original sysfs values, restored when not PID 1. */
static struct { char path[128]; char val[64]; } saved[MAX_SIZES + 1];
static int nr_saved;

/* Only open/write/close, so that the signal handler may call it too. */
static void restore_knobs(void)
{
	const char *val;
	ssize_t ret;
	int fd;

	while (nr_saved > 0) {
		val = saved[--nr_saved].val;
		fd = open(saved[nr_saved].path, O_WRONLY);
		if (fd < 0)
			continue;
		ret = write(fd, val, strlen(val));
		(void)ret;	/* nothing better to do on failure */
		close(fd);
	}
}

static void on_signal(int sig)
{
	restore_knobs();
	_exit(128 + sig);
}

static void __attribute__((noreturn)) finish(int status)
{
	if (!status)
		printf("BENCH-DONE\n");
	fflush(stdout);
	if (!is_init) {
		restore_knobs();
		exit(status);
	}
	sync();
	reboot(RB_AUTOBOOT);
	for (;;)	/* PID 1 must never exit: the kernel would panic */
		pause();
}

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	printf("BENCH-ERROR: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	finish(1);
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Read a small text file and strip the trailing newline. */
static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	if (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	return n;
}

/* When not PID 1, first save the active value ("a [b] c" -> "b"). */
static int write_knob(const char *path, const char *val)
{
	char cur[64], *b, *e;
	ssize_t len = strlen(val);
	int i, fd, ok;

	for (i = 0; !is_init && i < nr_saved; i++)
		if (!strcmp(saved[i].path, path))
			break;
	if (!is_init && i == nr_saved) {
		if (nr_saved > MAX_SIZES || read_file(path, cur, sizeof(cur)) < 0)
			return -1;
		b = strchr(cur, '[');
		e = b ? strchr(b, ']') : NULL;
		if (b && e)
			*e = 0;
		snprintf(saved[i].path, sizeof(saved[i].path), "%s", path);
		strcpy(saved[i].val, b && e ? b + 1 : cur);
		nr_saved++;
	}
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ok = write(fd, val, len) == len;
	close(fd);
	return ok ? 0 : -1;
}

/* Enable exactly one folio size; size_kb == page_kb means THP off. */
static int configure(unsigned long size_kb)
{
	char path[128];
	int i;

	if (!nr_thp)
		return 0;	/* kernel without mTHP: small folios only */
	for (i = 0; i < nr_thp; i++) {
		snprintf(path, sizeof(path), THP_DIR "/hugepages-%lukB/enabled",
			 thp_kb[i]);
		if (write_knob(path, thp_kb[i] == size_kb ? "always" : "never"))
			return -1;
	}
	return write_knob(THP_DIR "/enabled",
			  size_kb > page_kb ? "always" : "never");
}

static void scan_sizes(void)
{
	DIR *d = opendir(THP_DIR);
	struct dirent *de;
	unsigned long kb;
	char buf[64], path[300];
	int i;

	while (d && (de = readdir(d)) && nr_thp < MAX_SIZES) {
		if (sscanf(de->d_name, "hugepages-%lukB", &kb) != 1)
			continue;
		/* Sizes anonymous memory cannot use (order 1) only have shmem_enabled. */
		snprintf(path, sizeof(path), THP_DIR "/%s/enabled", de->d_name);
		if (access(path, F_OK))
			continue;
		for (i = nr_thp++; i > 0 && thp_kb[i - 1] > kb; i--)
			thp_kb[i] = thp_kb[i - 1];	/* keep sorted */
		thp_kb[i] = kb;
	}
	if (d)
		closedir(d);
	if (read_file(THP_DIR "/hpage_pmd_size", buf, sizeof(buf)) > 0)
		pmd_sz = strtoul(buf, NULL, 10);
	else if (nr_thp)
		pmd_sz = thp_kb[nr_thp - 1] * 1024;
	if (!pmd_sz || (pmd_sz & (pmd_sz - 1)))
		pmd_sz = 2UL << 20;
}

static void touch(char *p, char val)
{
	volatile char *q = p;
	size_t off;

	for (off = 0; off < region_len; off += page_sz)
		q[off] = val;
}

/*
 * Fresh, PMD-aligned, populated region. For the PMD size (and for "as
 * configured", which may include it) each PMD mapping is split by
 * mprotect()ing one page: the folios stay PMD-sized but are PTE-mapped.
 */
static char *region_new(unsigned long size_kb)
{
	size_t total = region_len + pmd_sz, head, off;
	char *raw, *p;

	raw = mmap(NULL, total, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		die("mmap %zu bytes: %s", total, strerror(errno));
	p = (char *)(((uintptr_t)raw + pmd_sz - 1) & ~(uintptr_t)(pmd_sz - 1));
	head = p - raw;
	if (head)
		munmap(raw, head);
	munmap(p + region_len, total - head - region_len);
	touch(p, FILL_BYTE);
	if (size_kb && size_kb * 1024 != pmd_sz)
		return p;
	for (off = 0; off + pmd_sz <= region_len; off += pmd_sz)
		if (mprotect(p + off, page_sz, PROT_READ) ||
		    mprotect(p + off, page_sz, PROT_READ | PROT_WRITE))
			die("mprotect: %s", strerror(errno));
	return p;
}

static void wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("child failed (status 0x%x)", status);
}

/*
 * Child. Except for reuse-byte (where the parent waits for it to exit), it
 * blocks until the parent closes go[1], so that its exit, and with it the
 * zap of its page tables, never falls into a timed section: under -icount
 * the virtual clock counts the instructions of every vCPU. For cow-byte it
 * first says it is ready, so that its return from fork is not timed either.
 */
static void __attribute__((noreturn))
child(int op, char *p, char val, int go[2], int ready[2], int res[2])
{
	unsigned long long t0, ns;
	char c = 0;

	if (op == OP_REUSE)
		_exit(0);
	close(go[1]);
	if (op == OP_COW && write(ready[1], &c, 1) != 1)
		_exit(1);
	while (read(go[0], &c, 1) < 0 && errno == EINTR)
		;
	if (op != OP_CHILD_REUSE)
		_exit(0);
	t0 = now_ns();
	touch(p, val);
	ns = now_ns() - t0;
	_exit(write(res[1], &ns, sizeof(ns)) != sizeof(ns));
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* One sample of one operation on a fresh region; returns nanoseconds. */
static unsigned long long run_op(int op, unsigned long size_kb, char val)
{
	char *p = region_new(size_kb);
	int go[2] = { -1, -1 }, ready[2] = { -1, -1 }, res[2] = { -1, -1 };
	unsigned long long t0, ns;
	pid_t pid;
	char c;

	if (op == OP_MUNMAP) {
		t0 = now_ns();
		if (munmap(p, region_len))
			die("munmap: %s", strerror(errno));
		return now_ns() - t0;
	}
	if ((op != OP_REUSE && pipe(go)) || (op == OP_COW && pipe(ready)) ||
	    (op == OP_CHILD_REUSE && pipe(res)))
		die("pipe: %s", strerror(errno));
	t0 = now_ns();
	pid = fork();
	ns = now_ns() - t0;
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid)
		child(op, p, val, go, ready, res);
	close_fd(go[0]);
	close_fd(ready[1]);
	close_fd(res[1]);
	if (op == OP_COW && read(ready[0], &c, 1) != 1)
		die("cow-byte: the child did not start");
	close_fd(ready[0]);
	if (op == OP_REUSE)
		wait_child(pid);	/* folios are exclusive again */
	if (op == OP_COW || op == OP_REUSE) {
		t0 = now_ns();
		touch(p, val);
		ns = now_ns() - t0;
	}
	if (op == OP_CHILD_REUSE)
		munmap(p, region_len);	/* child's folios become exclusive */
	close_fd(go[1]);	/* release the child */
	if (op == OP_CHILD_REUSE && read(res[0], &ns, sizeof(ns)) != sizeof(ns))
		die("child-reuse-byte: no result from the child");
	close_fd(res[0]);
	if (op != OP_REUSE)
		wait_child(pid);
	if (op != OP_CHILD_REUSE)
		munmap(p, region_len);
	return ns;
}

/* Sum AnonHugePages (PMD mappings) of the VMAs overlapping [lo, hi). */
static long anon_huge_kb(char *lo, char *hi)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long start, end, kb;
	char line[256];
	long total = 0;
	int in = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
			in = start < (uintptr_t)hi && end > (uintptr_t)lo;
		else if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			total += kb;
	}
	fclose(f);
	return total;
}

/* Print what backs page i; return its folio size in KiB (0: unknown). */
static size_t probe(unsigned long size_kb, const char *what, size_t i,
		    size_t n, const uint64_t *pfn, const uint64_t *fl)
{
	size_t k = 1;

	while (BIT(fl[i], KPF_HEAD) && i + k < n &&
	       BIT(fl[i + k], KPF_TAIL) && pfn[i + k] == pfn[i] + k)
		k++;
	if (!pfn[i] || BIT(fl[i], KPF_TAIL))
		k = 0;
	printf("BENCH-INFO size_kb=%lu probe=%s pfn=0x%llx thp=%d head=%d tail=%d folio_kb=%zu\n",
	       size_kb, what, (unsigned long long)pfn[i], BIT(fl[i], KPF_THP),
	       BIT(fl[i], KPF_HEAD), BIT(fl[i], KPF_TAIL), k * page_kb);
	return k * page_kb;
}

/* Check, outside the timed part, which folio size we really get. */
static void verify(unsigned long size_kb)
{
	size_t n = region_len / page_sz, i, first;
	char *p = region_new(size_kb);
	uint64_t *pfn = calloc(n, 8), *fl = calloc(n, 8);
	int pfd = open("/proc/self/pagemap", O_RDONLY);
	int kfd = open("/proc/kpageflags", O_RDONLY);
	long thp = 0, known = 0, ahp = anon_huge_kb(p, p + region_len);

	if (!pfn || !fl || pfd < 0 ||
	    pread(pfd, pfn, n * 8, (uintptr_t)p / page_sz * 8) != (ssize_t)(n * 8))
		die("cannot read /proc/self/pagemap");
	for (i = 0; i < n; i++) {
		pfn[i] = (pfn[i] & PM_PRESENT) ? pfn[i] & PM_PFN_MASK : 0;
		if (!pfn[i] || kfd < 0 ||
		    pread(kfd, &fl[i], 8, pfn[i] * 8) != 8) {
			pfn[i] = fl[i] = 0;
			continue;
		}
		known++;
		thp += BIT(fl[i], KPF_THP);
	}
	if (!known) {
		printf("BENCH-WARN size_kb=%lu no PFNs/kpageflags (not root?)\n",
		       size_kb);
		thp = -1;
	}
	printf("BENCH-INFO size_kb=%lu thp_pages=%ld pages=%zu anon_huge_kb=%ld\n",
	       size_kb, thp, n, ahp);
	first = probe(size_kb, "first", 0, n, pfn, fl);
	probe(size_kb, "middle", n / 2, n, pfn, fl);
	if (known && size_kb > page_kb &&
	    ((size_t)thp * 10 < n * 9 || first != size_kb))
		printf("BENCH-WARN size_kb=%lu kernel did not give %lu kB folios (thp_pages=%ld/%zu first_folio_kb=%zu)\n",
		       size_kb, size_kb, thp, n, first);
	if (ahp > 0)
		printf("BENCH-WARN size_kb=%lu region still PMD-mapped (AnonHugePages %ld kB)\n",
		       size_kb, ahp);
	close_fd(kfd);
	close(pfd);
	free(pfn);
	free(fl);
	munmap(p, region_len);
}

static unsigned long parse_num(const char *s, char **end, const char *what)
{
	char *e;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &e, 10);
	if (errno || e == s || !v || (end ? *e && *e != ',' : *e != 0))
		die("bad %s '%s'", what, s);
	if (end)
		*end = e;
	return v;
}

/* "4,64,2048" -> want_kb[] */
static void parse_sizes(const char *s)
{
	char *e;

	for (nr_want = 0; *s && nr_want < MAX_SIZES; s = *e ? e + 1 : e)
		want_kb[nr_want++] = parse_num(s, &e, "size list");
}

static void parse_opts(int argc, char **argv)
{
	const char *s;
	int c;

	s = getenv("BENCH_REPS");
	if (s)
		reps = parse_num(s, NULL, "BENCH_REPS");
	s = getenv("BENCH_MB");
	if (s)
		mb = parse_num(s, NULL, "BENCH_MB");
	s = getenv("BENCH_SIZES");
	if (s)
		parse_sizes(s);
	if (is_init)
		return;	/* init's argv only holds leftover boot params */
	while ((c = getopt(argc, argv, "r:m:s:wh")) != -1) {
		if (c == 'r')
			reps = parse_num(optarg, NULL, "-r");
		else if (c == 'm')
			mb = parse_num(optarg, NULL, "-m");
		else if (c == 's')
			parse_sizes(optarg);
		else if (c == 'w')
			may_write = 1;
		else {
			printf("usage: %s [-r reps] [-m mb] [-s kb,...] [-w]\n",
			       argv[0]);
			exit(c == 'h' ? 0 : 2);
		}
	}
}

/* PID 1: mount the pseudo file systems and make sure we have a console. */
static void init_setup(void)
{
	static const char *const fs[3][3] = {
		{ "proc", "/proc", "proc" },
		{ "sysfs", "/sys", "sysfs" },
		{ "devtmpfs", "/dev", "devtmpfs" },
	};
	int i, fd, err[3] = { 0 };

	for (i = 0; i < 3; i++)
		if ((mkdir(fs[i][1], 0755) && errno != EEXIST) ||
		    (mount(fs[i][0], fs[i][1], fs[i][2], 0, NULL) &&
		     errno != EBUSY))
			err[i] = errno;
	/* Without /dev/console in the initramfs the kernel gave us no fds. */
	fd = fcntl(1, F_GETFD) < 0 ? open("/dev/console", O_RDWR) : -1;
	if (fd >= 0) {
		for (i = 0; i < 3; i++)
			if (i != fd)
				dup2(fd, i);
		if (fd > 2)
			close(fd);
	}
	if (err[2])
		printf("BENCH-WARN mount /dev: %s\n", strerror(err[2]));
	for (i = 0; i < 2; i++)
		if (err[i])
			die("mount %s: %s", fs[i][1], strerror(err[i]));
	if (write_knob(THP_DIR "/khugepaged/scan_sleep_millisecs", "86400000") ||
	    write_knob(THP_DIR "/khugepaged/pages_to_scan", "1"))
		printf("BENCH-WARN cannot put khugepaged to sleep: %s\n",
		       strerror(errno));
}

static void print_header(const unsigned long *sizes, int nr)
{
	char cmdline[2048];
	struct utsname u;
	int i;

	printf("BENCH-START reps=%lu mb=%lu sizes=", reps, mb);
	for (i = 0; i < nr; i++)
		printf("%s%lu", i ? "," : "", sizes[i]);
	printf(" pagesize=%zu\n", page_sz);
	if (!uname(&u))
		printf("BENCH-KERNEL %s %s\n", u.release, u.version);
	if (read_file("/proc/cmdline", cmdline, sizeof(cmdline)) < 0)
		strcpy(cmdline, "?");
	printf("BENCH-CMDLINE %s\n", cmdline);
	printf("BENCH-CONFIG pid1=%d write_sysfs=%d pmd_kb=%zu region_bytes=%zu\n",
	       is_init, is_init || may_write, pmd_sz / 1024, region_len);
}

/*
 * Operations run in phases: every sample of munmap (all reps, all sizes),
 * then of fork, and so on, sizes interleaved within a rep. Freeing and
 * copying pages changes the state of the per-CPU page lists the next
 * operation allocates from and frees to: on stock 6.12 the copies of the
 * COW operations made a following munmap of order-2 and order-3 folios up
 * to twice as slow. In phases, each operation follows the same history on
 * every kernel (except child-reuse-byte, which follows reuse-byte).
 */
static void run_phases(const unsigned long *sizes, int nr)
{
	unsigned long rep;
	int op, i;

	for (op = 0; op < NR_OPS; op++)
		for (rep = 0; rep < reps; rep++)
			for (i = 0; i < nr; i++) {
				if (sizes[i] && configure(sizes[i]))
					die("size_kb=%lu: cannot configure THP sysfs: %s",
					    sizes[i], strerror(errno));
				printf("BENCH,%lu,%s,%lu,%llu\n", sizes[i],
				       op_names[op], rep,
				       run_op(op, sizes[i], (char)(1 + rep % 100)));
			}
}

static int wanted(unsigned long kb)
{
	int i;

	for (i = 0; i < nr_want; i++)
		if (want_kb[i] == kb)
			return 1;
	return !nr_want;
}

int main(int argc, char **argv)
{
	unsigned long sizes[MAX_SIZES + 1];
	int i, nr = 0, done = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	is_init = getpid() == 1;
	if (is_init)
		init_setup();
	page_sz = sysconf(_SC_PAGESIZE);
	page_kb = page_sz / 1024;
	parse_opts(argc, argv);
	if (mb > (SIZE_MAX >> 21))
		die("region of %lu MiB is too large", mb);
	region_len = mb << 20;
	scan_sizes();
	if (!is_init && !may_write) {
		sizes[nr++] = 0;	/* whatever THP is configured to */
	} else {
		if (wanted(page_kb))
			sizes[nr++] = page_kb;
		for (i = 0; i < nr_thp; i++)
			if (wanted(thp_kb[i]))
				sizes[nr++] = thp_kb[i];
		if (!nr)
			die("BENCH_SIZES matches no available folio size");
	}
	if (may_write) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		signal(SIGHUP, on_signal);
	}
	print_header(sizes, nr);
	for (i = 0; i < nr; i++) {
		if (sizes[i] && configure(sizes[i])) {
			printf("BENCH-WARN size_kb=%lu cannot configure THP sysfs (%s), skipped\n",
			       sizes[i], strerror(errno));
			continue;
		}
		verify(sizes[i]);
		sizes[done++] = sizes[i];
	}
	if (!done && is_init)
		die("THP sysfs not writable, nothing benchmarked");
	if (!done) {
		printf("BENCH-WARN THP sysfs not writable, measuring as configured\n");
		restore_knobs();
		sizes[done++] = 0;
		verify(0);
	}
	run_phases(sizes, done);
	finish(0);
}
