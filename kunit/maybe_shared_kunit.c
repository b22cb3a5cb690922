// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "maybe_shared": what folio_maybe_mapped_shared() answers.
 *
 * This file is included at the end of mm/khugepaged.c, like the DAMON tests
 * are included in the files they test, so that it can run khugepaged's PMD
 * scan, hpage_collapse_scan_pmd(), whose max_ptes_shared limit counts the
 * PTEs that map a maybe shared folio.
 *
 * The promise, for large folios:
 *  - no false negatives: "false" means at most one MM maps the folio;
 *  - exact while no more than two MMs have mapped the folio at the same
 *    time (both are then tracked);
 *  - a false positive only after more than two MMs mapped it at once, when
 *    the MM left mapping it is untracked: "the three-MM case".
 * The enumeration case checks the promise after every step of every
 * sequence of fork, partial unmap, re-map and exit it can build from one
 * MM up to four, on the real rmap code; the other cases spell out single
 * scenarios, the three-MM case by name.  Small folios: mapcount > 1.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/rmap.h>
#include <linux/swap.h>

#include "folio_fixture.h"

/* The folio under test for the scenario cases, in a parent MM. */
struct maybe_shared_ctx {
	struct ffx_mm *parent;
	struct ffx_folio *f;
	struct folio *folio;
	long nr;
};

static int maybe_shared_init_order(struct kunit *test, int order)
{
	struct maybe_shared_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	ctx->f = ffx_start(test, order, &ctx->parent);
	ctx->folio = ctx->f->folio;
	ctx->nr = ctx->f->nr;
	return 0;
}

/* An order-4 anonymous folio, PTE-mapped by the parent. */
static int maybe_shared_init(struct kunit *test)
{
	return maybe_shared_init_order(test, 4);
}

static bool maybe_shared(struct kunit *test)
{
	struct maybe_shared_ctx *ctx = test->priv;

	return folio_maybe_mapped_shared(ctx->folio);
}

static void one_mm_is_exclusive_even_partially_mapped(struct kunit *test)
{
	struct maybe_shared_ctx *ctx = test->priv;

	KUNIT_EXPECT_FALSE(test, maybe_shared(test));
	ffx_unmap_ptes(ctx->f, ctx->parent, 1, ctx->nr / 2);
	KUNIT_EXPECT_FALSE(test, maybe_shared(test));
	/* The bit, not only the mapcount shortcut, says "exclusive". */
	KUNIT_EXPECT_FALSE(test, folio_test_large_maybe_mapped_shared(ctx->folio));
}

static void fork_shares_and_child_exit_makes_exclusive_again(struct kunit *test)
{
	struct maybe_shared_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	KUNIT_EXPECT_TRUE(test, maybe_shared(test));
	ffx_mm_exit(child);
	KUNIT_EXPECT_FALSE(test, maybe_shared(test));
}

/*
 * One page in the child, every other page only in the parent: the folio is
 * shared, whichever page one looks at.  6.12's estimate looked at the
 * first page, mapped once here, and said "exclusive".
 */
static void one_page_left_in_child_keeps_folio_shared(struct kunit *test)
{
	struct maybe_shared_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");

	ffx_unmap_ptes(ctx->f, child, 0, ctx->nr - 1);
	ffx_unmap_ptes(ctx->f, ctx->parent, ctx->nr - 1, 1);
	KUNIT_EXPECT_EQ(test, folio_mapcount(ctx->folio), ctx->nr);
	KUNIT_EXPECT_TRUE(test, maybe_shared(test));
	ffx_unmap_all(ctx->f, child);
	KUNIT_EXPECT_FALSE(test, maybe_shared(test));
}

/*
 * The three-MM case, the one false positive: parent and child hold the
 * two slots, a second child is untracked.  When the tracked MMs are gone,
 * only the untracked MM maps the folio, but it reads "maybe mapped shared"
 * while it has more than one mapping; the bit itself stays set until the
 * folio is unmapped completely.
 */
static void three_mm_case_untracked_survivor_is_a_false_positive(struct kunit *test)
{
	struct maybe_shared_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");
	struct ffx_mm *third = ffx_fork(ctx->f, ctx->parent, "third");

	ffx_mm_exit(child);
	ffx_mm_exit(ctx->parent);
	KUNIT_EXPECT_EQ(test, ffx_model_total_mapcount(ctx->f),
			ffx_model_mapcount(ctx->f, third));
	KUNIT_EXPECT_TRUE_MSG(test, maybe_shared(test),
			      "false positive: only the untracked MM maps the folio");
	/* Down to one mapping: "exclusive", although the bit is still set. */
	ffx_unmap_ptes(ctx->f, third, 0, ctx->nr - 1);
	KUNIT_EXPECT_TRUE(test, folio_test_large_maybe_mapped_shared(ctx->folio));
	KUNIT_EXPECT_FALSE(test, maybe_shared(test));
	ffx_unmap_all(ctx->f, third);
	KUNIT_EXPECT_FALSE(test, folio_test_large_maybe_mapped_shared(ctx->folio));
}

/* With the untracked MM gone first, the tracked survivors stay exact. */
static void three_mm_case_tracked_survivor_is_exact(struct kunit *test)
{
	struct maybe_shared_ctx *ctx = test->priv;
	struct ffx_mm *child = ffx_fork(ctx->f, ctx->parent, "child");
	struct ffx_mm *third = ffx_fork(ctx->f, ctx->parent, "third");

	ffx_mm_exit(third);
	KUNIT_EXPECT_TRUE(test, maybe_shared(test));
	ffx_mm_exit(child);
	KUNIT_EXPECT_FALSE(test, maybe_shared(test));
}

/* Small folios: exact from the mapcount, as before. */
static void small_folio_is_shared_when_mapped_twice(struct kunit *test)
{
	struct maybe_shared_ctx *ctx = test->priv;
	struct ffx_mm *child;

	KUNIT_EXPECT_FALSE(test, maybe_shared(test));
	child = ffx_fork(ctx->f, ctx->parent, "child");
	KUNIT_EXPECT_TRUE(test, maybe_shared(test));
	ffx_mm_exit(child);
	KUNIT_EXPECT_FALSE(test, maybe_shared(test));
}

static int maybe_shared_small_init(struct kunit *test)
{
	return maybe_shared_init_order(test, 0);
}

/*
 * Enumeration: every sequence of up to MS_STEPS operations from one MM
 * that maps an order-2 folio, each operation one of: fork an MM (up to
 * MS_MMS MMs; the child copies the parent's mappings), unmap the lowest
 * page an MM maps, unmap the pages an MM maps in one half of the folio, map
 * pages of one half again (a swap-in, see ms_mappable()), exit an MM.  So
 * an MM can map any number of pages.  Each sequence is replayed on fresh
 * MMs and a fresh folio.
 */
#define MS_MMS		4
#define MS_STEPS	5
#define MS_ORDER	2
#define MS_PAGES	BIT(MS_ORDER)
#define MS_ALL_PAGES	(BIT(MS_PAGES) - 1)	/* bitmask */

enum ms_op_kind { MS_FORK, MS_UNMAP_ONE, MS_UNMAP, MS_MAP, MS_EXIT };

struct ms_op {
	u8 kind;
	u8 mm;
	u8 half;
};

/* The model: which pages each MM maps; -1: exited. */
struct ms_model {
	int mapped[MS_MMS];	/* bitmask of pages */
	int nr_mms;		/* MMs created so far */
};

struct ms_stats {
	unsigned long sequences;
	unsigned long steps;
	unsigned long false_positives;
	bool failed;
};

static const char * const ms_op_names[] = {
	"fork", "unmap-lowest", "unmap", "map", "exit"
};

static int ms_half_mask(int half)
{
	return ((1 << (MS_PAGES / 2)) - 1) << (half * MS_PAGES / 2);
}

/*
 * The pages of @half that @m may map again: pages it does not map and that
 * another MM maps, as when a page swapped out of @m while still in the swap
 * cache is swapped in.  A page another MM maps was shared by a fork, so it
 * is not PageAnonExclusive, and mapping it again is legal; a page zapped
 * everywhere cannot come back.
 */
static int ms_mappable(const struct ms_model *md, int m, int half)
{
	int i, others = 0;

	for (i = 0; i < md->nr_mms; i++)
		if (i != m && md->mapped[i] > 0)
			others |= md->mapped[i];
	return ms_half_mask(half) & ~md->mapped[m] & others;
}

static int ms_ops(const struct ms_model *md, struct ms_op *ops)
{
	int m, h, n = 0;

	for (m = 0; m < md->nr_mms; m++) {
		if (md->mapped[m] < 0)
			continue;
		if (md->nr_mms < MS_MMS)
			ops[n++] = (struct ms_op){ MS_FORK, m, 0 };
		if (md->mapped[m])
			ops[n++] = (struct ms_op){ MS_UNMAP_ONE, m, 0 };
		for (h = 0; h < 2; h++) {
			if (md->mapped[m] & ms_half_mask(h))
				ops[n++] = (struct ms_op){ MS_UNMAP, m, h };
			if (ms_mappable(md, m, h))
				ops[n++] = (struct ms_op){ MS_MAP, m, h };
		}
		ops[n++] = (struct ms_op){ MS_EXIT, m, 0 };
	}
	return n;
}

static void ms_apply_model(struct ms_model *md, const struct ms_op *op)
{
	switch (op->kind) {
	case MS_FORK:
		md->mapped[md->nr_mms++] = md->mapped[op->mm];
		break;
	case MS_UNMAP_ONE:
		md->mapped[op->mm] &= md->mapped[op->mm] - 1;
		break;
	case MS_UNMAP:
		md->mapped[op->mm] &= ~ms_half_mask(op->half);
		break;
	case MS_MAP:
		md->mapped[op->mm] |= ms_mappable(md, op->mm, op->half);
		break;
	case MS_EXIT:
		md->mapped[op->mm] = -1;
		break;
	}
}

static void ms_format(char *buf, size_t size, const struct ms_op *seq, int len)
{
	int i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < len && n < size; i++)
		n += scnprintf(buf + n, size - n, "%s%s(mm%d%s)", i ? " " : "",
			       ms_op_names[seq[i].kind], seq[i].mm,
			       seq[i].kind == MS_UNMAP || seq[i].kind == MS_MAP ?
			       (seq[i].half ? ",2nd half" : ",1st half") : "");
}

/* Whether @m, which maps @count pages, holds a slot with that count. */
static bool ms_tracked(struct folio *folio, struct ffx_mm *m, int count)
{
	int i;

	for (i = 0; i < 2; i++)
		if (folio_mm_id(folio, i) == m->id &&
		    folio->_mm_id_mapcount[i] + 1 == count)
			return true;
	return false;
}

/* Replay @seq on real objects and check the promise after every step. */
static void ms_replay(struct kunit *test, const struct ms_op *seq, int len,
		      struct ms_stats *st)
{
	static const char * const names[MS_MMS] = { "mm0", "mm1", "mm2", "mm3" };
	struct ffx_mm *mms[MS_MMS] = {};
	struct ms_model md = { .mapped = { MS_ALL_PAGES }, .nr_mms = 1 };
	int max_mappers = 1, step, m, h, i;
	struct ffx_folio *f;
	struct ffx *fx;
	char buf[160];

	fx = ffx_init(test);
	mms[0] = ffx_mm_create(fx, names[0]);
	f = ffx_folio_alloc(mms[0], MS_ORDER);
	ffx_map_new(f, mms[0], FFX_PTE);

	for (step = 0; step < len && !st->failed; step++) {
		const struct ms_op *op = &seq[step];
		int mappers = 0, last = -1;
		bool ans, truth;

		m = op->mm;
		h = op->half;
		switch (op->kind) {
		case MS_FORK:
			if (md.mapped[m])
				mms[md.nr_mms] = ffx_fork(f, mms[m], names[md.nr_mms]);
			else
				mms[md.nr_mms] = ffx_mm_fork(mms[m], names[md.nr_mms]);
			break;
		case MS_UNMAP_ONE:
			ffx_unmap_ptes(f, mms[m], __ffs(md.mapped[m]), 1);
			break;
		case MS_UNMAP:
			for (i = 0; i < MS_PAGES; i++)
				if (ms_half_mask(h) & md.mapped[m] & BIT(i))
					ffx_unmap_ptes(f, mms[m], i, 1);
			break;
		case MS_MAP:
			for (i = 0; i < MS_PAGES; i++)
				if (ms_mappable(&md, m, h) & BIT(i))
					ffx_map_ptes(f, mms[m], i, 1);
			break;
		case MS_EXIT:
			ffx_mm_exit(mms[m]);
			break;
		}
		ms_apply_model(&md, op);
		st->steps++;

		for (i = 0; i < md.nr_mms; i++) {
			if (md.mapped[i] > 0) {
				mappers++;
				last = i;
			}
		}
		max_mappers = max(max_mappers, mappers);
		ans = folio_maybe_mapped_shared(f->folio);
		truth = mappers >= 2;
		if (ans == truth &&
		    folio_mapcount(f->folio) == ffx_model_total_mapcount(f))
			continue;

		ms_format(buf, sizeof(buf), seq, step + 1);
		if (folio_mapcount(f->folio) != ffx_model_total_mapcount(f)) {
			KUNIT_FAIL(test, "mapcount %d, expected %ld after: %s",
				   folio_mapcount(f->folio),
				   ffx_model_total_mapcount(f), buf);
			st->failed = true;
		} else if (!ans) {
			KUNIT_FAIL(test, "false negative: %d MMs map the folio after: %s",
				   mappers, buf);
			st->failed = true;
		} else if (max_mappers <= 2) {
			KUNIT_FAIL(test, "false positive with at most two MMs after: %s",
				   buf);
			st->failed = true;
		} else if (mappers == 1 &&
			   ms_tracked(f->folio, mms[last], hweight32(md.mapped[last]))) {
			KUNIT_FAIL(test, "false positive for a tracked MM after: %s",
				   buf);
			st->failed = true;
		} else {
			/* The three-MM case: allowed, and counted. */
			st->false_positives++;
		}
	}
	ffx_exit(fx);
	st->sequences++;
}

static void ms_enumerate(struct kunit *test, struct ms_model *md,
			 struct ms_op *seq, int len, struct ms_stats *st)
{
	struct ms_op ops[MS_MMS * 7];
	int i, n;

	n = len < MS_STEPS ? ms_ops(md, ops) : 0;
	if (!n) {
		ms_replay(test, seq, len, st);
		return;
	}
	for (i = 0; i < n && !st->failed; i++) {
		struct ms_model next = *md;

		seq[len] = ops[i];
		ms_apply_model(&next, &ops[i]);
		ms_enumerate(test, &next, seq, len + 1, st);
	}
}

static void no_false_negative_in_any_sequence_of_up_to_four_mms(struct kunit *test)
{
	struct ms_model md = { .mapped = { MS_ALL_PAGES }, .nr_mms = 1 };
	struct ms_op seq[MS_STEPS];
	struct ms_stats st = {};

	ms_enumerate(test, &md, seq, 0, &st);
	kunit_info(test, "%lu sequences, %lu steps, %lu three-MM false positives\n",
		   st.sequences, st.steps, st.false_positives);
	/* The enumeration reaches the three-MM case, or it proves little. */
	if (!st.failed)
		KUNIT_EXPECT_GT(test, st.false_positives, 0);
}

/*
 * khugepaged: every PTE that maps a page of a maybe shared folio counts
 * towards max_ptes_shared, also the PTEs of pages only this MM maps.  The
 * parent gets real page tables for its mappings, read-only as after
 * fork(), so that the scan, which collapses nothing because of that, walks
 * all of them and reports on the limit.
 */
struct ms_khugepaged {
	struct ffx_folio *f;
	struct ffx_mm *m;
	unsigned int saved_max_ptes_shared;
	unsigned int saved_max_ptes_none;
	struct collapse_control *cc;
};

static void ms_khugepaged_cleanup(void *data)
{
	struct ms_khugepaged *kh = data;
	unsigned long addr = kh->f->addr;
	spinlock_t *ptl;	/* the PTE table's lock */
	pte_t *pte;
	long i;

	khugepaged_max_ptes_shared = kh->saved_max_ptes_shared;
	khugepaged_max_ptes_none = kh->saved_max_ptes_none;
	for (i = 0; i < kh->f->nr; i++, addr += PAGE_SIZE) {
		pte = get_locked_pte(kh->m->mm, addr, &ptl);
		if (!pte)
			continue;
		ptep_get_and_clear(kh->m->mm, addr, pte);
		pte_unmap_unlock(pte, ptl);
	}
	/* Off the LRU again: the fixture's folios are not reclaimable. */
	if (folio_isolate_lru(kh->f->folio))
		folio_put(kh->f->folio);
	kfree(kh->cc);
}

static int ms_khugepaged_scan(struct kunit *test, struct ms_khugepaged *kh,
			      unsigned int max_ptes_shared)
{
	struct mm_struct *mm = kh->m->mm;
	bool mmap_locked = true;
	int result;

	khugepaged_max_ptes_shared = max_ptes_shared;
	memset(kh->cc, 0, sizeof(*kh->cc));
	kh->cc->is_khugepaged = true;
	mmap_read_lock(mm);
	/* As for a folio only page tables reference: no fixture reference. */
	folio_put(kh->f->folio);
	result = hpage_collapse_scan_pmd(mm, kh->m->vma, kh->f->addr,
					 &mmap_locked, kh->cc);
	folio_get(kh->f->folio);
	if (mmap_locked)
		mmap_read_unlock(mm);
	return result;
}

/*
 * The child keeps only the last page, the parent all the others (it wrote
 * to the last one, which is now a copy elsewhere): no page is mapped twice.
 * 6.12 counted none of the parent's PTEs as shared (its estimate looked at
 * the first page); now all of them count while the child lives.
 */
static void khugepaged_counts_every_pte_of_a_shared_folio(struct kunit *test)
{
	struct maybe_shared_ctx *ctx = test->priv;
	long nr_ptes = ctx->nr - 1;
	struct ms_khugepaged *kh;
	struct ffx_mm *child;
	unsigned long addr;
	spinlock_t *ptl;	/* the PTE table's lock */
	pte_t *pte;
	long i;

	child = ffx_fork(ctx->f, ctx->parent, "child");
	ffx_unmap_ptes(ctx->f, child, 0, nr_ptes);
	ffx_unmap_ptes(ctx->f, ctx->parent, nr_ptes, 1);

	kh = kunit_kzalloc(test, sizeof(*kh), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, kh);
	kh->cc = kzalloc(sizeof(*kh->cc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, kh->cc);
	kh->f = ctx->f;
	kh->m = ctx->parent;
	kh->saved_max_ptes_shared = khugepaged_max_ptes_shared;
	kh->saved_max_ptes_none = khugepaged_max_ptes_none;
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, ms_khugepaged_cleanup, kh));
	/* Most of the PMD range has no PTE: the scan must not stop there. */
	khugepaged_max_ptes_none = HPAGE_PMD_NR - 1;

	/* The parent's page table: read-only PTEs, as fork() left them. */
	mmap_write_lock(ctx->parent->mm);
	for (i = 0, addr = ctx->f->addr; i < nr_ptes; i++, addr += PAGE_SIZE) {
		pte = get_locked_pte(ctx->parent->mm, addr, &ptl);
		if (!pte)
			break;
		set_pte_at(ctx->parent->mm, addr, pte,
			   pte_wrprotect(mk_pte(folio_page(ctx->folio, i),
						ctx->parent->vma->vm_page_prot)));
		pte_unmap_unlock(pte, ptl);
	}
	mmap_write_unlock(ctx->parent->mm);
	KUNIT_ASSERT_EQ_MSG(test, i, nr_ptes, "could not allocate a page table");
	/* khugepaged only looks at folios on the LRU. */
	folio_add_lru(ctx->folio);
	lru_add_drain();
	KUNIT_ASSERT_TRUE(test, folio_test_lru(ctx->folio));
	KUNIT_ASSERT_TRUE(test, folio_maybe_mapped_shared(ctx->folio));

	/* Every PTE counts, and only once: the limit is hit exactly. */
	KUNIT_EXPECT_EQ(test, ms_khugepaged_scan(test, kh, nr_ptes - 1),
			SCAN_EXCEED_SHARED_PTE);
	KUNIT_EXPECT_EQ(test, ms_khugepaged_scan(test, kh, nr_ptes),
			SCAN_PAGE_RO);

	/* The child has exited: no PTE counts as shared. */
	ffx_mm_exit(child);
	KUNIT_EXPECT_EQ(test, ms_khugepaged_scan(test, kh, 0), SCAN_PAGE_RO);
}

static struct kunit_case maybe_shared_cases[] = {
	KUNIT_CASE(one_mm_is_exclusive_even_partially_mapped),
	KUNIT_CASE(fork_shares_and_child_exit_makes_exclusive_again),
	KUNIT_CASE(one_page_left_in_child_keeps_folio_shared),
	KUNIT_CASE(three_mm_case_untracked_survivor_is_a_false_positive),
	KUNIT_CASE(three_mm_case_tracked_survivor_is_exact),
	KUNIT_CASE(no_false_negative_in_any_sequence_of_up_to_four_mms),
	KUNIT_CASE(khugepaged_counts_every_pte_of_a_shared_folio),
	{}
};

static struct kunit_suite maybe_shared_suite = {
	.name = "maybe_shared",
	.init = maybe_shared_init,
	.test_cases = maybe_shared_cases,
};

static struct kunit_case maybe_shared_small_cases[] = {
	KUNIT_CASE(small_folio_is_shared_when_mapped_twice),
	{}
};

static struct kunit_suite maybe_shared_small_suite = {
	.name = "maybe_shared_small",
	.init = maybe_shared_small_init,
	.test_cases = maybe_shared_small_cases,
};

kunit_test_suites(&maybe_shared_suite, &maybe_shared_small_suite);
