// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for MM owner tracking of large folios (CONFIG_MM_ID).
 *
 * "folio_owner": a large folio tracks up to two MMs that map it, each in a
 * slot with its own mapcount, and keeps a "maybe mapped shared" bit that is
 * never clear while two MMs map the folio.  Each case maps a real folio into
 * real MMs through the rmap API, as the fault, fork, COW, zap and exit paths
 * do, and states what the slots and the bit say, compared with the
 * fixture's own record of what each MM maps.
 *
 * Where the 6.12 baseline ("folio_mapcount" suite) and owner tracking agree,
 * the same expectations appear here (folio_mapcount(), per-page mapcounts);
 * where they differ, the case says so: two MMs mapping disjoint halves of a
 * folio looked exclusive to 6.12's folio_likely_mapped_shared() but are
 * shared here.
 *
 * "folio_owner_overflow": the per-MM mapcount has 16 bits on 32-bit.  An MM
 * that maps a PMD-sized folio more than SHRT_MAX times loses its slot and
 * the folio counts as maybe shared; on 64-bit the same MM stays tracked.
 *
 * "folio_owner_regressions": the bug classes upstream hit after the series
 * was merged: hugetlb folios stay out of the tracking, a folio split
 * leaves new folios with a consistent order, number of pages and tracking
 * state, and dumping an order-1 folio reads no page[2].
 */
#include <kunit/test.h>
#include <linux/highmem.h>
#include <linux/hugetlb.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mmap_lock.h>
#include <linux/rmap.h>
#include <linux/sched/mm.h>
#include <linux/swap.h>
#include <linux/vmalloc.h>

#include "../internal.h"
#include "folio_fixture.h"

struct folio_owner_shape {
	const char *desc;
	int order;
	enum ffx_level level;
	bool file;
};

static const struct folio_owner_shape folio_owner_shapes[] = {
	/* Anonymous memory never uses order 1; the page cache does. */
	{ "order-1 file PTE-mapped", 1, FFX_PTE, true },
	{ "order-4 anon PTE-mapped", 4, FFX_PTE, false },
	{ "PMD-order anon PTE-mapped", FFX_ORDER_PMD, FFX_PTE, false },
	{ "PMD-order anon PMD-mapped", FFX_ORDER_PMD, FFX_PMD, false },
};

static void folio_owner_shape_desc(const struct folio_owner_shape *s,
				   char *desc)
{
	strscpy(desc, s->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(folio_owner_shape, folio_owner_shapes,
		  folio_owner_shape_desc);

struct folio_owner_ctx {
	struct ffx *fx;
	struct ffx_mm *parent;
	struct ffx_folio *f;
	struct folio *folio;
	enum ffx_level level;
	long nr;
	/* How many mappings one MM holds when it maps the whole folio. */
	long per_mm;
};

/* The slot that tracks @m, or -1 if @m is untracked. */
static int owner_slot(struct folio *folio, struct ffx_mm *m)
{
	if (folio_mm_id(folio, 0) == m->id)
		return 0;
	if (folio_mm_id(folio, 1) == m->id)
		return 1;
	return -1;
}

static int slot_mapcount(struct folio *folio, int i)
{
	return folio->_mm_id_mapcount[i] + 1;
}

static bool maybe_shared(struct folio *folio)
{
	return folio_test_large_maybe_mapped_shared(folio);
}

static void expect_tracked(struct kunit *test, struct ffx_mm *m, long count)
{
	struct folio_owner_ctx *ctx = test->priv;
	int i = owner_slot(ctx->folio, m);

	KUNIT_EXPECT_GE_MSG(test, i, 0, "%s (ID %u) has no slot", m->name, m->id);
	if (i >= 0)
		KUNIT_EXPECT_EQ_MSG(test, slot_mapcount(ctx->folio, i), count,
				    "mapcount in %s's slot %d", m->name, i);
}

static void expect_untracked(struct kunit *test, struct ffx_mm *m)
{
	struct folio_owner_ctx *ctx = test->priv;

	KUNIT_EXPECT_EQ_MSG(test, owner_slot(ctx->folio, m), -1,
			    "%s (ID %u) should hold no slot", m->name, m->id);
}

static void expect_slot_free(struct kunit *test, int i)
{
	struct folio_owner_ctx *ctx = test->priv;

	KUNIT_EXPECT_EQ_MSG(test, folio_mm_id(ctx->folio, i), MM_ID_DUMMY,
			    "slot %d should be free", i);
	KUNIT_EXPECT_EQ_MSG(test, slot_mapcount(ctx->folio, i), 0,
			    "a free slot %d counts no mapping", i);
}

/*
 * What holds after every step: the large mapcount is the fixture's total,
 * the lock is not left taken, and the bit is set whenever two MMs map the
 * folio (no false negative).
 */
static void expect_consistent(struct kunit *test)
{
	struct folio_owner_ctx *ctx = test->priv;
	struct ffx_mm *m;
	int mapping_mms = 0;

	KUNIT_EXPECT_EQ(test, folio_mapcount(ctx->folio),
			ffx_model_total_mapcount(ctx->f));
	KUNIT_EXPECT_FALSE_MSG(test, test_bit(FOLIO_MM_IDS_LOCK_BITNUM,
					      &ctx->folio->_mm_ids),
			       "the large mapcount lock is still held");
	list_for_each_entry(m, &ctx->fx->mms, node)
		mapping_mms += ffx_model_mapcount(ctx->f, m) > 0;
	if (mapping_mms > 1)
		KUNIT_EXPECT_TRUE_MSG(test, maybe_shared(ctx->folio),
				      "%d MMs map the folio, but it is not maybe shared",
				      mapping_mms);
}

static int folio_owner_test_init(struct kunit *test)
{
	const struct folio_owner_shape *s = test->param_value;
	struct folio_owner_ctx *ctx;

	KUNIT_ASSERT_NOT_NULL(test, s);
	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	ctx->fx = ffx_init(test);
	ctx->parent = ffx_mm_create(ctx->fx, "parent");
	if (s->file)
		ctx->f = ffx_folio_alloc_file(ctx->parent, s->order);
	else
		ctx->f = ffx_folio_alloc(ctx->parent, s->order);
	ctx->folio = ctx->f->folio;
	ctx->level = s->level;
	ctx->nr = ctx->f->nr;
	ctx->per_mm = s->level == FFX_PMD ? 1 : ctx->nr;
	ffx_map_new(ctx->f, ctx->parent, s->level);
	return 0;
}

static void exclusive_map_is_tracked_in_slot_0_and_not_shared(struct kunit *test)
{
	struct folio_owner_ctx *ctx = test->priv;

	KUNIT_EXPECT_GE(test, ctx->parent->id, MM_ID_MIN);
	KUNIT_EXPECT_EQ(test, owner_slot(ctx->folio, ctx->parent), 0);
	expect_tracked(test, ctx->parent, ctx->per_mm);
	expect_slot_free(test, 1);
	KUNIT_EXPECT_FALSE(test, maybe_shared(ctx->folio));
	/* As in the baseline. */
	KUNIT_EXPECT_EQ(test, folio_mapcount(ctx->folio), ctx->per_mm);
	expect_consistent(test);
}

static void fork_tracks_the_child_in_slot_1_and_sets_shared_bit(struct kunit *test)
{
	struct folio_owner_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	KUNIT_EXPECT_EQ(test, owner_slot(ctx->folio, ctx->parent), 0);
	KUNIT_EXPECT_EQ(test, owner_slot(ctx->folio, child), 1);
	expect_tracked(test, ctx->parent, ctx->per_mm);
	expect_tracked(test, child, ctx->per_mm);
	KUNIT_EXPECT_TRUE(test, maybe_shared(ctx->folio));
	KUNIT_EXPECT_EQ(test, folio_mapcount(ctx->folio), 2 * ctx->per_mm);
	expect_consistent(test);
}

static void child_cow_of_one_page_keeps_folio_shared(struct kunit *test)
{
	struct folio_owner_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");
	long cow = ctx->nr / 2;

	/* A write fault in the child replaces one page by a copy. */
	ffx_pte_map(ctx->f, child);
	ffx_unmap_ptes(ctx->f, child, cow, 1);

	expect_tracked(test, ctx->parent, ctx->per_mm);
	expect_tracked(test, child, ctx->nr - 1);
	KUNIT_EXPECT_TRUE(test, maybe_shared(ctx->folio));
	/* Per-page mapcounts are not maintained with CONFIG_NO_PAGE_MAPCOUNT. */
	KUNIT_EXPECT_EQ(test, ffx_page_mapcount(ctx->f, cow),
			ctx->level == FFX_PMD || IS_ENABLED(CONFIG_NO_PAGE_MAPCOUNT) ?
			0 : 1);
	expect_consistent(test);
}

static void child_exit_frees_slot_1_and_clears_shared_bit(struct kunit *test)
{
	struct folio_owner_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	ffx_pte_map(ctx->f, child);
	ffx_unmap_ptes(ctx->f, child, 0, 1);
	ffx_mm_exit(child);

	expect_slot_free(test, 1);
	expect_tracked(test, ctx->parent, ctx->per_mm);
	KUNIT_EXPECT_FALSE(test, maybe_shared(ctx->folio));
	KUNIT_EXPECT_EQ(test, folio_mapcount(ctx->folio), ctx->per_mm);
	expect_consistent(test);
}

static void parent_exit_leaves_the_child_in_slot_1_as_sole_owner(struct kunit *test)
{
	struct folio_owner_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	ffx_mm_exit(ctx->parent);

	expect_slot_free(test, 0);
	expect_tracked(test, child, ctx->per_mm);
	KUNIT_EXPECT_EQ(test, owner_slot(ctx->folio, child), 1);
	KUNIT_EXPECT_FALSE(test, maybe_shared(ctx->folio));
	expect_consistent(test);
}

static void partial_unmap_in_parent_keeps_folio_exclusive(struct kunit *test)
{
	struct folio_owner_ctx *ctx = test->priv;
	long half = ctx->nr / 2;

	ffx_pte_map(ctx->f, ctx->parent);
	ffx_unmap_ptes(ctx->f, ctx->parent, half, ctx->nr - half);

	expect_tracked(test, ctx->parent, half);
	expect_slot_free(test, 1);
	KUNIT_EXPECT_FALSE(test, maybe_shared(ctx->folio));
	/* As in the baseline. */
	KUNIT_EXPECT_EQ(test, folio_mapcount(ctx->folio), half);
	KUNIT_EXPECT_EQ(test, ffx_page_mapcount(ctx->f, ctx->nr - 1), 0);
	expect_consistent(test);
}

/*
 * 6.12's false negative: with disjoint halves, no page is mapped twice and
 * the first page only once, so folio_likely_mapped_shared() answered
 * "exclusive".  Owner tracking knows that two MMs map the folio.
 */
static void disjoint_halves_in_two_mms_are_shared(struct kunit *test)
{
	struct folio_owner_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");
	long half = ctx->nr / 2;

	ffx_pte_map(ctx->f, ctx->parent);
	ffx_pte_map(ctx->f, child);
	ffx_unmap_ptes(ctx->f, ctx->parent, half, ctx->nr - half);
	ffx_unmap_ptes(ctx->f, child, 0, half);

	expect_tracked(test, ctx->parent, half);
	expect_tracked(test, child, ctx->nr - half);
	KUNIT_EXPECT_TRUE_MSG(test, maybe_shared(ctx->folio),
			      "two MMs map disjoint halves: shared, unlike 6.12's answer");
	KUNIT_EXPECT_EQ(test, folio_mapcount(ctx->folio), ctx->nr);
	expect_consistent(test);
}

/* A second child of the parent finds both slots taken. */
static void third_mm_is_untracked_and_folio_shared(struct kunit *test)
{
	struct folio_owner_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");
	struct ffx_mm *third = ffx_fork(ctx->f, ctx->parent, "third");

	expect_tracked(test, ctx->parent, ctx->per_mm);
	expect_tracked(test, child, ctx->per_mm);
	expect_untracked(test, third);
	KUNIT_EXPECT_TRUE(test, maybe_shared(ctx->folio));
	/* The large mapcount counts the untracked MM's mappings too. */
	KUNIT_EXPECT_EQ(test, folio_mapcount(ctx->folio), 3 * ctx->per_mm);
	expect_consistent(test);
}

/*
 * The one false positive: once both tracked MMs are gone, only the
 * untracked MM maps the folio, but nothing tells: the bit stays set until
 * a tracked MM owns every mapping or the folio is fully unmapped.
 */
static void untracked_last_mm_keeps_folio_maybe_shared_until_unmapped(struct kunit *test)
{
	struct folio_owner_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");
	struct ffx_mm *third = ffx_fork(ctx->f, ctx->parent, "third");

	ffx_pte_map(ctx->f, third);
	ffx_mm_exit(child);
	ffx_mm_exit(ctx->parent);

	expect_slot_free(test, 0);
	expect_slot_free(test, 1);
	KUNIT_EXPECT_EQ(test, folio_mapcount(ctx->folio), ctx->nr);
	KUNIT_EXPECT_TRUE_MSG(test, maybe_shared(ctx->folio),
			      "false positive of the three-MM case: only %s maps it",
			      third->name);
	expect_consistent(test);

	/* Still only the untracked MM (nr >= 2), still the false positive. */
	ffx_unmap_ptes(ctx->f, third, 0, 1);
	KUNIT_EXPECT_EQ(test, folio_mapcount(ctx->folio), ctx->nr - 1);
	KUNIT_EXPECT_TRUE(test, maybe_shared(ctx->folio));

	ffx_mm_exit(third);
	KUNIT_EXPECT_EQ(test, folio_mapcount(ctx->folio), 0);
	KUNIT_EXPECT_FALSE(test, maybe_shared(ctx->folio));
	expect_consistent(test);
}

/* When the untracked MM leaves, the tracked one left owns everything. */
static void untracked_mm_leaving_makes_the_tracked_owner_exclusive(struct kunit *test)
{
	struct folio_owner_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");
	struct ffx_mm *third = ffx_fork(ctx->f, ctx->parent, "third");

	ffx_mm_exit(child);
	/* Parent and the untracked MM: really shared. */
	KUNIT_EXPECT_TRUE(test, maybe_shared(ctx->folio));
	expect_consistent(test);

	ffx_mm_exit(third);
	expect_tracked(test, ctx->parent, ctx->per_mm);
	expect_slot_free(test, 1);
	KUNIT_EXPECT_FALSE(test, maybe_shared(ctx->folio));
	expect_consistent(test);
}

/*
 * An MM that mapped pages while untracked can take a slot later, for
 * mappings it adds then; when it unmaps more than its slot counted, the
 * slot goes below zero and is freed, and nothing else is corrupted.
 */
static void slot_going_negative_is_freed(struct kunit *test)
{
	struct folio_owner_ctx *ctx = test->priv;
	struct ffx_mm *child, *third;

	child = ffx_fork(ctx->f, ctx->parent, "child");
	third = ffx_fork(ctx->f, ctx->parent, "third");
	ffx_pte_map(ctx->f, ctx->parent);
	ffx_pte_map(ctx->f, child);
	ffx_pte_map(ctx->f, third);
	expect_untracked(test, third);

	/* The untracked MM unmaps page 0; the child exits: slot 1 frees. */
	ffx_unmap_ptes(ctx->f, third, 0, 1);
	ffx_mm_exit(child);
	expect_slot_free(test, 1);

	/* Mapping page 0 again takes the free slot, for one mapping. */
	ffx_map_ptes(ctx->f, third, 0, 1);
	expect_tracked(test, third, 1);
	KUNIT_EXPECT_TRUE(test, maybe_shared(ctx->folio));
	expect_consistent(test);

	/* Unmapping two pages: the slot would count -1 mappings. */
	ffx_unmap_ptes(ctx->f, third, 0, 2);
	expect_slot_free(test, 1);
	expect_tracked(test, ctx->parent, ctx->nr);
	KUNIT_EXPECT_EQ(test, folio_mapcount(ctx->folio),
			ctx->nr + ctx->nr - 2);
	/* The untracked MM still maps the rest, if anything is left. */
	KUNIT_EXPECT_EQ(test, maybe_shared(ctx->folio), ctx->nr > 2);
	expect_consistent(test);

	ffx_mm_exit(third);
	expect_tracked(test, ctx->parent, ctx->nr);
	KUNIT_EXPECT_FALSE(test, maybe_shared(ctx->folio));
	expect_consistent(test);
}

/* Both slots free and no flag left: what the page allocator checks. */
static void unmapped_folio_frees_both_slots_and_flags(struct kunit *test)
{
	struct folio_owner_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");
	struct ffx_mm *third = ffx_fork(ctx->f, ctx->parent, "third");

	ffx_unmap_all(ctx->f, ctx->parent);
	ffx_unmap_all(ctx->f, third);
	ffx_unmap_all(ctx->f, child);

	expect_slot_free(test, 0);
	expect_slot_free(test, 1);
	KUNIT_EXPECT_EQ(test, folio_mapcount(ctx->folio), 0);
	KUNIT_EXPECT_EQ_MSG(test, ctx->folio->_mm_ids, 0UL,
			    "IDs, lock and shared bit must all be clear before the folio is freed");
	/* The folio is freed at teardown; a leftover would be a bad page. */
}

static struct kunit_case folio_owner_cases[] = {
	KUNIT_CASE_PARAM(exclusive_map_is_tracked_in_slot_0_and_not_shared,
			 folio_owner_shape_gen_params),
	KUNIT_CASE_PARAM(fork_tracks_the_child_in_slot_1_and_sets_shared_bit,
			 folio_owner_shape_gen_params),
	KUNIT_CASE_PARAM(child_cow_of_one_page_keeps_folio_shared,
			 folio_owner_shape_gen_params),
	KUNIT_CASE_PARAM(child_exit_frees_slot_1_and_clears_shared_bit,
			 folio_owner_shape_gen_params),
	KUNIT_CASE_PARAM(parent_exit_leaves_the_child_in_slot_1_as_sole_owner,
			 folio_owner_shape_gen_params),
	KUNIT_CASE_PARAM(partial_unmap_in_parent_keeps_folio_exclusive,
			 folio_owner_shape_gen_params),
	KUNIT_CASE_PARAM(disjoint_halves_in_two_mms_are_shared,
			 folio_owner_shape_gen_params),
	KUNIT_CASE_PARAM(third_mm_is_untracked_and_folio_shared,
			 folio_owner_shape_gen_params),
	KUNIT_CASE_PARAM(untracked_last_mm_keeps_folio_maybe_shared_until_unmapped,
			 folio_owner_shape_gen_params),
	KUNIT_CASE_PARAM(untracked_mm_leaving_makes_the_tracked_owner_exclusive,
			 folio_owner_shape_gen_params),
	KUNIT_CASE_PARAM(slot_going_negative_is_freed,
			 folio_owner_shape_gen_params),
	KUNIT_CASE_PARAM(unmapped_folio_frees_both_slots_and_flags,
			 folio_owner_shape_gen_params),
	{}
};

static struct kunit_suite folio_owner_suite = {
	.name = "folio_owner",
	.init = folio_owner_test_init,
	.test_cases = folio_owner_cases,
};

/*
 * folio_owner_overflow: one MM maps every page of a PMD-sized page cache
 * folio from many VMAs, as a process that mmap()s the same file range many
 * times does.
 */
#define OVERFLOW_VMA_BASE	0x10000000UL

struct overflow_ctx {
	struct ffx_folio *f;
	struct ffx_mm *m;
	struct vm_area_struct **vmas;
	int nr_vmas;
	int nr_mapped;		/* VMAs that map the folio */
};

static void overflow_unmap_all(void *data)
{
	struct overflow_ctx *o = data;

	while (o->nr_mapped > 0) {
		o->nr_mapped--;
		ffx_ptl_lock();
		folio_remove_rmap_ptes(o->f->folio, folio_page(o->f->folio, 0),
				       o->f->nr, o->vmas[o->nr_mapped]);
		ffx_ptl_unlock();
		folio_ref_sub(o->f->folio, o->f->nr);
	}
}

static struct vm_area_struct *overflow_add_vma(struct kunit *test,
					       struct overflow_ctx *o, int k)
{
	struct mm_struct *mm = o->m->mm;
	struct vm_area_struct *vma = vm_area_alloc(mm);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, vma);
	vma->vm_start = OVERFLOW_VMA_BASE + k * (o->f->nr << PAGE_SHIFT);
	vma->vm_end = vma->vm_start + (o->f->nr << PAGE_SHIFT);
	vma->vm_pgoff = 0;
	vm_flags_init(vma, VM_READ | VM_MAYREAD | VM_SHARED | VM_MAYSHARE);
	vma->vm_page_prot = vm_get_page_prot(vma->vm_flags);
	mmap_write_lock(mm);
	ret = insert_vm_struct(mm, vma);
	mmap_write_unlock(mm);
	if (ret)
		vm_area_free(vma);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return vma;
}

static void overflow_map(struct overflow_ctx *o, int k)
{
	folio_ref_add(o->f->folio, o->f->nr);
	ffx_ptl_lock();
	folio_add_file_rmap_ptes(o->f->folio, folio_page(o->f->folio, 0),
				 o->f->nr, o->vmas[k]);
	ffx_ptl_unlock();
	o->nr_mapped = k + 1;
}

static void mapping_past_shrt_max_stops_tracking_only_on_32bit(struct kunit *test)
{
	struct ffx *fx = ffx_init(test);
	struct overflow_ctx *o;
	struct folio *folio;
	long total;
	int k, i;

	o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, o);
	o->m = ffx_mm_create(fx, "mapper");
	o->f = ffx_folio_alloc_file(o->m, FFX_ORDER_PMD);
	folio = o->f->folio;
	/*
	 * SHRT_MAX + 1 mappings still fit (the count is stored minus one):
	 * the last VMA takes the MM past what 16 bits hold.
	 */
	o->nr_vmas = (SHRT_MAX + 1) / o->f->nr + 1;
	KUNIT_ASSERT_GT(test, (long)(o->nr_vmas - 1) * o->f->nr, (long)SHRT_MAX);
	o->vmas = kunit_kcalloc(test, o->nr_vmas, sizeof(*o->vmas), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, o->vmas);
	for (k = 0; k < o->nr_vmas; k++)
		o->vmas[k] = overflow_add_vma(test, o, k);
	/* Runs before the fixture's teardown puts the folio and the MM. */
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, overflow_unmap_all, o));

	for (k = 0; k < o->nr_vmas - 1; k++)
		overflow_map(o, k);
	total = (long)(o->nr_vmas - 1) * o->f->nr;
	KUNIT_EXPECT_EQ(test, total, (long)SHRT_MAX + 1);
	KUNIT_EXPECT_EQ(test, folio_mapcount(folio), total);
	KUNIT_EXPECT_EQ(test, folio_mm_id(folio, 0), o->m->id);
	KUNIT_EXPECT_EQ(test, (long)folio->_mm_id_mapcount[0] + 1, total);
	KUNIT_EXPECT_FALSE(test, folio_test_large_maybe_mapped_shared(folio));

	overflow_map(o, o->nr_vmas - 1);
	total += o->f->nr;
	/* The large mapcount and the pages are never corrupted. */
	KUNIT_EXPECT_EQ(test, folio_mapcount(folio), total);
	/* Without per-page mapcounts (CONFIG_NO_PAGE_MAPCOUNT) there are none. */
	KUNIT_EXPECT_EQ(test, atomic_read(&folio_page(folio, 0)->_mapcount) + 1,
			FFX_VARIANT(o->nr_vmas, 0));
	if (IS_ENABLED(CONFIG_64BIT)) {
		KUNIT_EXPECT_EQ(test, folio_mm_id(folio, 0), o->m->id);
		KUNIT_EXPECT_EQ(test, (long)folio->_mm_id_mapcount[0] + 1, total);
		KUNIT_EXPECT_FALSE(test,
				   folio_test_large_maybe_mapped_shared(folio));
	} else {
		/* The MM lost its slot: maybe shared, but nothing negative. */
		for (i = 0; i < 2; i++) {
			KUNIT_EXPECT_EQ(test, folio_mm_id(folio, i), MM_ID_DUMMY);
			KUNIT_EXPECT_EQ(test, folio->_mm_id_mapcount[i], -1);
		}
		KUNIT_EXPECT_TRUE(test,
				  folio_test_large_maybe_mapped_shared(folio));
	}

	/* Unmapping all of it: nothing left, nothing shared. */
	overflow_unmap_all(o);
	KUNIT_EXPECT_EQ(test, folio_mapcount(folio), 0);
	KUNIT_EXPECT_EQ(test, folio->_mm_ids, 0UL);
	KUNIT_EXPECT_EQ(test, folio->_mm_id_mapcount[0], -1);
	KUNIT_EXPECT_EQ(test, folio->_mm_id_mapcount[1], -1);
}

static struct kunit_case folio_owner_overflow_cases[] = {
	KUNIT_CASE(mapping_past_shrt_max_stops_tracking_only_on_32bit),
	{}
};

static struct kunit_suite folio_owner_overflow_suite = {
	.name = "folio_owner_overflow",
	.test_cases = folio_owner_overflow_cases,
};

/*
 * folio_owner_regressions: the bug classes upstream hit after the series
 * was merged, pinned down here.
 */
/*
 * hugetlb folios keep their own mapcount handling: mapping one changes
 * its large and entire mapcounts only, never the slots or the shared bit,
 * and folio_maybe_mapped_shared() answers from the mapcount.
 */
static void hugetlb_folio_never_takes_the_tracking_path(struct kunit *test)
{
#ifdef CONFIG_HUGETLB_PAGE
	struct hstate *h = &default_hstate;
	unsigned long ids;
	struct folio *folio;
	int mc0, mc1;

	if (!hugepages_supported() || hstate_is_gigantic(h))
		kunit_skip(test, "no non-gigantic default huge page size");
	/* A temporary folio outside the pool, freed by the last put. */
	folio = alloc_hugetlb_folio_nodemask(h, numa_mem_id(), NULL,
					     htlb_alloc_mask(h), true);
	if (!folio)
		kunit_skip(test, "could not allocate a hugetlb folio");
	KUNIT_ASSERT_TRUE(test, folio_test_hugetlb(folio));
	ids = folio->_mm_ids;
	mc0 = folio->_mm_id_mapcount[0];
	mc1 = folio->_mm_id_mapcount[1];

	hugetlb_add_file_rmap(folio);
	KUNIT_EXPECT_FALSE(test, folio_maybe_mapped_shared(folio));
	hugetlb_add_file_rmap(folio);
	KUNIT_EXPECT_EQ(test, folio_mapcount(folio), 2);
	KUNIT_EXPECT_EQ(test, folio_entire_mapcount(folio), 2);
	KUNIT_EXPECT_TRUE(test, folio_maybe_mapped_shared(folio));
	KUNIT_EXPECT_EQ(test, folio->_mm_ids, ids);
	KUNIT_EXPECT_EQ(test, folio->_mm_id_mapcount[0], mc0);
	KUNIT_EXPECT_EQ(test, folio->_mm_id_mapcount[1], mc1);

	hugetlb_remove_rmap(folio);
	KUNIT_EXPECT_FALSE(test, folio_maybe_mapped_shared(folio));
	hugetlb_remove_rmap(folio);
	KUNIT_EXPECT_EQ(test, folio_mapcount(folio), 0);
	KUNIT_EXPECT_EQ(test, folio->_mm_ids, ids);
	folio_put(folio);
#else
	kunit_skip(test, "needs CONFIG_HUGETLB_PAGE");
#endif
}

/*
 * A folio split gives every new folio an order and a number of pages that
 * agree, and the fields of a large folio mapped afresh: remap_page() maps
 * the pages again through the rmap functions after the split, so each new
 * large folio tracks its MM from a clean state, exclusive, and a new
 * order-0 folio has page[1]'s memcg_data (where the head kept its number
 * of pages on 64-bit) set as for any other page.
 *
 * Unlike the fixture's folios, this one is a real THP in real page tables:
 * an MM gets an anonymous mapping at a PMD-aligned address, a write through
 * GUP faults in a PMD-mapped THP, and split_huge_page_to_list_to_order()
 * unmaps it (splitting the PMD), splits it and maps it again.
 */
struct fo_split_param {
	const char *desc;
	unsigned int new_order;
};

static const struct fo_split_param fo_split_params[] = {
	{ "to order 0", 0 },
	{ "to order 2", 2 },
};

KUNIT_ARRAY_PARAM_DESC(fo_split, fo_split_params, desc);

#define FO_SPLIT_ADDR	0x40000000UL

static void fo_split_release(void *mm)
{
	mmput(mm);
}

static void split_gives_new_folios_consistent_order_and_tracking(struct kunit *test)
{
	const struct fo_split_param *p = test->param_value;
	const unsigned long new_nr = 1UL << p->new_order;
	struct mm_struct *mm;
	struct folio *folio, *f;
	struct page *page;
	unsigned long addr, memcg_data = 0, i;
	long got;
	int ret;

	if (!has_transparent_hugepage())
		kunit_skip(test, "the CPU has no PMD-sized THPs");
	mm = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, mm);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fo_split_release, mm), 0);

	/* mmap() works on current->mm: the MM is ours for that call only. */
	kthread_use_mm(mm);
	addr = vm_mmap(NULL, FO_SPLIT_ADDR, HPAGE_PMD_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, 0);
	kthread_unuse_mm(mm);
	KUNIT_ASSERT_EQ(test, addr, FO_SPLIT_ADDR);

	/* A write fault: a PMD-mapped THP, if one can be allocated. */
	mmap_read_lock(mm);
	got = get_user_pages_remote(mm, addr, 1, FOLL_WRITE, &page, NULL);
	mmap_read_unlock(mm);
	KUNIT_ASSERT_EQ(test, got, 1L);
	folio = page_folio(page);
	if (folio_order(folio) != HPAGE_PMD_ORDER) {
		put_page(page);
		kunit_skip(test, "the fault got an order-%u folio, not a PMD-sized THP",
			   folio_order(folio));
	}
	KUNIT_EXPECT_EQ(test, folio_mm_id(folio, 0), mm->mm_id);
	KUNIT_EXPECT_FALSE(test, folio_maybe_mapped_shared(folio));
#ifdef CONFIG_MEMCG
	memcg_data = folio->memcg_data;
#endif
	/* Data in every page: the split maps zero-filled pages to the zero page. */
	for (i = 0; i < HPAGE_PMD_NR; i++) {
		char *v = kmap_local_page(page + i);

		v[0] = 1;
		kunmap_local(v);
	}

	/* The fault left it in a per-CPU LRU batch, which holds a reference. */
	lru_add_drain_all();
	folio_lock(folio);
	ret = split_huge_page_to_list_to_order(page, NULL, p->new_order);
	folio_unlock(page_folio(page));
	put_page(page);
	KUNIT_ASSERT_EQ(test, ret, 0);

	for (i = 0; i < HPAGE_PMD_NR; i += new_nr) {
		f = page_folio(page + i);
		KUNIT_ASSERT_PTR_EQ_MSG(test, &f->page, page + i, "page %lu", i);
		KUNIT_EXPECT_EQ_MSG(test, folio_order(f), p->new_order, "page %lu", i);
		KUNIT_EXPECT_EQ_MSG(test, folio_nr_pages(f), new_nr, "page %lu", i);
		KUNIT_EXPECT_EQ_MSG(test, folio_mapcount(f), (int)new_nr, "page %lu", i);
#ifdef CONFIG_MEMCG
		KUNIT_EXPECT_EQ_MSG(test, f->memcg_data, memcg_data, "page %lu", i);
#endif
		KUNIT_EXPECT_FALSE_MSG(test, folio_maybe_mapped_shared(f), "page %lu", i);
		if (!p->new_order)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, folio_entire_mapcount(f), 0, "page %lu", i);
		KUNIT_EXPECT_EQ_MSG(test, folio_mm_id(f, 0), mm->mm_id, "page %lu", i);
		KUNIT_EXPECT_EQ_MSG(test, f->_mm_id_mapcount[0], (int)new_nr - 1,
				    "page %lu", i);
		KUNIT_EXPECT_EQ_MSG(test, f->_mm_id_mapcount[1], -1, "page %lu", i);
		KUNIT_EXPECT_FALSE_MSG(test, folio_test_large_maybe_mapped_shared(f),
				       "page %lu", i);
	}
}

/*
 * dump_page() of an order-1 folio reads its two pages only: on 32-bit the
 * fields of larger folios that live in page[2] (_pincount,
 * _entire_mapcount) do not exist for it, and page[2] may be another
 * folio, or no memory at all.  Here the folio is built by
 * prep_compound_page() (which must not touch page[2] either) in the last
 * two struct pages' worth of a vmalloc'ed page: page[2] would be in the
 * guard page behind it, and touching it faults.
 */
static void fo_vfree(void *buf)
{
	vfree(buf);
}

static void dump_of_order_1_folio_stays_within_its_two_pages(struct kunit *test)
{
	struct folio *folio;
	struct page *fake;
	void *buf;

	/* is_migrate_cma_folio() would look up a pageblock by the pfn. */
	if (IS_ENABLED(CONFIG_CMA))
		kunit_skip(test, "CONFIG_CMA: the dump would read pageblock flags by pfn");
	buf = vzalloc(PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fo_vfree, buf), 0);

	fake = buf + PAGE_SIZE - 2 * sizeof(struct page);
	/* The zone, node and section of a real page, for page_to_pfn(). */
	fake[0].flags = vmalloc_to_page(buf)->flags & ~PAGEFLAGS_MASK;
	fake[1].flags = fake[0].flags;
	set_page_count(&fake[0], 1);
	/* As the memmap is initialized: no mapping, no page type. */
	atomic_set(&fake[0]._mapcount, -1);
	atomic_set(&fake[1]._mapcount, -1);
	prep_compound_page(fake, 1);

	folio = page_folio(&fake[1]);
	KUNIT_ASSERT_PTR_EQ(test, &folio->page, fake);
	KUNIT_EXPECT_EQ(test, folio_order(folio), 1U);
	KUNIT_EXPECT_EQ(test, folio_nr_pages(folio), 2L);
	KUNIT_EXPECT_EQ(test, folio_mapcount(folio), 0);
	KUNIT_EXPECT_EQ(test, folio_entire_mapcount(folio), 0);
	KUNIT_EXPECT_FALSE(test, folio_maybe_mapped_shared(folio));
	dump_page(fake, "folio_owner_regressions: an order-1 folio");
	dump_page(&fake[1], "folio_owner_regressions: its second page");
}

static struct kunit_case folio_owner_regressions_cases[] = {
	KUNIT_CASE(hugetlb_folio_never_takes_the_tracking_path),
	KUNIT_CASE_PARAM(split_gives_new_folios_consistent_order_and_tracking,
			 fo_split_gen_params),
	KUNIT_CASE(dump_of_order_1_folio_stays_within_its_two_pages),
	{}
};

static struct kunit_suite folio_owner_regressions_suite = {
	.name = "folio_owner_regressions",
	.test_cases = folio_owner_regressions_cases,
};

kunit_test_suites(&folio_owner_suite, &folio_owner_overflow_suite,
		  &folio_owner_regressions_suite);

MODULE_DESCRIPTION("KUnit tests for MM owner tracking of large folios");
MODULE_LICENSE("GPL");
