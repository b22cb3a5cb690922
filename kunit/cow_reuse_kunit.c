// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "cow_reuse": when a write fault on a read-only PTE reuses the
 * anonymous folio it maps, and when it copies.
 *
 * This file is included at the end of mm/memory.c, like the DAMON tests are
 * included in the files they test, so that it can call the write fault's
 * decision, wp_can_reuse_anon_folio(), directly.  The folios and MMs are
 * real (see folio_fixture.h); the fixture plays the page tables.  A page
 * only reaches that decision when it is not PageAnonExclusive, as after
 * fork(): so every case starts with a fork.
 *
 * The rules the cases pin down, for a PTE-mapped large anonymous folio:
 * it is reused when only the faulting MM maps it (the "maybe mapped shared"
 * bit is clear), it has more than one mapping, and every reference belongs
 * to a mapping (no GUP pin, no swap cache that could not be dropped).  The
 * third, untracked MM of a folio makes it copy even when that MM is the
 * only one left: the false positive of folio_maybe_mapped_shared().  Small
 * folios keep their rules: the cases that hold for both run for order 0 too.
 *
 * There is no swap device here: the swap cache cases mark the folio as in
 * the swap cache, with its references, and a KUnit static stub stands in
 * for folio_free_swap().  It either drops the folio from the swap cache, as
 * delete_from_swap_cache() does, or fails as when a PTE still holds a swap
 * entry.
 */
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/pagemap.h>
#include <linux/rmap.h>
#include <linux/swap.h>

#include "folio_fixture.h"

struct cow_reuse_shape {
	const char *desc;
	int order;
};

/* Anonymous large folios: the smallest mTHP, a 64K mTHP, a PMD-sized THP. */
static const struct cow_reuse_shape cow_reuse_large_shapes[] = {
	{ "order-2", 2 },
	{ "order-4", 4 },
	{ "PMD-order PTE-mapped", FFX_ORDER_PMD },
};

static const struct cow_reuse_shape cow_reuse_small_shapes[] = {
	{ "order-0", 0 },
};

/* Where large and small folios follow the same rule. */
static const struct cow_reuse_shape cow_reuse_all_shapes[] = {
	{ "order-0", 0 },
	{ "order-2", 2 },
	{ "order-4", 4 },
	{ "PMD-order PTE-mapped", FFX_ORDER_PMD },
};

static void cow_reuse_shape_desc(const struct cow_reuse_shape *s, char *desc)
{
	strscpy(desc, s->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cow_reuse_large, cow_reuse_large_shapes, cow_reuse_shape_desc);
KUNIT_ARRAY_PARAM(cow_reuse_small, cow_reuse_small_shapes, cow_reuse_shape_desc);
KUNIT_ARRAY_PARAM(cow_reuse_all, cow_reuse_all_shapes, cow_reuse_shape_desc);

struct cow_reuse_ctx {
	struct ffx_mm *parent;
	struct ffx_folio *f;
	struct folio *folio;
	long nr;
	/* The folio_free_swap() stand-in: what it does, how often it ran. */
	bool swap_entries_left;
	int free_swap_calls;
};

/* The parent has faulted in the whole folio, exclusively. */
static int cow_reuse_init(struct kunit *test)
{
	const struct cow_reuse_shape *shape = test->param_value;
	struct cow_reuse_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	ctx->f = ffx_start(test, shape->order, &ctx->parent);
	ctx->folio = ctx->f->folio;
	ctx->nr = ctx->f->nr;
	return 0;
}

/*
 * The write fault's decision for @m's mapping of the folio, under @m's mmap
 * lock as in the fault.  A real folio is referenced only by its mappings
 * (and whatever the case adds): the fixture's own reference is dropped
 * around the call, while @m's mappings keep the folio alive.
 */
static bool can_reuse(struct kunit *test, struct ffx_mm *m)
{
	struct cow_reuse_ctx *ctx = test->priv;
	struct folio *folio = ctx->folio;
	int swap_calls = ctx->free_swap_calls;
	long exclusive = ffx_nr_anon_exclusive(ctx->f);
	bool shared = folio_maybe_mapped_shared(folio);
	int refs = folio_ref_count(folio);
	bool reuse;

	KUNIT_ASSERT_GT_MSG(test, ffx_model_mapcount(ctx->f, m), 0,
			    "%s does not map the folio", m->name);
	mmap_read_lock(m->mm);
	folio_put(folio);
	reuse = wp_can_reuse_anon_folio(folio, m->vma);
	folio_get(folio);
	mmap_read_unlock(m->mm);

	/*
	 * Deciding changes nothing else: no mapping, no sharing, no
	 * exclusive page (the fault sets that after a reuse), no reference
	 * unless the swap cache was dropped, and no lock is left held.
	 */
	KUNIT_EXPECT_EQ(test, folio_mapcount(folio),
			ffx_model_total_mapcount(ctx->f));
	KUNIT_EXPECT_EQ(test, folio_maybe_mapped_shared(folio), shared);
	KUNIT_EXPECT_EQ(test, ffx_nr_anon_exclusive(ctx->f), exclusive);
	if (ctx->free_swap_calls == swap_calls)
		KUNIT_EXPECT_EQ(test, folio_ref_count(folio), refs);
	if (folio_test_large(folio))
		KUNIT_EXPECT_FALSE(test, test_bit(FOLIO_MM_IDS_LOCK_BITNUM,
						  &folio->_mm_ids));
	return reuse;
}

static void exclusive_after_child_exited_is_reused(struct kunit *test)
{
	struct cow_reuse_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	ffx_mm_exit(child);
	/* fork() took PageAnonExclusive away: the fault has to decide. */
	KUNIT_EXPECT_EQ(test, ffx_nr_anon_exclusive(ctx->f), 0);
	KUNIT_EXPECT_TRUE_MSG(test, can_reuse(test, ctx->parent),
			      "only the parent maps the folio: reuse, do not copy");
}

static void shared_with_live_child_is_copied(struct kunit *test)
{
	struct cow_reuse_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	KUNIT_EXPECT_FALSE(test, can_reuse(test, ctx->parent));
	KUNIT_EXPECT_FALSE(test, can_reuse(test, child));
}

/*
 * The child keeps a single page (it wrote to, or unmapped, all others): the
 * parent's pages that the child does not map are still in a shared folio.
 */
static void child_keeping_one_page_makes_parent_copy(struct kunit *test)
{
	struct cow_reuse_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	ffx_unmap_ptes(ctx->f, child, 0, ctx->nr - 1);
	KUNIT_EXPECT_FALSE(test, can_reuse(test, ctx->parent));
	KUNIT_EXPECT_FALSE(test, can_reuse(test, child));
	ffx_unmap_ptes(ctx->f, child, ctx->nr - 1, 1);
	KUNIT_EXPECT_TRUE(test, can_reuse(test, ctx->parent));
}

/* The child writes after the parent unmapped (or exec'ed). */
static void child_reuses_after_parent_unmapped(struct kunit *test)
{
	struct cow_reuse_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	ffx_unmap_all(ctx->f, ctx->parent);
	KUNIT_EXPECT_TRUE(test, can_reuse(test, child));
}

/*
 * With one mapping left, copying that page lets the whole large folio be
 * freed: the fault copies.  With two, the folio is worth keeping.
 */
static void last_mapped_page_is_copied(struct kunit *test)
{
	struct cow_reuse_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	ffx_mm_exit(child);
	ffx_unmap_ptes(ctx->f, ctx->parent, 0, ctx->nr - 2);
	KUNIT_EXPECT_EQ(test, folio_mapcount(ctx->folio), 2);
	KUNIT_EXPECT_TRUE(test, can_reuse(test, ctx->parent));
	ffx_unmap_ptes(ctx->f, ctx->parent, ctx->nr - 2, 1);
	KUNIT_EXPECT_EQ(test, folio_mapcount(ctx->folio), 1);
	KUNIT_EXPECT_FALSE(test, can_reuse(test, ctx->parent));
}

/*
 * A GUP pin is a reference no mapping accounts for: copy while it lasts.
 * GUP pins only exclusive anonymous pages: pinning page 0 made the unshare
 * fault reuse it and mark it exclusive first.  A write fault on another
 * page of the folio then asks again, and must copy.
 */
static void gup_pin_makes_it_copy(struct kunit *test)
{
	struct cow_reuse_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	ffx_mm_exit(child);
	KUNIT_ASSERT_TRUE(test, can_reuse(test, ctx->parent));
	SetPageAnonExclusive(folio_page(ctx->folio, 0));
	KUNIT_ASSERT_EQ(test, try_grab_folio(ctx->folio, 1, FOLL_PIN), 0);
	KUNIT_EXPECT_TRUE(test, folio_maybe_dma_pinned(ctx->folio));
	KUNIT_EXPECT_FALSE(test, can_reuse(test, ctx->parent));
	unpin_folio(ctx->folio);
	KUNIT_EXPECT_TRUE(test, can_reuse(test, ctx->parent));
}

/*
 * Any other reference (GUP without FOLL_PIN, an I/O in flight) too, for
 * large and small folios.
 */
static void extra_reference_makes_it_copy(struct kunit *test)
{
	struct cow_reuse_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	ffx_mm_exit(child);
	folio_get(ctx->folio);
	KUNIT_EXPECT_FALSE(test, can_reuse(test, ctx->parent));
	folio_put(ctx->folio);
	KUNIT_EXPECT_TRUE(test, can_reuse(test, ctx->parent));
}

static bool cow_free_swap_stub(struct folio *folio)
{
	struct kunit *test = kunit_get_current_test();
	struct cow_reuse_ctx *ctx = test->priv;

	ctx->free_swap_calls++;
	KUNIT_EXPECT_TRUE_MSG(test, folio_test_locked(folio),
			      "the swap cache is dropped under the folio lock");
	if (ctx->swap_entries_left || !folio_test_swapcache(folio))
		return false;
	/* What delete_from_swap_cache() does to the folio. */
	folio_clear_swapcache(folio);
	folio_ref_sub(folio, folio_nr_pages(folio));
	return true;
}

static void leave_swapcache(void *data)
{
	struct folio *folio = data;

	if (folio_test_swapcache(folio)) {
		folio_clear_swapcache(folio);
		folio_ref_sub(folio, folio_nr_pages(folio));
	}
}

/* The folio is in the swap cache (swapped out and in again), with its refs. */
static void add_to_swapcache(struct kunit *test)
{
	struct cow_reuse_ctx *ctx = test->priv;

	if (!IS_ENABLED(CONFIG_SWAP))
		kunit_skip(test, "no CONFIG_SWAP: no swap cache");
	folio_ref_add(ctx->folio, ctx->nr);
	folio_set_swapcache(ctx->folio);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, leave_swapcache,
							   ctx->folio));
	kunit_activate_static_stub(test, folio_free_swap, cow_free_swap_stub);
}

static void droppable_swapcache_is_dropped_and_reused(struct kunit *test)
{
	struct cow_reuse_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	ffx_mm_exit(child);
	add_to_swapcache(test);
	KUNIT_EXPECT_TRUE(test, can_reuse(test, ctx->parent));
	KUNIT_EXPECT_EQ(test, ctx->free_swap_calls, 1);
	KUNIT_EXPECT_FALSE(test, folio_test_swapcache(ctx->folio));
	KUNIT_EXPECT_FALSE(test, folio_test_locked(ctx->folio));
}

/* Some PTE still holds a swap entry: the swap cache stays, the fault copies. */
static void swapcache_still_in_use_makes_it_copy(struct kunit *test)
{
	struct cow_reuse_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	ffx_mm_exit(child);
	add_to_swapcache(test);
	ctx->swap_entries_left = true;
	KUNIT_EXPECT_FALSE(test, can_reuse(test, ctx->parent));
	KUNIT_EXPECT_EQ(test, ctx->free_swap_calls, 1);
	KUNIT_EXPECT_TRUE(test, folio_test_swapcache(ctx->folio));
	KUNIT_EXPECT_FALSE(test, folio_test_locked(ctx->folio));
}

/* Someone holds the folio lock (swapout, migration): copy, do not wait. */
static void locked_swapcache_folio_is_copied(struct kunit *test)
{
	struct cow_reuse_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	ffx_mm_exit(child);
	add_to_swapcache(test);
	folio_lock(ctx->folio);
	KUNIT_EXPECT_FALSE(test, can_reuse(test, ctx->parent));
	folio_unlock(ctx->folio);
	KUNIT_EXPECT_EQ(test, ctx->free_swap_calls, 0);
	KUNIT_EXPECT_TRUE(test, folio_test_swapcache(ctx->folio));
}

/*
 * Parent and child hold the two slots; a second child is untracked.  When
 * the tracked MMs are gone, the untracked one is the only MM left, but the
 * folio still reads "maybe mapped shared" (a false positive): it copies.
 */
static void untracked_third_mm_left_alone_copies(struct kunit *test)
{
	struct cow_reuse_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");
	struct ffx_mm *third = ffx_fork(ctx->f, ctx->parent, "third");

	KUNIT_EXPECT_FALSE(test, can_reuse(test, third));
	ffx_mm_exit(child);
	ffx_mm_exit(ctx->parent);
	KUNIT_EXPECT_EQ(test, ffx_model_total_mapcount(ctx->f),
			ffx_model_mapcount(ctx->f, third));
	KUNIT_EXPECT_FALSE_MSG(test, can_reuse(test, third),
			       "the untracked MM's folio stays maybe shared: copy");
}

/* Once the untracked MM has gone, the tracked one left can reuse again. */
static void tracked_mm_left_after_untracked_reuses(struct kunit *test)
{
	struct cow_reuse_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");
	struct ffx_mm *third = ffx_fork(ctx->f, ctx->parent, "third");

	ffx_mm_exit(third);
	KUNIT_EXPECT_FALSE(test, can_reuse(test, ctx->parent));
	ffx_mm_exit(child);
	KUNIT_EXPECT_TRUE(test, can_reuse(test, ctx->parent));
}

static void small_reused_by_child_moves_to_its_anon_vma(struct kunit *test)
{
	struct cow_reuse_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	ffx_unmap_all(ctx->f, ctx->parent);
	KUNIT_EXPECT_PTR_NE(test, folio_anon_vma(ctx->folio),
			    child->vma->anon_vma);
	KUNIT_EXPECT_TRUE(test, can_reuse(test, child));
	KUNIT_EXPECT_PTR_EQ(test, folio_anon_vma(ctx->folio),
			    child->vma->anon_vma);
}

/* A reference from GUP without FOLL_PIN, or an I/O in flight. */
static struct kunit_case cow_reuse_cases[] = {
	KUNIT_CASE_PARAM(exclusive_after_child_exited_is_reused,
			 cow_reuse_all_gen_params),
	KUNIT_CASE_PARAM(shared_with_live_child_is_copied,
			 cow_reuse_all_gen_params),
	KUNIT_CASE_PARAM(child_keeping_one_page_makes_parent_copy,
			 cow_reuse_large_gen_params),
	KUNIT_CASE_PARAM(child_reuses_after_parent_unmapped,
			 cow_reuse_large_gen_params),
	KUNIT_CASE_PARAM(last_mapped_page_is_copied,
			 cow_reuse_large_gen_params),
	KUNIT_CASE_PARAM(gup_pin_makes_it_copy, cow_reuse_large_gen_params),
	KUNIT_CASE_PARAM(extra_reference_makes_it_copy,
			 cow_reuse_all_gen_params),
	KUNIT_CASE_PARAM(droppable_swapcache_is_dropped_and_reused,
			 cow_reuse_large_gen_params),
	KUNIT_CASE_PARAM(swapcache_still_in_use_makes_it_copy,
			 cow_reuse_large_gen_params),
	KUNIT_CASE_PARAM(locked_swapcache_folio_is_copied,
			 cow_reuse_large_gen_params),
	KUNIT_CASE_PARAM(untracked_third_mm_left_alone_copies,
			 cow_reuse_large_gen_params),
	KUNIT_CASE_PARAM(tracked_mm_left_after_untracked_reuses,
			 cow_reuse_large_gen_params),
	KUNIT_CASE_PARAM(small_reused_by_child_moves_to_its_anon_vma,
			 cow_reuse_small_gen_params),
	{}
};

static struct kunit_suite cow_reuse_suite = {
	.name = "cow_reuse",
	.init = cow_reuse_init,
	.test_cases = cow_reuse_cases,
};

kunit_test_suite(cow_reuse_suite);
