// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "folio_owner_concurrency": MM owner tracking under real
 * concurrency.  One large folio is mapped by a parent MM; three children
 * (forked MMs), each driven by a kthread bound to its own CPU, map and
 * unmap their own disjoint range of the same folio, in pieces, thousands
 * of times, all at once.  Each thread holds a spinlock of its own around
 * its rmap calls, as the page table lock of its MM would be: nothing but
 * the folio's bit spinlock orders the updates of the large mapcount, the
 * two slots and the shared bit.
 *
 * Two slots for four MMs: the children race for slot 1, and a child can
 * add mappings while untracked and remove them once tracked (its slot count
 * then goes below "no mappings" and the slot is freed).  At the end, with
 * every child's range mapped, and again after the children unmapped:
 * the mapcounts are exact, slot 0 still tracks the parent exactly, slot 1
 * is free or tracks a child without over-counting it, and the folio is
 * exclusive again once only the parent maps it.  A lost update shows as a
 * wrong count or a slot left behind.
 *
 * Needs at least two CPUs (the matrix runs QEMU with -smp 4).
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/rmap.h>

#include "folio_fixture.h"

#define STRESS_CHILDREN		3
#define STRESS_ITERATIONS	5000

struct stress_worker {
	struct ffx_mm *m;
	struct folio *folio;
	long first, nr;
	/* Stands in for the page table lock of this MM. */
	spinlock_t ptl;
	atomic_t *ready;
	struct completion done;
};

static void stress_map(struct stress_worker *w, long first, long nr)
{
	if (!nr)
		return;
	folio_ref_add(w->folio, nr);
	spin_lock(&w->ptl);
	folio_add_anon_rmap_ptes(w->folio, folio_page(w->folio, first), nr,
				 w->m->vma, FFX_VMA_START + first * PAGE_SIZE,
				 RMAP_NONE);
	spin_unlock(&w->ptl);
}

static void stress_unmap(struct stress_worker *w, long first, long nr)
{
	if (!nr)
		return;
	spin_lock(&w->ptl);
	folio_remove_rmap_ptes(w->folio, folio_page(w->folio, first), nr,
			       w->m->vma);
	spin_unlock(&w->ptl);
	folio_ref_sub(w->folio, nr);
}

/*
 * Each round maps the range in two pieces and unmaps it in two other
 * pieces, so that slot 1 can change hands between two calls of one MM.
 * The last round leaves the whole range mapped.
 */
static int stress_thread(void *data)
{
	struct stress_worker *w = data;
	long h = w->nr / 2;
	int i;

	/* Start together. */
	atomic_inc(w->ready);
	while (atomic_read(w->ready) < STRESS_CHILDREN)
		cond_resched();

	for (i = 0; i < STRESS_ITERATIONS; i++) {
		stress_map(w, w->first, h);
		stress_map(w, w->first + h, w->nr - h);
		stress_unmap(w, w->first, h);
		stress_map(w, w->first, h);
		if (i == STRESS_ITERATIONS - 1)
			break;
		stress_unmap(w, w->first + h, w->nr - h);
		stress_unmap(w, w->first, h);
		if (!(i % 64))
			cond_resched();
	}
	complete(&w->done);
	return 0;
}

/* Checks that hold whatever order the threads' updates came in. */
static void stress_check(struct kunit *test, struct ffx_folio *f,
			 struct ffx_mm *parent, struct stress_worker *w,
			 int nr_mapping_children)
{
	struct folio *folio = f->folio;
	long parent_count = ffx_model_mapcount(f, parent);
	long total = parent_count;
	int i, child = -1;

	for (i = 0; i < nr_mapping_children; i++)
		total += w[i].nr;
	KUNIT_EXPECT_EQ(test, folio_mapcount(folio), total);
	KUNIT_EXPECT_EQ(test, folio_mm_id(folio, 0), parent->id);
	KUNIT_EXPECT_EQ(test, folio->_mm_id_mapcount[0] + 1, parent_count);

	for (i = 0; i < STRESS_CHILDREN; i++)
		if (folio_mm_id(folio, 1) == w[i].m->id)
			child = i;
	if (child < 0) {
		KUNIT_EXPECT_EQ_MSG(test, folio_mm_id(folio, 1), MM_ID_DUMMY,
				    "slot 1 holds an ID no child has");
		KUNIT_EXPECT_EQ(test, folio->_mm_id_mapcount[1], -1);
	} else {
		KUNIT_EXPECT_LT_MSG(test, child, nr_mapping_children,
				    "slot 1 tracks a child that unmapped");
		KUNIT_EXPECT_GE(test, folio->_mm_id_mapcount[1] + 1, 1);
		KUNIT_EXPECT_LE(test, folio->_mm_id_mapcount[1] + 1, w[child].nr);
	}
	KUNIT_EXPECT_EQ(test, folio_maybe_mapped_shared(folio),
			nr_mapping_children > 0);
	KUNIT_EXPECT_EQ(test, folio_test_large_maybe_mapped_shared(folio),
			nr_mapping_children > 0);

	for (i = 0; i < f->nr; i++) {
		int c, want = FFX_VARIANT(!ffx_model_maps_pmd(f, parent), 0);

		for (c = 0; c < nr_mapping_children; c++)
			if (i >= w[c].first && i < w[c].first + w[c].nr)
				want += FFX_VARIANT(1, 0);
		KUNIT_EXPECT_EQ_MSG(test, ffx_page_mapcount(f, i), want,
				    "page %d", i);
	}
}

static void concurrent_maps_of_disjoint_ranges_keep_counts_and_slots_exact(struct kunit *test)
{
	const struct ffx_shape *shape = test->param_value;
	struct stress_worker *w;
	struct task_struct *task[STRESS_CHILDREN];
	struct ffx_mm *parent;
	struct ffx_folio *f;
	atomic_t ready = ATOMIC_INIT(0);
	int cpus = num_online_cpus();
	long per;
	int i;

	if (cpus < 2)
		kunit_skip(test, "needs two CPUs or more, has %d", cpus);

	w = kunit_kcalloc(test, STRESS_CHILDREN, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w);
	parent = ffx_mm_create(ffx_init(test), "parent");
	f = ffx_folio_alloc(parent, shape->order);
	ffx_map_new(f, parent, shape->level);
	per = f->nr / STRESS_CHILDREN;
	KUNIT_ASSERT_GE(test, per, 1);

	for (i = 0; i < STRESS_CHILDREN; i++) {
		/*
		 * A real fork: the dup makes the parent's pages shared (no
		 * longer PageAnonExclusive), so that the child may map them.
		 * The child then starts with nothing mapped.
		 */
		w[i].m = ffx_fork(f, parent, i == 0 ? "child0" : i == 1 ?
				  "child1" : "child2");
		ffx_unmap_all(f, w[i].m);
		w[i].folio = f->folio;
		w[i].first = i * per;
		w[i].nr = per;
		w[i].ready = &ready;
		spin_lock_init(&w[i].ptl);
		init_completion(&w[i].done);
	}
	for (i = 0; i < STRESS_CHILDREN; i++) {
		task[i] = kthread_create(stress_thread, &w[i], "ffx_stress/%d", i);
		if (IS_ERR(task[i])) {
			while (i--)
				kthread_stop(task[i]);	/* never woken: no run */
			kunit_skip(test, "could not create the kthreads");
		}
		kthread_bind(task[i], (i + 1) % cpus);
	}
	for (i = 0; i < STRESS_CHILDREN; i++)
		wake_up_process(task[i]);
	for (i = 0; i < STRESS_CHILDREN; i++)
		wait_for_completion(&w[i].done);

	/* Every child's range is mapped; the fixture does not know: EXPECT. */
	stress_check(test, f, parent, w, STRESS_CHILDREN);
	for (i = STRESS_CHILDREN - 1; i >= 0; i--) {
		stress_unmap(&w[i], w[i].first, w[i].nr);
		stress_check(test, f, parent, w, i);
	}
	KUNIT_EXPECT_FALSE(test, folio_maybe_mapped_shared(f->folio));
}

static struct kunit_case folio_owner_concurrency_cases[] = {
	KUNIT_CASE_PARAM(concurrent_maps_of_disjoint_ranges_keep_counts_and_slots_exact,
			 ffx_shape_gen_params),
	{}
};

static struct kunit_suite folio_owner_concurrency_suite = {
	.name = "folio_owner_concurrency",
	.test_cases = folio_owner_concurrency_cases,
};

kunit_test_suite(folio_owner_concurrency_suite);
