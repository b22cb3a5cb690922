// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "proc_kpagecount": what /proc/kpagecount reports for the
 * pages of large folios.  With per-page mapcounts it is each page's own
 * mapcount; without them (CONFIG_NO_PAGE_MAPCOUNT) it is the folio's
 * average per-page mapcount for every page, at least 1 while mapped.
 *
 * fs/proc/page.c includes this file at its end, so the cases read the file
 * through its real read function, kpagecount_read(), into a user buffer of
 * the test's own MM, for folios that the fixture maps into real MMs.
 */
#include <kunit/test.h>
#include <linux/mman.h>
#include <linux/slab.h>

#include "folio_fixture.h"

struct kpagecount_ctx {
	struct ffx_mm *parent;
	struct ffx_folio *f;
	u64 __user *ubuf;	/* one entry per page of the folio */
	u64 *counts;		/* what the last read returned */
};

static int kpagecount_test_init(struct kunit *test)
{
	const struct ffx_shape *s = test->param_value;
	struct kpagecount_ctx *ctx;
	unsigned long ubuf;
	int order = s ? s->order : 0;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->parent = ffx_mm_create(ffx_init(test), "parent");
	ctx->f = ffx_folio_alloc(ctx->parent, order);
	ffx_map_new(ctx->f, ctx->parent, s ? s->level : FFX_PTE);

	ubuf = kunit_vm_mmap(test, NULL, 0, ctx->f->nr * KPMSIZE,
			     PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, ubuf, 0, "no user memory for the read");
	ctx->ubuf = (u64 __user *)ubuf;
	ctx->counts = kunit_kcalloc(test, ctx->f->nr, sizeof(u64), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->counts);
	test->priv = ctx;
	return 0;
}

/* read() the folio's entries from /proc/kpagecount. */
static void kpagecount_read_folio(struct kunit *test)
{
	struct kpagecount_ctx *ctx = test->priv;
	size_t len = ctx->f->nr * KPMSIZE;
	loff_t pos = folio_pfn(ctx->f->folio) * KPMSIZE;

	KUNIT_ASSERT_EQ(test, kpagecount_read(NULL, (char __user *)ctx->ubuf,
					      len, &pos), (ssize_t)len);
	KUNIT_ASSERT_EQ(test, copy_from_user(ctx->counts, ctx->ubuf, len), 0);
}

/* How many pages in [first, first + nr) read @count. */
static long kpagecount_nr_with(struct kunit *test, long first, long nr,
			       u64 count)
{
	struct kpagecount_ctx *ctx = test->priv;
	long i, n = 0;

	for (i = first; i < first + nr; i++)
		n += ctx->counts[i] == count;
	return n;
}

static void kpagecount_of_exclusive_folio_is_one(struct kunit *test)
{
	struct kpagecount_ctx *ctx = test->priv;

	kpagecount_read_folio(test);
	KUNIT_EXPECT_EQ(test, kpagecount_nr_with(test, 0, ctx->f->nr, 1), ctx->f->nr);
}

static void kpagecount_of_folio_shared_with_a_child_is_two(struct kunit *test)
{
	struct kpagecount_ctx *ctx = test->priv;

	ffx_fork(ctx->f, ctx->parent, "child");
	kpagecount_read_folio(test);
	KUNIT_EXPECT_EQ(test, kpagecount_nr_with(test, 0, ctx->f->nr, 2), ctx->f->nr);
}

/*
 * The child replaced the first half by copies: those pages are mapped once,
 * the others twice.  Without per-page mapcounts every page reads the
 * average, round(1.5) = 2.
 */
static void kpagecount_after_child_cow_of_half(struct kunit *test)
{
	struct kpagecount_ctx *ctx = test->priv;
	struct ffx_folio *f = ctx->f;
	struct ffx_mm *child = ffx_fork(f, ctx->parent, "child");
	long half = f->nr / 2;

	ffx_pte_map(f, ctx->parent);
	ffx_pte_map(f, child);
	ffx_unmap_ptes(f, child, 0, half);
	kpagecount_read_folio(test);
	KUNIT_EXPECT_EQ(test, kpagecount_nr_with(test, 0, half, FFX_VARIANT(1, 2)),
			half);
	KUNIT_EXPECT_EQ(test, kpagecount_nr_with(test, half, f->nr - half, 2),
			f->nr - half);
}

/*
 * Only page 0 is still mapped.  Without per-page mapcounts every page
 * reads 1: the average rounds to 0, but a mapped folio reads at least 1.
 */
static void kpagecount_of_folio_with_one_page_left(struct kunit *test)
{
	struct kpagecount_ctx *ctx = test->priv;
	struct ffx_folio *f = ctx->f;

	ffx_pte_map(f, ctx->parent);
	ffx_unmap_ptes(f, ctx->parent, 1, f->nr - 1);
	kpagecount_read_folio(test);
	KUNIT_EXPECT_EQ(test, ctx->counts[0], 1);
	KUNIT_EXPECT_EQ(test, kpagecount_nr_with(test, 1, f->nr - 1, FFX_VARIANT(0, 1)),
			f->nr - 1);

	ffx_unmap_ptes(f, ctx->parent, 0, 1);
	kpagecount_read_folio(test);
	KUNIT_EXPECT_EQ(test, kpagecount_nr_with(test, 0, f->nr, 0), f->nr);
}

/* Small folios read their mapcount in both variants (case without params). */
static void kpagecount_of_small_folio_is_its_mapcount(struct kunit *test)
{
	struct kpagecount_ctx *ctx = test->priv;

	kpagecount_read_folio(test);
	KUNIT_EXPECT_EQ(test, ctx->counts[0], 1);
	ffx_fork(ctx->f, ctx->parent, "child");
	kpagecount_read_folio(test);
	KUNIT_EXPECT_EQ(test, ctx->counts[0], 2);
}

static struct kunit_case proc_kpagecount_cases[] = {
	KUNIT_CASE_PARAM(kpagecount_of_exclusive_folio_is_one,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(kpagecount_of_folio_shared_with_a_child_is_two,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(kpagecount_after_child_cow_of_half,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(kpagecount_of_folio_with_one_page_left,
			 ffx_shape_gen_params),
	KUNIT_CASE(kpagecount_of_small_folio_is_its_mapcount),
	{}
};

static struct kunit_suite proc_kpagecount_suite = {
	.name = "proc_kpagecount",
	.init = kpagecount_test_init,
	.test_cases = proc_kpagecount_cases,
};

kunit_test_suite(proc_kpagecount_suite);
