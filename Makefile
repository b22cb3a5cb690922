# MM owner tracking for large folios, on Debian's Linux 6.12.
# `make help` lists the targets.

TOP     := $(CURDIR)
# The kernel tree and all build output live outside the checkout.
BUILD   ?= $(abspath $(TOP)/..)/folio-owner-build
TREE    ?= $(BUILD)/linux
CCACHE_DIR ?= /var/cache/folio-owner-ccache
ARCH    ?= x86_64
VARIANT ?= default

export TOP BUILD TREE CCACHE_DIR

.PHONY: help deps tree series kunit test test-full mainline-diff distro-config check-series checkpatch consumer mutants bisect bench selftests clean distclean

help:
	@echo "Targets:"
	@echo "  make deps          install the Debian packages needed (as root), or name them"
	@echo "  make tree          extract linux-source-6.12 into \$$(TREE), commit it as 'pristine',"
	@echo "                     apply patches/ with git am (the suites come with the patches)"
	@echo "  make series        export the tree's commits on top of 'pristine' to patches/"
	@echo "  make kunit         build and run the KUnit suites under QEMU for ARCH=$(ARCH)"
	@echo "                     (x86_64 arm64 i386 arm) and VARIANT=$(VARIANT)"
	@echo "  make test          the gate (what .ci/run runs; 27 min cold): series applies"
	@echo "                     exactly, checkpatch --strict, shellcheck + actionlint, Kconfig"
	@echo "                     dependencies, KUnit on x86_64 and i386 in both variants, the"
	@echo "                     consumer path, the 'Tier: gate' mutants; ends 'N passed, N failed'"
	@echo "  make test-full     everything: KUnit on every arch and variant (sanitizers too),"
	@echo "                     selftests stock vs patched, Debian's config, every mutant;"
	@echo "                     same table and line"
	@echo "  make check-series  only: the series applies exactly and re-exports byte for byte"
	@echo "  make checkpatch    only: scripts/checkpatch.pl --strict on every patch"
	@echo "  make consumer      only: git am of patches/ on a new pristine worktree, then the cover"
	@echo "                     letter's kunit.py command for ARCH, VARIANT; the same cases as 'make kunit'"
	@echo "  make mutants       only: each ci/mutants/*.patch makes its named cases fail"
	@echo "                     (MUTANTS=\"0008 0009\" runs the mutants whose names start so)"
	@echo "                     (mutants marked Slow: run only when named or with MUTANTS_SLOW=1)"
	@echo "  make bisect        build the kernel at every patch (BISECT_ARCHES=\"x86_64 i386\");"
	@echo "                     slow (a near-full rebuild per patch), not part of make test;"
	@echo "                     BISECT_FROM=N starts at patch N, BISECT_VARIANT=no_page_mapcount"
	@echo "  make bench         time munmap, fork and COW per folio size on stock 6.12, patched and"
	@echo "                     patched + NO_PAGE_MAPCOUNT in QEMU (x86_64; ~2 min with the kernels built,"
	@echo "                     ~17 min cold; not in make test); table and plot in bench/results/"
	@echo "                     (BENCH_ROUNDS, BENCH_REPS, BENCH_MB, BENCH_SIZES, BENCH_SMP,"
	@echo "                     BENCH_ICOUNT=0: see ci/bench.sh)"
	@echo "  make selftests     boot stock 6.12, patched and patched + NO_PAGE_MAPCOUNT in QEMU"
	@echo "                     with our initramfs: selftests/folio_proc_test (/proc values, COW"
	@echo "                     reuse) and the tree's mm selftests cow, khugepaged,"
	@echo "                     split_huge_page_test; on x86_64 also boots them with"
	@echo "                     hugetlb_free_vmemmap=on (alone, + init_on_free=1, + debug_pagealloc=on)"
	@echo "                     and page_owner=on (+ slub_min_order=3) running kpage_scan_test and"
	@echo "                     the HugeTLB selftests; results side by side in"
	@echo "                     \$$(BUILD)/results/selftests/ (SELFTESTS_ARCHES, SELFTESTS_RUN,"
	@echo "                     SELFTESTS_GROUPS, SELFTESTS_TIMEOUT: see ci/selftests.sh)"
	@echo "  make mainline-diff fetch Debian's linux-source-7.3 (upstream's implementation) into"
	@echo "                     \$$(BUILD)/mainline and compare every function, struct, macro and"
	@echo "                     Kconfig entry the series changes with it: table and diffs in"
	@echo "                     \$$(BUILD)/results/mainline-diff (docs/mainline-record.md explains them)"
	@echo "  make distro-config compile every file the series changes with Debian's amd64 config"
	@echo "                     (linux-config-6.12), both variants, -Werror (in make test-full)"
	@echo "  make clean         remove the KUnit and bench build directories and results"
	@echo "  make distclean     remove \$$(BUILD) entirely (the tree too)"
	@echo
	@echo "Settings: BUILD=$(BUILD)"
	@echo "          TREE=$(TREE)  CCACHE_DIR=$(CCACHE_DIR)"
	@echo "          FORCE=1 lets 'make tree' discard local commits in the tree"

deps:
	@ci/deps.sh

tree:
	@ci/tree.sh

series:
	@ci/series.sh

kunit:
	@ci/kunit.sh $(ARCH) $(VARIANT)

test:
	@TIER=gate ci/matrix.sh

test-full:
	@TIER=full ci/matrix.sh

check-series: tree
	@ci/check-series.sh

consumer: tree
	@ci/consumer.sh $(ARCH) $(VARIANT)

checkpatch: tree
	@ci/checkpatch.sh

mutants:
	@ci/mutants.sh

BISECT_ARCHES ?= x86_64 i386
bisect:
	@ci/bisect.sh $(BISECT_ARCHES)

mainline-diff:
	@ci/mainline.sh

distro-config:
	@ci/distro_config.sh

bench:
	@ci/bench.sh

selftests:
	@ci/selftests.sh

clean:
	rm -rf $(BUILD)/kunit $(BUILD)/results $(BUILD)/bench $(BUILD)/selftests

distclean:
	rm -rf $(BUILD)
