// SPDX-License-Identifier: GPL-2.0
/*
 * What users see of one PTE-mapped 64 KiB anonymous folio (an mTHP of 16
 * pages) that a parent maps whole while a forked child maps all, half or
 * none of it: /proc/self/smaps and smaps_rollup, pagemap's
 * PM_MMAP_EXCLUSIVE, /proc/kpagecount, numa_maps' mapmax, and whether a
 * write fault reuses the folio or copies the page.
 *
 * The expected values come from a model of who maps which page, computed
 * the way each kernel does it:
 *   - stock and patched (per-page mapcounts): page i has mapcount mc[i],
 *     Pss += 4 KiB / mc[i], private if mc[i] == 1, PM_MMAP_EXCLUSIVE if
 *     mc[i] == 1, kpagecount mc[i], mapmax max(mc[i]);
 *   - npm (CONFIG_NO_PAGE_MAPCOUNT): every page has the folio's average
 *     mapcount avg = max(1, round(sum(mc) / 16)), private and exclusive
 *     only if no other MM maps any page of the folio.
 * And for a write fault after the other MM is gone: the patched kernels
 * reuse the exclusive folio in place (same PFN); stock copies the page.
 *
 * And the zero pages, which every process that read-faults maps and none
 * owns: pagemap must never report a page of the small or the huge zero
 * page PM_MMAP_EXCLUSIVE, before or after fork, on any kernel.
 *
 * The kernel is named by FOLIO_KERNEL (stock, patched or npm), which the
 * init of the initramfs (selftests/init.c) takes from the kernel command
 * line.  Output is TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define NR_PAGES	16
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define PM_MMAP_EXCL	(1ULL << 56)
#define PM_PRESENT	(1ULL << 63)
#define KPF_COMPOUND_HEAD	15
#define KPF_COMPOUND_TAIL	16
#define KPF_THP			22
#define KPF_ZERO_PAGE		24

static long page_size;
static size_t folio_size;
static bool per_page;		/* the kernel keeps per-page mapcounts */
static bool reuses;		/* the kernel reuses exclusive large folios */
static const char *kernel;
static int test_nr;
static int failures;

/*
 * One TAP case.  Its name (@step: @what) is the same on every kernel, so
 * that ci/selftests_report.py can set the kernels side by side; what was
 * measured and expected goes into a "#" line before it.
 */
static void result(bool ok, const char *step, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void result(bool ok, const char *step, const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("# %s: ", step);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n%sok %d %s: %s\n", ok ? "" : "not ", ++test_nr, step, what);
	if (!ok)
		failures++;
}

static void bail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void bail(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(1);
}

static uint64_t read_u64(const char *path, uint64_t index)
{
	uint64_t val;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		bail("open %s: %s", path, strerror(errno));
	if (pread(fd, &val, sizeof(val), index * sizeof(val)) != sizeof(val))
		bail("read %s: %s", path, strerror(errno));
	close(fd);
	return val;
}

static uint64_t pagemap(char *addr)
{
	return read_u64("/proc/self/pagemap", (uintptr_t)addr / page_size);
}

static uint64_t pfn_of(char *addr)
{
	uint64_t pm = pagemap(addr);

	if (!(pm & PM_PRESENT))
		bail("page at %p is not present", addr);
	return pm & PM_PFN_MASK;
}

/* The smaps fields of the VMA at @start, in KiB; -1 if missing. */
struct smaps {
	long rss, pss, private, shared;
};

static void read_smaps(const char *path, char *start, struct smaps *s)
{
	char line[256], want[32];
	bool in = start == NULL;	/* smaps_rollup has one entry */
	FILE *f = fopen(path, "r");
	long v;

	if (!f)
		bail("open %s: %s", path, strerror(errno));
	memset(s, 0, sizeof(*s));
	s->rss = -1;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)start);
	while (fgets(line, sizeof(line), f)) {
		/* A VMA's header starts with its address in lowercase hex. */
		if (start && ((line[0] >= '0' && line[0] <= '9') ||
			      (line[0] >= 'a' && line[0] <= 'f'))) {
			in = !strncmp(line, want, strlen(want));
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, "Rss: %ld kB", &v) == 1)
			s->rss = v;
		else if (sscanf(line, "Pss: %ld kB", &v) == 1)
			s->pss = v;
		else if (sscanf(line, "Private_Clean: %ld kB", &v) == 1 ||
			 sscanf(line, "Private_Dirty: %ld kB", &v) == 1)
			s->private += v;
		else if (sscanf(line, "Shared_Clean: %ld kB", &v) == 1 ||
			 sscanf(line, "Shared_Dirty: %ld kB", &v) == 1)
			s->shared += v;
	}
	fclose(f);
}

/* Sum of Rss and Pss over every VMA in /proc/self/smaps, and the VMAs. */
static void sum_smaps(long *rss, long *pss, int *vmas)
{
	char line[256];
	FILE *f = fopen("/proc/self/smaps", "r");
	long v;

	if (!f)
		bail("open smaps: %s", strerror(errno));
	*rss = *pss = *vmas = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Rss: %ld kB", &v) == 1) {
			*rss += v;
			(*vmas)++;
		} else if (sscanf(line, "Pss: %ld kB", &v) == 1) {
			*pss += v;
		}
	}
	fclose(f);
}

/* numa_maps' mapmax for the VMA at @start: 1 when the field is absent. */
static long numa_mapmax(char *start)
{
	char line[1024], want[32], *p;
	FILE *f = fopen("/proc/self/numa_maps", "r");
	long max = -1;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%lx ", (unsigned long)start);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, want, strlen(want)))
			continue;
		p = strstr(line, " mapmax=");
		max = p ? strtol(p + 8, NULL, 10) : 1;
	}
	fclose(f);
	return max;
}

/*
 * Check everything /proc says about the folio at @area, which this MM maps
 * whole and another MM maps at the pages marked in @other.
 */
static void check_proc(const char *step, char *area, const bool other[NR_PAGES])
{
	long exp_pss = 0, exp_private = 0, exp_shared = 0, exp_mapmax = 0;
	long rss_sum, pss_sum, exp_kpc[NR_PAGES];
	int i, total = 0, vmas, exp_excl = 0, excl = 0, excl_wrong = 0;
	bool exp_excl_page[NR_PAGES];
	bool any_other = false, kpc_ok = true;
	struct smaps s, r;
	long mapmax;

	for (i = 0; i < NR_PAGES; i++) {
		total += 1 + other[i];
		any_other |= other[i];
	}
	for (i = 0; i < NR_PAGES; i++) {
		long mc = 1 + other[i];
		bool private = mc == 1;

		if (!per_page) {
			mc = (total + NR_PAGES / 2) / NR_PAGES;
			if (mc < 1)
				mc = 1;
			private = !any_other;
		}
		/* As the kernel sums it: in 1/4096ths of a byte. */
		exp_pss += (page_size << 12) / mc;
		exp_private += private ? page_size / 1024 : 0;
		exp_shared += private ? 0 : page_size / 1024;
		exp_excl += private;
		exp_excl_page[i] = private;
		exp_kpc[i] = mc;
		if (mc > exp_mapmax)
			exp_mapmax = mc;
	}
	exp_pss >>= 10 + 12;

	read_smaps("/proc/self/smaps", area, &s);
	result(s.rss == (long)folio_size / 1024 && s.pss == exp_pss &&
	       s.private == exp_private && s.shared == exp_shared,
	       step, "smaps Rss, Pss, Private, Shared",
	       "Rss %ld Pss %ld Private %ld Shared %ld kB (expected %zu %ld %ld %ld)",
	       s.rss, s.pss, s.private, s.shared, folio_size / 1024,
	       exp_pss, exp_private, exp_shared);

	/*
	 * smaps_rollup sums the same accounting over all VMAs: it must agree
	 * with the sum of smaps (Pss within the rounding of each VMA's kB).
	 */
	/* Once for nothing: stdio's buffers and the stack are touched. */
	sum_smaps(&rss_sum, &pss_sum, &vmas);
	read_smaps("/proc/self/smaps_rollup", NULL, &r);
	sum_smaps(&rss_sum, &pss_sum, &vmas);
	read_smaps("/proc/self/smaps_rollup", NULL, &r);
	result(r.rss == rss_sum && r.pss >= pss_sum && r.pss <= pss_sum + vmas,
	       step, "smaps_rollup is the sum of smaps",
	       "smaps_rollup Rss %ld Pss %ld kB, the sum of smaps is %ld %ld (%d VMAs)",
	       r.rss, r.pss, rss_sum, pss_sum, vmas);

	for (i = 0; i < NR_PAGES; i++) {
		uint64_t pm = pagemap(area + i * page_size);

		excl += !!(pm & PM_MMAP_EXCL);
		excl_wrong += !!(pm & PM_MMAP_EXCL) != exp_excl_page[i];
	}
	result(!excl_wrong,
	       step, "pagemap PM_MMAP_EXCLUSIVE",
	       "PM_MMAP_EXCLUSIVE on %d of %d pages (expected %d, %d pages differ)",
	       excl, NR_PAGES, exp_excl, excl_wrong);

	for (i = 0; i < NR_PAGES; i++) {
		uint64_t kpc = read_u64("/proc/kpagecount", pfn_of(area + i * page_size));

		if ((long)kpc != exp_kpc[i]) {
			kpc_ok = false;
			printf("# %s: page %d: kpagecount %" PRIu64 ", expected %ld\n",
			       step, i, kpc, exp_kpc[i]);
		}
	}
	result(kpc_ok, step, "kpagecount of every page", "%s",
	       kpc_ok ? "as expected" : "differs (see above)");

	mapmax = numa_mapmax(area);
	if (mapmax < 0)
		result(true, step, "numa_maps mapmax # SKIP CONFIG_NUMA=n",
		       "no /proc/self/numa_maps");
	else
		result(mapmax == exp_mapmax, step, "numa_maps mapmax",
		       "mapmax %ld (expected %ld)", mapmax, exp_mapmax);
}

/* An anonymous VMA of exactly @size bytes at a @size-aligned address. */
static char *map_aligned(size_t size)
{
	char *raw, *area;

	raw = mmap(NULL, 2 * size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		bail("mmap: %s", strerror(errno));
	area = (char *)(((uintptr_t)raw + size - 1) & ~(size - 1));
	if (area > raw)
		munmap(raw, area - raw);
	munmap(area + size, raw + size - area);
	return area;
}

/* A 64 KiB-aligned anonymous VMA of exactly one folio, written. */
static char *map_folio(void)
{
	char *area = map_aligned(folio_size);
	uint64_t flags;
	int i;

	memset(area, 0x5a, folio_size);

	/* The kernel must have given one 64 KiB folio. */
	flags = read_u64("/proc/kpageflags", pfn_of(area));
	if (!(flags & (1ULL << KPF_THP)) || !(flags & (1ULL << KPF_COMPOUND_HEAD)))
		bail("no 64 KiB THP at %p (kpageflags %#" PRIx64 "): is hugepages-64kB enabled?",
		     area, flags);
	for (i = 1; i < NR_PAGES; i++)
		if (pfn_of(area + i * page_size) != pfn_of(area) + i)
			bail("page %d of the folio is not contiguous", i);
	return area;
}

/* The child: do what the parent asks, one command byte at a time. */
static void child_loop(char *area, int cmd, int ack)
{
	char c = 'r';

	/*
	 * Ready: the faults that break COW on the child's stack and data are
	 * done, and it sleeps in read() while the parent reads /proc.  A
	 * child still running would change the parent's Pss between reads.
	 */
	if (write(ack, &c, 1) != 1)
		_exit(1);
	while (read(cmd, &c, 1) == 1) {
		if (c == 'h')		/* unmap the second half */
			munmap(area + folio_size / 2, folio_size / 2);
		else if (c == 'x')
			_exit(0);
		if (write(ack, &c, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

static void ask(int cmd, int ack, char c)
{
	if (write(cmd, &c, 1) != 1 || read(ack, &c, 1) != 1)
		bail("child does not answer");
}

static void test_shared_accounting(void)
{
	bool other[NR_PAGES] = { false };
	int cmd[2], ack[2], i;
	char *area = map_folio();
	pid_t pid;

	check_proc("exclusive", area, other);

	if (pipe(cmd) || pipe(ack))
		bail("pipe: %s", strerror(errno));
	pid = fork();
	if (!pid)
		child_loop(area, cmd[0], ack[1]);
	{
		char c;

		if (read(ack[0], &c, 1) != 1)
			bail("child does not start");
	}
	for (i = 0; i < NR_PAGES; i++)
		other[i] = true;
	check_proc("forked", area, other);

	ask(cmd[1], ack[0], 'h');
	for (i = NR_PAGES / 2; i < NR_PAGES; i++)
		other[i] = false;
	check_proc("child unmapped half", area, other);

	/* 'x' gets no answer: the child exits, waitpid() is the answer. */
	if (write(cmd[1], "x", 1) != 1 || waitpid(pid, NULL, 0) != pid)
		bail("child does not exit");
	for (i = 0; i < NR_PAGES; i++)
		other[i] = false;
	check_proc("child exited", area, other);

	/* The folio is exclusive again: a write fault may reuse it. */
	{
		uint64_t before = pfn_of(area), after;

		area[0] = 1;
		after = pfn_of(area);
		result((after == before) == reuses, "child exited",
		       "a write reuses the folio on patched kernels, copies on stock",
		       "the write %s the page (PFN %#" PRIx64 " -> %#" PRIx64
		       ", expected %s on %s)",
		       after == before ? "reused" : "copied", before, after,
		       reuses ? "reuse" : "a copy", kernel);
	}
	munmap(area, folio_size);
	close(cmd[0]);
	close(cmd[1]);
	close(ack[0]);
	close(ack[1]);
}

/* The child writes after the parent unmapped: reuse by the child. */
static void test_child_reuse(void)
{
	char *area = map_folio();
	uint64_t before = pfn_of(area);
	int go[2], res[2];
	uint64_t after;
	pid_t pid;

	if (pipe(go) || pipe(res))
		bail("pipe: %s", strerror(errno));
	pid = fork();
	if (!pid) {
		char c;

		if (read(go[0], &c, 1) != 1)
			_exit(1);
		area[0] = 1;
		after = pfn_of(area);
		_exit(write(res[1], &after, sizeof(after)) == sizeof(after) ? 0 : 1);
	}
	munmap(area, folio_size);
	if (write(go[1], "g", 1) != 1 || read(res[0], &after, sizeof(after)) != sizeof(after))
		bail("child does not answer");
	waitpid(pid, NULL, 0);
	result((after == before) == reuses, "parent unmapped",
	       "a write by the child reuses the folio on patched kernels, copies on stock",
	       "the child's write %s the page (expected %s on %s)",
	       after == before ? "reused" : "copied", reuses ? "reuse" : "a copy", kernel);
}

/* The size of a PMD-mapped THP, as the kernel tells. */
static size_t pmd_size(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
	unsigned long sz = 0;

	if (!f || fscanf(f, "%lu", &sz) != 1 || !sz)
		bail("cannot read hpage_pmd_size");
	fclose(f);
	return sz;
}

static void skip(const char *step, const char *what, const char *why)
{
	printf("ok %d %s: %s # SKIP %s\n", ++test_nr, step, what, why);
}

/*
 * Read-fault @size bytes at a @size-aligned address (@advice: MADV_HUGEPAGE
 * for the huge zero folio, MADV_NOHUGEPAGE for the zero page) and check that
 * pagemap reports no page of it exclusive, before fork, in the child and in
 * the parent while the child lives.  Four cases.
 */
static void test_zero_page(const char *step, size_t size, int advice)
{
	static const char *const whens[] = { "before fork", "in the child", "in the parent after fork" };
	int go[2], res[2], w;
	uint64_t pfn, flags;
	char *area = map_aligned(size);
	bool huge = advice == MADV_HUGEPAGE, zero;
	pid_t pid = -1;
	size_t i;

	if (madvise(area, size, advice))
		bail("madvise: %s", strerror(errno));
	for (i = 0; i < size; i += page_size)
		if (((volatile char *)area)[i])
			bail("the zero page is not zero");
	pfn = pfn_of(area);
	flags = read_u64("/proc/kpageflags", pfn);
	zero = flags & (1ULL << KPF_ZERO_PAGE);
	if (huge)
		zero = zero && (flags & (1ULL << KPF_THP));
	result(zero, step, "the read fault mapped the zero page",
	       "pfn %#" PRIx64 " kpageflags %#" PRIx64, pfn, flags);
	if (!zero) {
		for (w = 0; w < 3; w++)
			skip(step, whens[w], "no zero page mapped (THP or use_zero_page off?)");
		munmap(area, size);
		return;
	}

	if (pipe(go) || pipe(res))
		bail("pipe: %s", strerror(errno));
	for (w = 0; w < 3; w++) {
		size_t excl = 0, diff = 0;

		if (w == 1) {
			pid = fork();
			if (pid < 0)
				bail("fork: %s", strerror(errno));
			if (!pid) {
				/* The child counts and reports, then waits to be told to go. */
				char c;

				/*
				 * Read-fault it too: fork copies no page table
				 * of a VMA without an anon_vma, which a read
				 * fault of the small zero page does not create.
				 * Then it is the same zero page as the parent's.
				 */
				for (i = 0; i < size; i += page_size)
					if (((volatile char *)area)[i])
						_exit(1);
				for (i = 0; i < size; i += page_size) {
					excl += !!(pagemap(area + i) & PM_MMAP_EXCL);
					diff += pfn_of(area + i) != pfn + i / page_size;
				}
				if (write(res[1], &excl, sizeof(excl)) != sizeof(excl) ||
				    write(res[1], &diff, sizeof(diff)) != sizeof(diff) ||
				    read(go[0], &c, 1) != 1)
					_exit(1);
				_exit(0);
			}
			/* A child that dies closes the last write end: no hang. */
			close(res[1]);
			close(go[0]);
			res[1] = go[0] = -1;
			if (read(res[0], &excl, sizeof(excl)) != sizeof(excl) ||
			    read(res[0], &diff, sizeof(diff)) != sizeof(diff))
				bail("the child did not answer (it bailed out or died)");
		} else {
			for (i = 0; i < size; i += page_size)
				excl += !!(pagemap(area + i) & PM_MMAP_EXCL);
		}
		result(!excl && !diff, step, whens[w],
		       "%zu of %zu pages reported PM_MMAP_EXCLUSIVE, %zu pages not at the zero page's pfn",
		       excl, size / page_size, diff);
	}
	if (write(go[1], "g", 1) != 1)
		bail("cannot release the child");
	waitpid(pid, NULL, 0);
	close(go[1]);
	close(res[0]);
	munmap(area, size);
}

int main(void)
{
	char path[128];
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* It changes THP settings: only ever inside the test VM. */
	if (access("/selftests-initramfs", F_OK))
		bail("not in the make selftests initramfs: refusing to change THP settings here");
	page_size = sysconf(_SC_PAGESIZE);
	folio_size = NR_PAGES * page_size;
	kernel = getenv("FOLIO_KERNEL");
	if (!kernel || (strcmp(kernel, "stock") && strcmp(kernel, "patched") &&
			strcmp(kernel, "npm")))
		bail("FOLIO_KERNEL must be stock, patched or npm, not '%s'",
		     kernel ? kernel : "");
	per_page = strcmp(kernel, "npm") != 0;
	reuses = strcmp(kernel, "stock") != 0;

	printf("TAP version 13\n1..30\n");
	printf("# kernel %s: %s per-page mapcounts, %s exclusive large folios\n",
	       kernel, per_page ? "with" : "without", reuses ? "reuses" : "copies from");

	/* Only 64 KiB anonymous mTHPs, at every fault. */
	snprintf(path, sizeof(path),
		 "/sys/kernel/mm/transparent_hugepage/hugepages-%zukB/enabled",
		 folio_size / 1024);
	err = 0;
	{
		FILE *f = fopen(path, "w");

		if (!f || fputs("always", f) < 0 || fclose(f))
			err = errno;
	}
	if (err)
		bail("cannot enable %zu KiB THPs (%s): %s", folio_size / 1024,
		     path, strerror(err));

	test_shared_accounting();
	test_child_reuse();
	test_zero_page("huge zero page", pmd_size(), MADV_HUGEPAGE);
	test_zero_page("zero page", page_size, MADV_NOHUGEPAGE);
	return failures ? 1 : 0;
}
