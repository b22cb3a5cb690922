// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for what /proc/PID/{pagemap,smaps,numa_maps} report about
 * the pages of large folios, and for folio_average_page_mapcount(), which
 * they use when per-page mapcounts are not maintained.
 *
 * fs/proc/task_mmu.c includes this file at its end, so the cases call the
 * functions behind each value, pte_to_pagemap_entry(), smaps_account() and
 * gather_stats(), on real folios that the fixture maps into real MMs.
 * Where the two variants of the series differ, a case states both
 * expectations with FFX_VARIANT(with per-page mapcounts, without them).
 *
 * What must hold in both: a page another process maps is never reported
 * as exclusive (PM_MMAP_EXCLUSIVE) or private (the USS of smaps).
 */
#include <kunit/test.h>

#include "folio_fixture.h"

/* A parent that faulted in a folio of the case's shape. */
static struct ffx_folio *proc_start(struct kunit *test, struct ffx_mm **parent)
{
	const struct ffx_shape *s = test->param_value;
	struct ffx *fx = ffx_init(test);
	struct ffx_folio *f;

	*parent = ffx_mm_create(fx, "parent");
	f = ffx_folio_alloc(*parent, s->order);
	ffx_map_new(f, *parent, s->level);
	return f;
}

/* Whether an MM other than @m maps page @i (the fixture's record). */
static bool proc_other_mm_maps_page(struct ffx_folio *f, struct ffx_mm *m,
				    long i)
{
	return ffx_model_page_mapcount(f, i) > ffx_model_maps_page(f, m, i);
}

/* --- folio_average_page_mapcount() ----------------------------------- */

/* One step of a scenario: @mm unmaps page @page, then the average is @avg. */
struct proc_avg_step {
	int mm;		/* 0: parent, 1: child */
	long page;
	int avg;
};

/*
 * An order-2 folio (4 pages) mapped by parent and child (8 mappings),
 * unmapped page by page: the average is rounded to the nearest integer,
 * halves up, and is at least 1 while anything is mapped.
 */
static const struct proc_avg_step proc_avg_steps[] = {
	{ 1, 0, 2 },	/* 7/4 = 1.75 */
	{ 1, 1, 2 },	/* 6/4 = 1.5, halves up */
	{ 1, 2, 1 },	/* 5/4 = 1.25 */
	{ 1, 3, 1 },	/* 4/4 */
	{ 0, 0, 1 },	/* 3/4 = 0.75 */
	{ 0, 1, 1 },	/* 2/4 = 0.5, halves up */
	{ 0, 2, 1 },	/* 1/4 = 0.25: rounds to 0, but mapped means 1 */
	{ 0, 3, 0 },	/* unmapped */
};

static void average_rounds_to_nearest_and_is_one_while_mapped(struct kunit *test)
{
	struct ffx_mm *mm[2];
	struct ffx_folio *f = ffx_start(test, 2, &mm[0]);
	int k;

	KUNIT_EXPECT_EQ(test, folio_average_page_mapcount(f->folio), 1);
	mm[1] = ffx_fork(f, mm[0], "child");
	KUNIT_EXPECT_EQ(test, folio_average_page_mapcount(f->folio), 2);

	for (k = 0; k < ARRAY_SIZE(proc_avg_steps); k++) {
		const struct proc_avg_step *st = &proc_avg_steps[k];

		ffx_unmap_ptes(f, mm[st->mm], st->page, 1);
		KUNIT_EXPECT_EQ_MSG(test, folio_average_page_mapcount(f->folio),
				    st->avg, "after step %d (%ld mappings)", k,
				    ffx_model_total_mapcount(f));
	}
}

/* One mapping of one page of a large folio still averages to 1. */
static void average_of_one_mapped_page_is_one(struct kunit *test)
{
	struct ffx_mm *parent;
	struct ffx_folio *f = proc_start(test, &parent);

	ffx_pte_map(f, parent);
	ffx_unmap_ptes(f, parent, 1, f->nr - 1);
	KUNIT_EXPECT_EQ(test, folio_mapcount(f->folio), 1);
	KUNIT_EXPECT_EQ(test, folio_average_page_mapcount(f->folio), 1);
	ffx_unmap_ptes(f, parent, 0, 1);
	KUNIT_EXPECT_EQ(test, folio_average_page_mapcount(f->folio), 0);
}

/*
 * A PMD mapping counts once for every page; PTE mappings next to it are
 * averaged over the pages and added.
 */
static void average_counts_an_entire_mapping_for_every_page(struct kunit *test)
{
	struct ffx *fx = ffx_init(test);
	struct ffx_mm *parent = ffx_mm_create(fx, "parent"), *child;
	struct ffx_folio *f = ffx_folio_alloc(parent, FFX_ORDER_PMD);
	long half = f->nr / 2;

	ffx_map_new(f, parent, FFX_PMD);
	KUNIT_EXPECT_EQ(test, folio_average_page_mapcount(f->folio), 1);
	child = ffx_fork(f, parent, "child");
	KUNIT_EXPECT_EQ(test, folio_average_page_mapcount(f->folio), 2);

	/* The child's PMD is split: one PMD and nr PTEs. */
	ffx_pte_map(f, child);
	KUNIT_EXPECT_EQ(test, folio_entire_mapcount(f->folio), 1);
	KUNIT_EXPECT_EQ(test, folio_average_page_mapcount(f->folio), 2);
	/* 1 + half / nr = 1.5: halves up. */
	ffx_unmap_ptes(f, child, 0, half);
	KUNIT_EXPECT_EQ(test, folio_average_page_mapcount(f->folio), 2);
	/* 1 + (half - 1) / nr: just below 1.5. */
	ffx_unmap_ptes(f, child, half, 1);
	KUNIT_EXPECT_EQ(test, folio_average_page_mapcount(f->folio), 1);
	ffx_unmap_all(f, child);
	KUNIT_EXPECT_EQ(test, folio_average_page_mapcount(f->folio), 1);
}

/* Small folios: the average of one page is its mapcount. */
static void average_of_small_folio_is_its_mapcount(struct kunit *test)
{
	struct ffx_mm *parent;
	struct ffx_folio *f = ffx_start(test, 0, &parent);

	KUNIT_EXPECT_EQ(test, folio_average_page_mapcount(f->folio), 1);
	ffx_fork(f, parent, "child");
	KUNIT_EXPECT_EQ(test, folio_average_page_mapcount(f->folio), 2);
	ffx_unmap_all(f, parent);
	KUNIT_EXPECT_EQ(test, folio_average_page_mapcount(f->folio), 1);
}

static struct kunit_case proc_average_mapcount_cases[] = {
	KUNIT_CASE(average_rounds_to_nearest_and_is_one_while_mapped),
	KUNIT_CASE_PARAM(average_of_one_mapped_page_is_one,
			 ffx_shape_gen_params),
	KUNIT_CASE(average_counts_an_entire_mapping_for_every_page),
	KUNIT_CASE(average_of_small_folio_is_its_mapcount),
	{}
};

static struct kunit_suite proc_average_mapcount_suite = {
	.name = "proc_average_mapcount",
	.test_cases = proc_average_mapcount_cases,
};

/* --- pagemap: PM_MMAP_EXCLUSIVE ---------------------------------------- */

/*
 * The pagemap entry of page @i in @m, as pagemap_read() computes it: from
 * the PTE by pte_to_pagemap_entry(), or for a PMD mapping the way the loop
 * in pagemap_pmd_range() does.  Checks the PFN and that the page is present.
 */
static u64 proc_pagemap_entry(struct kunit *test, struct ffx_folio *f,
			      struct ffx_mm *m, long i)
{
	struct pagemapread pm = { .show_pfn = true };
	struct page *page = folio_page(f->folio, i);
	pagemap_entry_t pme;

	KUNIT_ASSERT_TRUE(test, ffx_model_maps_page(f, m, i));
	if (ffx_model_maps_pmd(f, m))
		return PM_PRESENT | page_to_pfn(page) |
		       (__folio_page_mapped_exclusively(f->folio, page) ?
			PM_MMAP_EXCLUSIVE : 0);

	pme = pte_to_pagemap_entry(&pm, m->vma, f->addr + i * PAGE_SIZE,
				   mk_pte(page, m->vma->vm_page_prot));
	KUNIT_EXPECT_EQ(test, pme.pme & PM_PFRAME_MASK, (u64)page_to_pfn(page));
	KUNIT_EXPECT_TRUE(test, pme.pme & PM_PRESENT);
	return pme.pme;
}

/*
 * How many of the pages @m maps in [first, first + nr) pagemap reports as
 * exclusive.  Also checks, for every page @m maps, that the bit is never
 * set while another MM maps the page: in both variants.
 */
static long proc_nr_exclusive(struct kunit *test, struct ffx_folio *f,
			      struct ffx_mm *m, long first, long nr)
{
	long i, excl = 0;

	for (i = 0; i < f->nr; i++) {
		bool bit;

		if (!ffx_model_maps_page(f, m, i))
			continue;
		bit = proc_pagemap_entry(test, f, m, i) & PM_MMAP_EXCLUSIVE;
		if (bit)
			KUNIT_EXPECT_FALSE_MSG(test, proc_other_mm_maps_page(f, m, i),
					       "%s: page %ld is shared but exclusive",
					       m->name, i);
		if (i >= first && i < first + nr)
			excl += bit;
	}
	return excl;
}

static void pagemap_reports_sole_mapper_as_exclusive(struct kunit *test)
{
	struct ffx_mm *parent;
	struct ffx_folio *f = proc_start(test, &parent);

	KUNIT_EXPECT_EQ(test, proc_nr_exclusive(test, f, parent, 0, f->nr), f->nr);
}

static void pagemap_reports_no_page_exclusive_after_fork(struct kunit *test)
{
	struct ffx_mm *parent;
	struct ffx_folio *f = proc_start(test, &parent);
	struct ffx_mm *child = ffx_fork(f, parent, "child");

	KUNIT_EXPECT_EQ(test, proc_nr_exclusive(test, f, parent, 0, f->nr), 0);
	KUNIT_EXPECT_EQ(test, proc_nr_exclusive(test, f, child, 0, f->nr), 0);
}

/*
 * The child replaced the first half by copies (COW).  The parent alone
 * maps that half now: exclusive with per-page mapcounts; without them the
 * folio is still mapped shared, and no page of it is reported exclusive.
 */
static void pagemap_after_child_cow_of_half(struct kunit *test)
{
	struct ffx_mm *parent;
	struct ffx_folio *f = proc_start(test, &parent);
	struct ffx_mm *child = ffx_fork(f, parent, "child");
	long half = f->nr / 2;

	ffx_pte_map(f, child);
	ffx_unmap_ptes(f, child, 0, half);

	KUNIT_EXPECT_EQ(test, proc_nr_exclusive(test, f, parent, 0, half),
			FFX_VARIANT(half, 0));
	KUNIT_EXPECT_EQ(test, proc_nr_exclusive(test, f, parent, half, f->nr - half), 0);
	KUNIT_EXPECT_EQ(test, proc_nr_exclusive(test, f, child, 0, f->nr), 0);
}

static void pagemap_reports_exclusive_again_after_child_exit(struct kunit *test)
{
	struct ffx_mm *parent;
	struct ffx_folio *f = proc_start(test, &parent);

	ffx_mm_exit(ffx_fork(f, parent, "child"));
	KUNIT_EXPECT_EQ(test, proc_nr_exclusive(test, f, parent, 0, f->nr), f->nr);
}

/*
 * The three-MM case: the parent forks two children, the second of which
 * is not tracked; the parent and the first child exit.  The second child
 * alone maps the folio, but with more than one mapping the folio stays
 * "maybe shared": without per-page mapcounts, pagemap does not report its
 * pages as exclusive (a false negative for the bit, never a false positive).
 */
static void pagemap_of_untracked_sole_survivor(struct kunit *test)
{
	struct ffx_mm *parent;
	struct ffx_folio *f = proc_start(test, &parent);
	struct ffx_mm *c1 = ffx_fork(f, parent, "child1");
	struct ffx_mm *c2 = ffx_fork(f, parent, "child2");

	bool fp;

	ffx_mm_exit(parent);
	ffx_mm_exit(c1);
	KUNIT_ASSERT_EQ(test, ffx_model_total_mapcount(f), ffx_model_mapcount(f, c2));
	/* A single mapping (one PMD) is never "maybe shared". */
	fp = ffx_model_mapcount(f, c2) > 1;
	KUNIT_EXPECT_EQ(test, folio_maybe_mapped_shared(f->folio), fp);
	KUNIT_EXPECT_EQ(test, proc_nr_exclusive(test, f, c2, 0, f->nr),
			FFX_VARIANT(f->nr, fp ? 0 : f->nr));
}

/* Small folios keep their per-page answer in both variants. */
static void pagemap_of_small_folio(struct kunit *test)
{
	struct ffx_mm *parent;
	struct ffx_folio *f = ffx_start(test, 0, &parent);
	struct ffx_mm *child;

	KUNIT_EXPECT_EQ(test, proc_nr_exclusive(test, f, parent, 0, 1), 1);
	child = ffx_fork(f, parent, "child");
	KUNIT_EXPECT_EQ(test, proc_nr_exclusive(test, f, parent, 0, 1), 0);
	ffx_mm_exit(child);
	KUNIT_EXPECT_EQ(test, proc_nr_exclusive(test, f, parent, 0, 1), 1);
}

/*
 * The zero pages: a read fault of an anonymous range maps the shared zero
 * page (PTE) or the huge zero folio (PMD, THP "always" and use_zero_page),
 * neither of which is rmapped.  Read through the real page walk of
 * /proc/PID/pagemap (pagemap_ops) on the MM's real page tables, no page of
 * them may be reported exclusive: every process that read-faults maps them.
 */
struct proc_zero_case {
	const char *name;
	bool huge;
};

static const struct proc_zero_case proc_zero_cases[] = {
	{ "huge zero folio (PMD)", true },
	{ "zero page (PTE)", false },
};

static void proc_zero_case_desc(const struct proc_zero_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(proc_zero, proc_zero_cases, proc_zero_case_desc);

/* Read-fault @addr in @m as a remote access would, under the mmap lock. */
static vm_fault_t proc_read_fault(struct ffx_mm *m, unsigned long addr)
{
	vm_fault_t ret;

	mmap_read_lock(m->mm);
	ret = handle_mm_fault(m->vma, addr, FAULT_FLAG_REMOTE, NULL);
	mmap_read_unlock(m->mm);
	return ret;
}

static void pagemap_never_reports_zero_page_exclusive(struct kunit *test)
{
	const struct proc_zero_case *c = test->param_value;
	struct ffx *fx = ffx_init(test);
	struct ffx_mm *m = ffx_mm_create(fx, "reader");
	unsigned long addr = FFX_VMA_START, nr = PMD_SIZE >> PAGE_SHIFT;
	struct pagemapread pm = { .show_pfn = true, .len = nr };
	unsigned long i, pfn, excl = 0;
	struct folio *folio;
	vm_fault_t ret;

	/* Without THP for this MM, the read fault maps the small zero page. */
	if (!c->huge)
		set_bit(MMF_DISABLE_THP, &m->mm->flags);
	ret = proc_read_fault(m, addr);
	KUNIT_ASSERT_FALSE_MSG(test, ret & VM_FAULT_ERROR,
			       "read fault failed: %#x", ret);

	pm.buffer = kunit_kcalloc(test, nr, PM_ENTRY_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pm.buffer);
	mmap_read_lock(m->mm);
	walk_page_range(m->mm, addr, addr + PMD_SIZE, &pagemap_ops, &pm);
	mmap_read_unlock(m->mm);
	KUNIT_ASSERT_GE(test, pm.pos, 1);
	KUNIT_ASSERT_TRUE(test, pm.buffer[0].pme & PM_PRESENT);

	pfn = pm.buffer[0].pme & PM_PFRAME_MASK;
	folio = pfn_folio(pfn);
	if (c->huge && !is_huge_zero_folio(folio))
		kunit_skip(test,
			   "no huge zero folio mapped (pfn %#lx): THP or use_zero_page off",
			   pfn);
	if (!c->huge)
		KUNIT_ASSERT_TRUE(test, is_zero_pfn(pfn));

	for (i = 0; i < pm.pos; i++)
		if (pm.buffer[i].pme & PM_MMAP_EXCLUSIVE)
			excl++;
	KUNIT_EXPECT_EQ_MSG(test, excl, 0,
			    "%lu of %d pagemap entries of the %s are exclusive",
			    excl, pm.pos, c->name);
	/* The huge zero folio is mapped whole: all entries were walked. */
	if (c->huge)
		KUNIT_EXPECT_EQ(test, pm.pos, (int)nr);
}

static struct kunit_case proc_pagemap_cases[] = {
	KUNIT_CASE_PARAM(pagemap_reports_sole_mapper_as_exclusive,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(pagemap_reports_no_page_exclusive_after_fork,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(pagemap_after_child_cow_of_half, ffx_shape_gen_params),
	KUNIT_CASE_PARAM(pagemap_reports_exclusive_again_after_child_exit,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(pagemap_of_untracked_sole_survivor,
			 ffx_shape_gen_params),
	KUNIT_CASE(pagemap_of_small_folio),
	KUNIT_CASE_PARAM(pagemap_never_reports_zero_page_exclusive,
			 proc_zero_gen_params),
	{}
};

static struct kunit_suite proc_pagemap_suite = {
	.name = "proc_pagemap",
	.test_cases = proc_pagemap_cases,
};

/* --- smaps: Pss and the Private/Shared split --------------------------- */

/* What smaps_pte_range() accounts for @m's mappings of the folio. */
static struct mem_size_stats proc_smaps(struct ffx_folio *f, struct ffx_mm *m)
{
	struct mem_size_stats mss = {};
	long i;

	if (ffx_model_maps_pmd(f, m))
		smaps_account(&mss, folio_page(f->folio, 0), true, false, false,
			      false, true);
	for (i = 0; i < f->nr; i++)
		if (ffx_model_maps_page(f, m, i) && !ffx_model_maps_pmd(f, m))
			smaps_account(&mss, folio_page(f->folio, i), false, false,
				      false, false, true);
	return mss;
}

/* Pss in 1/4 pages, as smaps_account() sums it (PSS_SHIFT fixed point). */
static u64 proc_pss_quarters(const struct mem_size_stats *mss)
{
	return div_u64(mss->pss * 4, PAGE_SIZE) >> PSS_SHIFT;
}

static unsigned long proc_private_pages(const struct mem_size_stats *mss)
{
	return (mss->private_clean + mss->private_dirty) / PAGE_SIZE;
}

static unsigned long proc_shared_pages(const struct mem_size_stats *mss)
{
	return (mss->shared_clean + mss->shared_dirty) / PAGE_SIZE;
}

/*
 * Checks what holds in both variants: Rss is what @m maps, the private
 * part (USS) is never more than the pages only @m maps.
 */
static struct mem_size_stats proc_smaps_checked(struct kunit *test,
						struct ffx_folio *f,
						struct ffx_mm *m)
{
	struct mem_size_stats mss = proc_smaps(f, m);
	long i, rss = 0, only_m = 0;

	for (i = 0; i < f->nr; i++) {
		if (!ffx_model_maps_page(f, m, i))
			continue;
		rss++;
		only_m += !proc_other_mm_maps_page(f, m, i);
	}
	KUNIT_EXPECT_EQ(test, mss.resident / PAGE_SIZE, rss);
	KUNIT_EXPECT_EQ(test, proc_private_pages(&mss) + proc_shared_pages(&mss), rss);
	KUNIT_EXPECT_LE_MSG(test, proc_private_pages(&mss), only_m,
			    "%s: USS over-estimated", m->name);
	return mss;
}

/*
 * One MM maps half of a folio (the other half was unmapped): every page it
 * maps is its own, in both variants (the average rounds up to 1).
 */
static void smaps_of_folio_partially_mapped_by_one_mm(struct kunit *test)
{
	struct ffx_mm *parent;
	struct ffx_folio *f = proc_start(test, &parent);
	long half = f->nr / 2;
	struct mem_size_stats mss;

	ffx_pte_map(f, parent);
	ffx_unmap_ptes(f, parent, half, f->nr - half);
	mss = proc_smaps_checked(test, f, parent);
	KUNIT_EXPECT_EQ(test, proc_pss_quarters(&mss), 4 * half);
	KUNIT_EXPECT_EQ(test, proc_private_pages(&mss), half);

	ffx_unmap_ptes(f, parent, 1, half - 1);
	mss = proc_smaps_checked(test, f, parent);
	KUNIT_EXPECT_EQ(test, proc_pss_quarters(&mss), 4);
	KUNIT_EXPECT_EQ(test, proc_private_pages(&mss), 1);
}

/*
 * Parent and child share the folio; then the child replaces the first half
 * by copies.  With per-page mapcounts the parent's Pss is half + half / 2
 * pages and the first half is private.  Without them every page of the
 * folio gets the average mapcount, round(1.5) = 2, and none is private:
 * the parent's USS is under-estimated, and the Pss of parent and child no
 * longer adds up to the folio.
 */
static void smaps_of_folio_shared_with_a_child(struct kunit *test)
{
	struct ffx_mm *parent;
	struct ffx_folio *f = proc_start(test, &parent);
	struct ffx_mm *child = ffx_fork(f, parent, "child");
	long nr = f->nr, half = nr / 2;
	struct mem_size_stats mss;

	mss = proc_smaps_checked(test, f, parent);
	KUNIT_EXPECT_EQ(test, proc_pss_quarters(&mss), 2 * nr);
	KUNIT_EXPECT_EQ(test, proc_private_pages(&mss), 0);

	ffx_pte_map(f, parent);
	ffx_pte_map(f, child);
	ffx_unmap_ptes(f, child, 0, half);

	mss = proc_smaps_checked(test, f, parent);
	KUNIT_EXPECT_EQ(test, proc_pss_quarters(&mss),
			FFX_VARIANT(4 * half + 2 * (nr - half), 2 * nr));
	KUNIT_EXPECT_EQ(test, proc_private_pages(&mss), FFX_VARIANT(half, 0));

	mss = proc_smaps_checked(test, f, child);
	KUNIT_EXPECT_EQ(test, proc_pss_quarters(&mss), 2 * (nr - half));
	KUNIT_EXPECT_EQ(test, proc_private_pages(&mss), 0);

	/*
	 * The child keeps only the last page: the average is 1 then, but the
	 * folio is still shared, so without per-page mapcounts no page of
	 * it is private to the parent, not even those only it maps.
	 */
	ffx_unmap_ptes(f, child, half, nr - half - 1);
	mss = proc_smaps_checked(test, f, parent);
	KUNIT_EXPECT_EQ(test, proc_pss_quarters(&mss),
			FFX_VARIANT(4 * (nr - 1) + 2, 4 * nr));
	KUNIT_EXPECT_EQ(test, proc_private_pages(&mss), FFX_VARIANT(nr - 1, 0));

	ffx_mm_exit(child);
	mss = proc_smaps_checked(test, f, parent);
	KUNIT_EXPECT_EQ(test, proc_pss_quarters(&mss), 4 * nr);
	KUNIT_EXPECT_EQ(test, proc_private_pages(&mss), nr);
}

/*
 * The untracked sole survivor of the three-MM case: its Pss is exact
 * (average 1), but without per-page mapcounts none of it is private unless
 * it maps the folio only once (a PMD).
 */
static void smaps_of_untracked_sole_survivor(struct kunit *test)
{
	struct ffx_mm *parent;
	struct ffx_folio *f = proc_start(test, &parent);
	struct ffx_mm *c1 = ffx_fork(f, parent, "child1");
	struct ffx_mm *c2 = ffx_fork(f, parent, "child2");
	struct mem_size_stats mss;

	bool fp;

	ffx_mm_exit(parent);
	ffx_mm_exit(c1);
	/* A single mapping (one PMD) is never "maybe shared". */
	fp = ffx_model_mapcount(f, c2) > 1;
	mss = proc_smaps_checked(test, f, c2);
	KUNIT_EXPECT_EQ(test, proc_pss_quarters(&mss), 4 * f->nr);
	KUNIT_EXPECT_EQ(test, proc_private_pages(&mss),
			FFX_VARIANT(f->nr, fp ? 0 : f->nr));
}

static struct kunit_case proc_smaps_cases[] = {
	KUNIT_CASE_PARAM(smaps_of_folio_partially_mapped_by_one_mm,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(smaps_of_folio_shared_with_a_child,
			 ffx_shape_gen_params),
	KUNIT_CASE_PARAM(smaps_of_untracked_sole_survivor,
			 ffx_shape_gen_params),
	{}
};

static struct kunit_suite proc_smaps_suite = {
	.name = "proc_smaps",
	.test_cases = proc_smaps_cases,
};

/* --- numa_maps: mapmax ------------------------------------------------- */

#ifdef CONFIG_NUMA
/* What gather_pte_stats()/gather_pmd_stats() gather for @m's mappings. */
static unsigned long proc_mapmax(struct ffx_folio *f, struct ffx_mm *m)
{
	struct numa_maps md = {};
	long i;

	if (ffx_model_maps_pmd(f, m))
		gather_stats(folio_page(f->folio, 0), &md, 0, f->nr);
	for (i = 0; i < f->nr; i++)
		if (ffx_model_maps_page(f, m, i) && !ffx_model_maps_pmd(f, m))
			gather_stats(folio_page(f->folio, i), &md, 0, 1);
	return md.mapcount_max;
}
#endif

/*
 * Parent and child share an order-2 folio, then the child replaces three
 * of its four pages by copies (5 mappings): page 0 is mapped twice, so
 * mapmax is 2 with per-page mapcounts, and the average, round(1.25) = 1,
 * without them.
 */
static void numa_maps_mapmax_of_folio_mostly_copied_by_child(struct kunit *test)
{
#ifdef CONFIG_NUMA
	struct ffx_mm *parent;
	struct ffx_folio *f = ffx_start(test, 2, &parent);
	struct ffx_mm *child = ffx_fork(f, parent, "child");

	KUNIT_EXPECT_EQ(test, proc_mapmax(f, parent), 2);
	ffx_unmap_ptes(f, child, 1, 3);
	KUNIT_EXPECT_EQ(test, proc_mapmax(f, parent), FFX_VARIANT(2, 1));
	KUNIT_EXPECT_EQ(test, proc_mapmax(f, child), FFX_VARIANT(2, 1));
	ffx_mm_exit(child);
	KUNIT_EXPECT_EQ(test, proc_mapmax(f, parent), 1);
#else
	kunit_skip(test, "numa_maps needs CONFIG_NUMA");
#endif
}

/* A folio every MM maps whole: the average is exact. */
static void numa_maps_mapmax_of_folio_shared_whole(struct kunit *test)
{
#ifdef CONFIG_NUMA
	struct ffx_mm *parent;
	struct ffx_folio *f = proc_start(test, &parent);

	ffx_fork(f, parent, "child1");
	ffx_fork(f, parent, "child2");
	KUNIT_EXPECT_EQ(test, proc_mapmax(f, parent), 3);
#else
	kunit_skip(test, "numa_maps needs CONFIG_NUMA");
#endif
}

static struct kunit_case proc_numa_maps_cases[] = {
	KUNIT_CASE(numa_maps_mapmax_of_folio_mostly_copied_by_child),
	KUNIT_CASE_PARAM(numa_maps_mapmax_of_folio_shared_whole,
			 ffx_shape_gen_params),
	{}
};

static struct kunit_suite proc_numa_maps_suite = {
	.name = "proc_numa_maps",
	.test_cases = proc_numa_maps_cases,
};

kunit_test_suites(&proc_average_mapcount_suite, &proc_pagemap_suite,
		  &proc_smaps_suite, &proc_numa_maps_suite);
