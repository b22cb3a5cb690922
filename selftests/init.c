// SPDX-License-Identifier: GPL-2.0
/*
 * The init of the make selftests initramfs (ci/selftests.sh): mount what
 * the tests need, put swap on zram, run every test program named on the
 * kernel command line in turn, and power the VM off.
 *
 * Kernel command line (read from /proc/cmdline: options with a dot never
 * reach init's argv):
 *   selftests.kernel=NAME    stock, patched or npm; exported to the tests
 *                            as FOLIO_KERNEL
 *   selftests.run=A,B:x,...  test programs in /bin, in order; ':' separates
 *                            the arguments of one program ("khugepaged:-s:2")
 *   selftests.timeout=SEC    how long one program may run (default 1200)
 *   selftests.hugepages=N    HugeTLB pages reserved of each size up to
 *                            32 MiB (default 4)
 *
 * Output, on the console, for ci/selftests_report.py:
 *   SELFTEST-BEGIN name
 *   name| <each line the program printed, stdout and stderr>
 *   SELFTEST-END name exit=N | signal=N | timeout=SEC  (seconds=S)
 *   SELFTESTS-DONE
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/wait.h>

static char cmdline[4096];
static char kernel_name[64] = "unknown";
static char run_list[1024] = "folio_proc_test";
static int timeout_sec = 1200;
static int hugepages = 4;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	/* One write per line: kernel messages cannot land inside it. */
	if (write(1, buf, n) < 0)
		return;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static void read_cmdline(void)
{
	int fd = open("/proc/cmdline", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, cmdline, sizeof(cmdline) - 1);
	char *tok, *save;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	cmdline[n] = 0;
	for (tok = strtok_r(cmdline, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save)) {
		if (!strncmp(tok, "selftests.kernel=", 17))
			snprintf(kernel_name, sizeof(kernel_name), "%s", tok + 17);
		else if (!strncmp(tok, "selftests.run=", 14))
			snprintf(run_list, sizeof(run_list), "%s", tok + 14);
		else if (!strncmp(tok, "selftests.timeout=", 18))
			timeout_sec = atoi(tok + 18);
		else if (!strncmp(tok, "selftests.hugepages=", 20))
			hugepages = atoi(tok + 20);
	}
}

/* Swap on /dev/zram0, with a swap header written by hand (no mkswap). */
static void setup_swap(void)
{
	const long page = sysconf(_SC_PAGESIZE);
	const unsigned long long size = 256ULL << 20;
	unsigned char *hdr = calloc(1, page);
	unsigned int *words = (unsigned int *)(hdr + 1024);
	int fd, err;

	err = write_file("/sys/block/zram0/disksize", "256M");
	if (err) {
		say("# swap: no zram0 (%s): cases that need swap will skip\n", strerror(-err));
		free(hdr);
		return;
	}
	words[0] = 1;				/* version */
	words[1] = size / page - 1;		/* last_page */
	words[2] = 0;				/* nr_badpages */
	memcpy(hdr + page - 10, "SWAPSPACE2", 10);
	fd = open("/dev/zram0", O_WRONLY);
	if (fd < 0 || write(fd, hdr, page) != page) {
		say("# swap: cannot write the swap header: %s\n", strerror(errno));
	} else if (fsync(fd), swapon("/dev/zram0", 0)) {
		say("# swap: swapon /dev/zram0: %s\n", strerror(errno));
	} else {
		say("# swap: 256 MiB on /dev/zram0\n");
	}
	if (fd >= 0)
		close(fd);
	free(hdr);
}

/*
 * A few free hugetlb pages of every size up to 32 MiB, so that cow's
 * hugetlb cases run instead of skipping with "need more free huge pages".
 */
static void setup_hugetlb(void)
{
	const char *dir = "/sys/kernel/mm/hugepages";
	struct dirent *d;
	char path[300], count[16];
	unsigned long kb;
	DIR *h = opendir(dir);

	if (!h) {
		say("# hugetlb: no %s: hugetlb cases will skip\n", dir);
		return;
	}
	while ((d = readdir(h))) {
		if (sscanf(d->d_name, "hugepages-%lukB", &kb) != 1 || kb > 32768)
			continue;
		snprintf(path, sizeof(path), "%s/%s/nr_hugepages", dir, d->d_name);
		snprintf(count, sizeof(count), "%d", hugepages);
		if (write_file(path, count))
			say("# hugetlb: cannot reserve %lu kB pages\n", kb);
		else
			say("# hugetlb: %d pages of %lu kB reserved\n", hugepages, kb);
	}
	closedir(h);
}

static void setup(void)
{
	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mkdir("/dev", 0755);
	mkdir("/tmp", 01777);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	mount("tmpfs", "/tmp", "tmpfs", 0, NULL);
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run one program; @spec is "name[:arg...]". */
static void run_one(char *spec)
{
	char *argv[16], *save, *arg, name[256], line[4096];
	int pfd[2], argc = 0, status, len = 0;
	double start = seconds();
	pid_t pid;

	snprintf(name, sizeof(name), "%s", spec);
	for (char *c = name; *c; c++)
		if (*c == ':')
			*c = ' ';
	for (arg = strtok_r(spec, ":", &save); arg && argc < 15;
	     arg = strtok_r(NULL, ":", &save))
		argv[argc++] = arg;
	argv[argc] = NULL;
	if (!argc)
		return;

	say("SELFTEST-BEGIN %s\n", name);
	if (pipe(pfd)) {
		say("SELFTEST-END %s exit=255 (pipe: %s)\n", name, strerror(errno));
		return;
	}
	pid = fork();
	if (!pid) {
		char path[300];

		setpgid(0, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		if (chdir("/tmp"))
			_exit(255);
		snprintf(path, sizeof(path), "/bin/%s", argv[0]);
		execv(path, argv);
		printf("cannot run %s: %s\n", path, strerror(errno));
		_exit(255);
	}
	close(pfd[1]);

	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		int left = timeout_sec * 1000 - (int)((seconds() - start) * 1000);
		ssize_t n;

		if (left <= 0 || poll(&p, 1, left) == 0) {
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			say("SELFTEST-END %s timeout=%d (seconds=%.0f)\n", name,
			    timeout_sec, seconds() - start);
			close(pfd[0]);
			return;
		}
		n = read(pfd[0], line + len, sizeof(line) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
		line[len] = 0;
		/* Print whole lines, prefixed with the program's name. */
		for (;;) {
			char *nl = memchr(line, '\n', len);
			int l;

			if (!nl && len < (int)sizeof(line) - 1)
				break;
			l = nl ? nl - line : len;
			say("%s| %.*s\n", name, l, line);
			l += nl ? 1 : 0;
			memmove(line, line + l, len - l);
			len -= l;
		}
	}
	if (len)
		say("%s| %.*s\n", name, len, line);
	close(pfd[0]);
	waitpid(pid, &status, 0);
	if (WIFEXITED(status))
		say("SELFTEST-END %s exit=%d (seconds=%.0f)\n", name,
		    WEXITSTATUS(status), seconds() - start);
	else
		say("SELFTEST-END %s signal=%d (seconds=%.0f)\n", name,
		    WTERMSIG(status), seconds() - start);
}

int main(void)
{
	char *spec, *save;

	setup();
	read_cmdline();		/* after setup() has mounted /proc */
	setup_swap();
	setup_hugetlb();
	setenv("FOLIO_KERNEL", kernel_name, 1);
	setenv("PATH", "/bin", 1);
	say("SELFTESTS-KERNEL %s\n", kernel_name);
	for (spec = strtok_r(run_list, ",", &save); spec;
	     spec = strtok_r(NULL, ",", &save))
		run_one(spec);
	say("SELFTESTS-DONE\n");
	sync();
	/*
	 * Power off needs ACPI on x86 (not in these kernels); a reboot is
	 * what QEMU's -no-reboot turns into an exit, on every machine.
	 */
	reboot(RB_AUTOBOOT);
	reboot(RB_POWER_OFF);
	return 0;
}
