// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "folio_mapcount": the mapcount semantics of large anonymous
 * folios as Linux 6.12 defines them, which MM owner tracking keeps.
 *
 * This is the baseline the owner-tracking suites are compared with.  Each
 * case maps a real large folio into real MMs through the rmap API, the way
 * the fault, fork and zap paths do, and states what folio_mapcount(), the
 * entire mapcount, the per-page mapcounts, PageAnonExclusive and
 * folio_maybe_mapped_shared() say afterwards.  6.12's estimate,
 * folio_maybe_mapped_shared(), answered "exclusive" for two MMs that map
 * disjoint halves of a folio; its replacement does not, and the
 * "folio_owner" suite states that case.
 *
 * Most cases run for the fixture's folio shapes (ffx_shape_gen_params): the
 * smallest anonymous mTHP (order 2), a 64K-on-4K mTHP (order 4), and a
 * PMD-sized THP, both PTE-mapped and PMD-mapped.
 *
 * Two things differ between the variants of the series, and the cases
 * state both: with CONFIG_NO_PAGE_MAPCOUNT the per-page mapcounts of large
 * folios are not maintained (see expected_page_mapcount()), the mapped
 * statistics count the whole folio while any page of it is mapped, and a
 * folio counts as partially mapped only when it has fewer mappings than
 * pages.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/rmap.h>

#include "folio_fixture.h"

/* Per-case state: the parent process and its folio, mapped exclusively. */
struct folio_mapcount_ctx {
	struct ffx *fx;
	struct ffx_mm *parent;
	struct ffx_folio *f;
	enum ffx_level level;
	long nr;
	/* How many mappings one MM holds when it maps the whole folio. */
	long per_mm;
};

static int folio_mapcount_test_init(struct kunit *test)
{
	const struct ffx_shape *s = test->param_value;
	struct folio_mapcount_ctx *ctx;

	/* The cases without parameters set up their own folio. */
	if (!s)
		return 0;
	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->fx = ffx_init(test);
	ctx->parent = ffx_mm_create(ctx->fx, "parent");
	ctx->f = ffx_folio_alloc(ctx->parent, s->order);
	ctx->level = s->level;
	ctx->nr = ctx->f->nr;
	ctx->per_mm = s->level == FFX_PMD ? 1 : ctx->nr;
	ffx_map_new(ctx->f, ctx->parent, s->level);
	test->priv = ctx;
	return 0;
}

/*
 * What the per-page mapcount of a page of a large folio reads when @ptes
 * PTEs map it: the number of PTEs with per-page mapcounts; with
 * CONFIG_NO_PAGE_MAPCOUNT it is never maintained and reads 0.
 */
static int expected_page_mapcount(int ptes)
{
	return FFX_VARIANT(ptes, 0);
}

/* Fork the parent and duplicate its mappings of the folio into the child. */
static struct ffx_mm *fork_child(struct kunit *test)
{
	struct folio_mapcount_ctx *ctx = test->priv;

	return ffx_fork(ctx->f, ctx->parent, "child");
}

static void exclusive_map_counts_each_mapping_once(struct kunit *test)
{
	struct folio_mapcount_ctx *ctx = test->priv;
	struct folio *folio = ctx->f->folio;

	KUNIT_EXPECT_EQ(test, folio_mapcount(folio), ctx->per_mm);
	KUNIT_EXPECT_FALSE(test, folio_maybe_mapped_shared(folio));
	KUNIT_EXPECT_EQ(test, ffx_rmap_nr_mms(ctx->f), 1);
	if (ctx->level == FFX_PMD) {
		/* One PMD: the entire mapcount, no per-page mapcount. */
		KUNIT_EXPECT_EQ(test, folio_entire_mapcount(folio), 1);
		KUNIT_EXPECT_EQ(test, ffx_page_mapcount(ctx->f, 0), 0);
		KUNIT_EXPECT_EQ(test, ffx_page_mapcount(ctx->f, ctx->nr - 1), 0);
		/* For a PMD mapping only the head page carries the flag. */
		KUNIT_EXPECT_TRUE(test, PageAnonExclusive(&folio->page));
	} else {
		KUNIT_EXPECT_EQ(test, folio_entire_mapcount(folio), 0);
		KUNIT_EXPECT_EQ(test, ffx_page_mapcount(ctx->f, 0),
				expected_page_mapcount(1));
		KUNIT_EXPECT_EQ(test, ffx_page_mapcount(ctx->f, ctx->nr - 1),
				expected_page_mapcount(1));
		KUNIT_EXPECT_EQ(test, ffx_nr_anon_exclusive(ctx->f), ctx->nr);
	}
	KUNIT_EXPECT_FALSE(test, folio_test_partially_mapped(folio));
}

static void fork_duplicates_every_mapping_into_the_child(struct kunit *test)
{
	struct folio_mapcount_ctx *ctx = test->priv;
	struct folio *folio = ctx->f->folio;

	fork_child(test);

	KUNIT_EXPECT_EQ(test, folio_mapcount(folio), 2 * ctx->per_mm);
	KUNIT_EXPECT_TRUE(test, folio_maybe_mapped_shared(folio));
	/* The child's VMA hangs off the parent's anon_vma: a second MM. */
	KUNIT_EXPECT_EQ(test, ffx_rmap_nr_mms(ctx->f), 2);
	/* fork() clears PageAnonExclusive: the pages are now shared. */
	KUNIT_EXPECT_EQ(test, ffx_nr_anon_exclusive(ctx->f), 0);
	if (ctx->level == FFX_PMD) {
		KUNIT_EXPECT_EQ(test, folio_entire_mapcount(folio), 2);
		KUNIT_EXPECT_EQ(test, ffx_page_mapcount(ctx->f, 0), 0);
	} else {
		KUNIT_EXPECT_EQ(test, folio_entire_mapcount(folio), 0);
		KUNIT_EXPECT_EQ(test, ffx_page_mapcount(ctx->f, 0),
				expected_page_mapcount(2));
		KUNIT_EXPECT_EQ(test, ffx_page_mapcount(ctx->f, ctx->nr - 1),
				expected_page_mapcount(2));
	}
}

static void child_cow_of_one_page_keeps_folio_shared(struct kunit *test)
{
	struct folio_mapcount_ctx *ctx = test->priv;
	struct folio *folio = ctx->f->folio;
	struct ffx_mm *child = fork_child(test);
	long cow = ctx->nr / 2;

	/* A write fault in the child replaces one page by a copy. */
	ffx_pte_map(ctx->f, child);
	ffx_unmap_ptes(ctx->f, child, cow, 1);

	KUNIT_EXPECT_EQ(test, folio_mapcount(folio), ctx->per_mm + ctx->nr - 1);
	KUNIT_EXPECT_TRUE(test, folio_maybe_mapped_shared(folio));
	KUNIT_EXPECT_EQ(test, ffx_page_mapcount(ctx->f, cow),
			ctx->level == FFX_PMD ? 0 : expected_page_mapcount(1));
	KUNIT_EXPECT_EQ(test, folio_entire_mapcount(folio),
			ctx->level == FFX_PMD ? 1 : 0);
}

static void child_exit_leaves_parent_sole_but_not_anon_exclusive(struct kunit *test)
{
	struct folio_mapcount_ctx *ctx = test->priv;
	struct folio *folio = ctx->f->folio;
	struct ffx_mm *child = fork_child(test);

	ffx_mm_exit(child);

	KUNIT_EXPECT_EQ(test, folio_mapcount(folio), ctx->per_mm);
	KUNIT_EXPECT_FALSE(test, folio_maybe_mapped_shared(folio));
	KUNIT_EXPECT_EQ(test, ffx_rmap_nr_mms(ctx->f), 1);
	/*
	 * Nothing gives PageAnonExclusive back when the child goes: only a
	 * write fault that reuses the page sets it again.  For PTE-mapped
	 * large folios 6.12 never reuses, it copies.
	 */
	KUNIT_EXPECT_EQ(test, ffx_nr_anon_exclusive(ctx->f), 0);
}

static void partial_unmap_in_one_mm_marks_folio_partially_mapped(struct kunit *test)
{
	struct folio_mapcount_ctx *ctx = test->priv;
	struct folio *folio = ctx->f->folio;
	long half = ctx->nr / 2;

	ffx_pte_map(ctx->f, ctx->parent);
	ffx_unmap_ptes(ctx->f, ctx->parent, half, ctx->nr - half);

	KUNIT_EXPECT_EQ(test, folio_mapcount(folio), half);
	KUNIT_EXPECT_EQ(test, folio_entire_mapcount(folio), 0);
	KUNIT_EXPECT_FALSE(test, folio_maybe_mapped_shared(folio));
	KUNIT_EXPECT_EQ(test, ffx_page_mapcount(ctx->f, 0),
			expected_page_mapcount(1));
	KUNIT_EXPECT_EQ(test, ffx_page_mapcount(ctx->f, ctx->nr - 1), 0);
	/*
	 * Queued for deferred split: some pages mapped, some not.  Without
	 * per-page mapcounts the same follows from fewer mappings than pages.
	 */
	KUNIT_EXPECT_TRUE(test, folio_test_partially_mapped(folio));
}

static void unmapping_everything_leaves_no_mapping(struct kunit *test)
{
	struct folio_mapcount_ctx *ctx = test->priv;
	struct folio *folio = ctx->f->folio;
	struct ffx_mm *child = fork_child(test);

	ffx_unmap_all(ctx->f, child);
	ffx_unmap_all(ctx->f, ctx->parent);

	KUNIT_EXPECT_EQ(test, folio_mapcount(folio), 0);
	KUNIT_EXPECT_EQ(test, folio_entire_mapcount(folio), 0);
	KUNIT_EXPECT_FALSE(test, folio_mapped(folio));
	KUNIT_EXPECT_FALSE(test, folio_maybe_mapped_shared(folio));
	KUNIT_EXPECT_EQ(test, ffx_page_mapcount(ctx->f, 0), 0);
	KUNIT_EXPECT_EQ(test, ffx_page_mapcount(ctx->f, ctx->nr - 1), 0);
	/* Only the fixture's own reference is left. */
	KUNIT_EXPECT_EQ(test, folio_ref_count(folio), 1);
}

/* Each mapping holds one folio reference: mapcount <= refcount. */
static void every_mapping_holds_a_reference(struct kunit *test)
{
	struct folio_mapcount_ctx *ctx = test->priv;
	struct folio *folio = ctx->f->folio;
	struct ffx_mm *child = fork_child(test);

	KUNIT_EXPECT_EQ(test, folio_ref_count(folio), 1 + 2 * ctx->per_mm);
	ffx_pte_map(ctx->f, child);
	ffx_unmap_ptes(ctx->f, child, 0, 1);
	KUNIT_EXPECT_EQ(test, folio_ref_count(folio),
			1 + ctx->per_mm + ctx->nr - 1);
	KUNIT_EXPECT_EQ(test, folio_mapcount(folio) + 1, folio_ref_count(folio));
}

/*
 * NR_ANON_MAPPED counts the mapped pages of a folio with per-page
 * mapcounts, the whole folio while any page is mapped without them.
 * Parent and child both unmap the same half after fork(), then the rest.
 */
static void mapped_stat_counts_mapped_pages_or_the_whole_folio(struct kunit *test)
{
	struct folio_mapcount_ctx *ctx = test->priv;
	/* A second folio of the same shape, counted from its first mapping. */
	struct ffx_folio *f = ffx_folio_alloc(ctx->parent, ctx->f->order);
	long half = ctx->nr / 2, base, thp;
	struct ffx_mm *child;

	base = ffx_node_stat(f, NR_ANON_MAPPED);
	thp = ffx_node_stat(f, NR_ANON_THPS);
	ffx_map_new(f, ctx->parent, ctx->level);
	KUNIT_EXPECT_EQ(test, ffx_node_stat(f, NR_ANON_MAPPED) - base, ctx->nr);
	KUNIT_EXPECT_EQ(test, ffx_node_stat(f, NR_ANON_THPS) - thp,
			ctx->level == FFX_PMD ? ctx->nr : 0);

	child = ffx_fork(f, ctx->parent, "child");
	ffx_pte_map(f, ctx->parent);
	ffx_pte_map(f, child);
	/* Mappings of pages that are mapped already change nothing. */
	KUNIT_EXPECT_EQ(test, ffx_node_stat(f, NR_ANON_MAPPED) - base, ctx->nr);
	KUNIT_EXPECT_EQ(test, ffx_node_stat(f, NR_ANON_THPS) - thp, 0);

	ffx_unmap_ptes(f, ctx->parent, half, ctx->nr - half);
	KUNIT_EXPECT_EQ(test, ffx_node_stat(f, NR_ANON_MAPPED) - base, ctx->nr);
	ffx_unmap_ptes(f, child, half, ctx->nr - half);
	/* Pages [half, nr) are mapped nowhere now. */
	KUNIT_EXPECT_EQ(test, ffx_node_stat(f, NR_ANON_MAPPED) - base,
			FFX_VARIANT(half, ctx->nr));

	ffx_unmap_all(f, child);
	ffx_unmap_all(f, ctx->parent);
	KUNIT_EXPECT_EQ(test, ffx_node_stat(f, NR_ANON_MAPPED) - base, 0);
}

/* The same for NR_FILE_MAPPED and a page cache folio (mapped by PTEs). */
static void file_mapped_stat_counts_mapped_pages_or_the_whole_folio(struct kunit *test)
{
	struct folio_mapcount_ctx *ctx = test->priv;
	struct ffx_mm *m = ctx->parent;
	struct ffx_folio *f;
	long base;

	if (ctx->level == FFX_PMD)
		kunit_skip(test, "the fixture maps page cache folios by PTEs only");
	f = ffx_folio_alloc_file(m, ctx->f->order);
	base = ffx_node_stat(f, NR_FILE_MAPPED);

	ffx_map_ptes(f, m, 0, f->nr);
	KUNIT_EXPECT_EQ(test, ffx_node_stat(f, NR_FILE_MAPPED) - base, f->nr);
	ffx_unmap_ptes(f, m, 1, f->nr - 1);
	KUNIT_EXPECT_EQ(test, ffx_node_stat(f, NR_FILE_MAPPED) - base,
			FFX_VARIANT(1, f->nr));
	ffx_unmap_ptes(f, m, 0, 1);
	KUNIT_EXPECT_EQ(test, ffx_node_stat(f, NR_FILE_MAPPED) - base, 0);
}

/*
 * After fork(), parent and child unmap the same half of the folio.  With
 * per-page mapcounts the unmapped pages are seen and the folio is queued
 * for deferred split; without them, the folio still has as many mappings
 * as pages (two for each page of the other half) and is not.
 */
static void same_half_unmapped_in_parent_and_child_is_seen_only_per_page(struct kunit *test)
{
	struct folio_mapcount_ctx *ctx = test->priv;
	struct folio *folio = ctx->f->folio;
	struct ffx_mm *child = fork_child(test);
	long half = ctx->nr / 2;

	ffx_pte_map(ctx->f, ctx->parent);
	ffx_pte_map(ctx->f, child);
	ffx_unmap_ptes(ctx->f, ctx->parent, half, ctx->nr - half);
	/* Every page is still mapped by the child. */
	KUNIT_EXPECT_FALSE(test, folio_test_partially_mapped(folio));

	ffx_unmap_ptes(ctx->f, child, half, ctx->nr - half);
	KUNIT_EXPECT_EQ(test, folio_mapcount(folio), 2 * half);
	KUNIT_EXPECT_EQ(test, folio_test_partially_mapped(folio),
			FFX_VARIANT(true, false));

	/* One more unmap leaves fewer mappings than pages: queued in both. */
	ffx_unmap_ptes(ctx->f, child, 0, 1);
	KUNIT_EXPECT_TRUE(test, folio_test_partially_mapped(folio));
}

/*
 * The last PMD mapping goes while a child still maps all pages but one by
 * PTEs: the folio is partially mapped, in both variants (with per-page
 * mapcounts one page lost its last mapping, without them fewer mappings
 * than pages and no PMD are left).
 */
static void pmd_unmap_leaving_fewer_ptes_marks_folio_partially_mapped(struct kunit *test)
{
	struct ffx *fx = ffx_init(test);
	struct ffx_mm *parent = ffx_mm_create(fx, "parent"), *child;
	struct ffx_folio *f = ffx_folio_alloc(parent, FFX_ORDER_PMD);
	long base;

	ffx_map_new(f, parent, FFX_PMD);
	child = ffx_fork(f, parent, "child");
	ffx_pte_map(f, child);
	ffx_unmap_ptes(f, child, 0, 1);
	/* The parent's PMD still maps every page. */
	KUNIT_EXPECT_FALSE(test, folio_test_partially_mapped(f->folio));

	base = ffx_node_stat(f, NR_ANON_MAPPED);
	ffx_unmap_all(f, parent);
	KUNIT_EXPECT_EQ(test, folio_entire_mapcount(f->folio), 0);
	KUNIT_EXPECT_EQ(test, folio_mapcount(f->folio), f->nr - 1);
	KUNIT_EXPECT_TRUE(test, folio_test_partially_mapped(f->folio));
	/* Page 0 is mapped nowhere now. */
	KUNIT_EXPECT_EQ(test, ffx_node_stat(f, NR_ANON_MAPPED) - base,
			FFX_VARIANT(-1, 0));
}

static struct kunit_case folio_mapcount_cases[] = {
	KUNIT_CASE_PARAM(exclusive_map_counts_each_mapping_once,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(fork_duplicates_every_mapping_into_the_child,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(child_cow_of_one_page_keeps_folio_shared,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(child_exit_leaves_parent_sole_but_not_anon_exclusive,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(partial_unmap_in_one_mm_marks_folio_partially_mapped,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(unmapping_everything_leaves_no_mapping,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(every_mapping_holds_a_reference,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(mapped_stat_counts_mapped_pages_or_the_whole_folio,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(file_mapped_stat_counts_mapped_pages_or_the_whole_folio,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(same_half_unmapped_in_parent_and_child_is_seen_only_per_page,
			 ffx_shape_gen_params),
	KUNIT_CASE(pmd_unmap_leaving_fewer_ptes_marks_folio_partially_mapped),
	{}
};

static struct kunit_suite folio_mapcount_suite = {
	.name = "folio_mapcount",
	.init = folio_mapcount_test_init,
	.test_cases = folio_mapcount_cases,
};

kunit_test_suite(folio_mapcount_suite);

MODULE_DESCRIPTION("KUnit baseline of large folio mapcount semantics");
MODULE_LICENSE("GPL");
