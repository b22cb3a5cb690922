// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "mm_id": the IDs that MM owner tracking of large folios gives
 * every MM (CONFIG_MM_ID).
 *
 * This file is included at the end of kernel/fork.c, like the DAMON tests
 * are included in the files they test: it sees mm_ida, dup_mm() (the fork
 * side of MM creation; mm_alloc() is the exec side) and mm_alloc_id().
 */
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <linux/vmstat.h>

static void mm_id_mmput(void *mm)
{
	mmput(mm);
}

/* An MM ("exec") that the test owns until it ends. */
static struct mm_struct *mm_id_new_mm(struct kunit *test)
{
	struct mm_struct *mm = mm_alloc();

	KUNIT_ASSERT_NOT_NULL(test, mm);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, mm_id_mmput, mm));
	return mm;
}

/* Whether @id is allocated in mm_ida: try to take exactly that ID. */
static bool mm_id_in_use(unsigned int id)
{
	int ret = ida_alloc_range(&mm_ida, id, id, GFP_KERNEL);

	if (ret < 0)
		return true;
	ida_free(&mm_ida, ret);
	return false;
}

static void ids_have_the_width_of_the_architecture(struct kunit *test)
{
	const int bits = IS_ENABLED(CONFIG_64BIT) ? 31 : 15;

	KUNIT_EXPECT_EQ(test, MM_ID_BITS, bits);
	KUNIT_EXPECT_EQ(test, MM_ID_DUMMY, 0);
	KUNIT_EXPECT_EQ(test, MM_ID_MIN, 1);
	KUNIT_EXPECT_EQ(test, (unsigned long)MM_ID_MAX, (1UL << bits) - 1);
	/* Per-MM mapcounts: int on 64-bit, short on 32-bit. */
	KUNIT_EXPECT_EQ(test, sizeof(mm_id_mapcount_t), IS_ENABLED(CONFIG_64BIT) ?
			sizeof(int) : sizeof(short));
	KUNIT_EXPECT_EQ(test, (long)MM_ID_MAPCOUNT_MAX,
			IS_ENABLED(CONFIG_64BIT) ? (long)INT_MAX : (long)SHRT_MAX);
	/* The lock and the shared bit are the top bits of the two IDs. */
	KUNIT_EXPECT_EQ(test, FOLIO_MM_IDS_LOCK_BITNUM, BITS_PER_LONG / 2 - 1);
	KUNIT_EXPECT_EQ(test, FOLIO_MM_IDS_SHARED_BITNUM, BITS_PER_LONG - 1);
	KUNIT_EXPECT_EQ(test, MM_ID_MAX & FOLIO_MM_IDS_LOCK_BIT, 0UL);
}

static void new_mm_gets_an_id_in_range(struct kunit *test)
{
	struct mm_struct *mm = mm_id_new_mm(test);

	KUNIT_EXPECT_GE(test, mm->mm_id, MM_ID_MIN);
	KUNIT_EXPECT_LE(test, mm->mm_id, MM_ID_MAX);
	KUNIT_EXPECT_TRUE(test, mm_id_in_use(mm->mm_id));
	/* init_mm never maps folios through the rmap: no ID. */
	KUNIT_EXPECT_EQ(test, init_mm.mm_id, MM_ID_DUMMY);
}

#define MM_ID_NR_LIVE	64

static void live_mms_have_distinct_ids(struct kunit *test)
{
	struct mm_struct *mms[MM_ID_NR_LIVE];
	int i, j;

	for (i = 0; i < MM_ID_NR_LIVE; i++)
		mms[i] = mm_id_new_mm(test);
	for (i = 0; i < MM_ID_NR_LIVE; i++)
		for (j = i + 1; j < MM_ID_NR_LIVE; j++)
			KUNIT_EXPECT_NE_MSG(test, mms[i]->mm_id, mms[j]->mm_id,
					    "MMs %d and %d", i, j);
}

static void dropped_mm_gives_its_id_back(struct kunit *test)
{
	struct mm_struct *mm = mm_alloc();
	struct mm_struct *again;
	mm_id_t id;

	KUNIT_ASSERT_NOT_NULL(test, mm);
	id = mm->mm_id;
	KUNIT_EXPECT_TRUE(test, mm_id_in_use(id));
	mmput(mm);
	KUNIT_EXPECT_FALSE_MSG(test, mm_id_in_use(id),
			       "ID %u still allocated after __mmdrop()", id);

	/*
	 * The IDA hands out the lowest free ID, and no process runs while the
	 * built-in suites do: the next MM gets the same ID.
	 */
	again = mm_id_new_mm(test);
	KUNIT_EXPECT_EQ(test, again->mm_id, id);
}

static void forked_mm_gets_its_own_id(struct kunit *test)
{
	struct mm_struct *parent = mm_id_new_mm(test);
	struct mm_struct *child;
	mm_id_t id;

	child = dup_mm(current, parent);
	KUNIT_ASSERT_NOT_NULL(test, child);
	id = child->mm_id;
	/* dup_mm() copies the parent's mm_struct, the ID must not be. */
	KUNIT_EXPECT_NE(test, id, parent->mm_id);
	KUNIT_EXPECT_GE(test, id, MM_ID_MIN);
	KUNIT_EXPECT_LE(test, id, MM_ID_MAX);
	mmput(child);
	KUNIT_EXPECT_FALSE(test, mm_id_in_use(id));
	KUNIT_EXPECT_TRUE(test, mm_id_in_use(parent->mm_id));
}

/*
 * Exhaustion.  On 32-bit the test takes every ID that is left, for real.
 * 2^31 IDs cannot be taken on 64-bit: there the test redirects
 * mm_alloc_id() to the same allocation from the same IDA, with a ceiling
 * just above the IDs in use, and takes what is left below the ceiling.
 */
struct mm_id_hog {
	unsigned int *ids;
	int nr;
};

static unsigned int mm_id_ceiling;

static int mm_alloc_id_below_ceiling(struct mm_struct *mm)
{
	int ret = ida_alloc_range(&mm_ida, MM_ID_MIN, mm_id_ceiling, GFP_KERNEL);

	if (ret < 0)
		return ret;
	mm->mm_id = ret;
	return 0;
}

static void mm_id_hog_release(void *data)
{
	struct mm_id_hog *hog = data;

	while (hog->nr > 0)
		ida_free(&mm_ida, hog->ids[--hog->nr]);
	kvfree(hog->ids);
}

static void exhausted_ids_fail_mm_creation_until_one_is_freed(struct kunit *test)
{
	struct mm_struct *parent = mm_id_new_mm(test);
	struct mm_id_hog *hog;
	struct mm_struct *mm;
	unsigned int freed;
	int ret, max, idx;

	if (IS_ENABLED(CONFIG_64BIT)) {
		/* At most 4096 IDs below the ceiling are free. */
		mm_id_ceiling = parent->mm_id + 4096;
		kunit_activate_static_stub(test, mm_alloc_id,
					   mm_alloc_id_below_ceiling);
	} else {
		mm_id_ceiling = MM_ID_MAX;
	}
	max = mm_id_ceiling;

	hog = kunit_kzalloc(test, sizeof(*hog), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, hog);
	hog->ids = kvcalloc(max, sizeof(*hog->ids), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, hog->ids);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, mm_id_hog_release, hog));

	while ((ret = ida_alloc_range(&mm_ida, MM_ID_MIN, max, GFP_KERNEL)) >= 0) {
		KUNIT_ASSERT_LT(test, hog->nr, max);
		hog->ids[hog->nr++] = ret;
	}
	KUNIT_ASSERT_EQ(test, ret, -ENOSPC);
	kunit_info(test, "took the %d IDs left up to %d", hog->nr, max);

	/* exec: no MM; fork: no MM either. Neither runs with MM_ID_DUMMY. */
	KUNIT_EXPECT_NULL(test, mm_alloc());
	KUNIT_EXPECT_NULL(test, dup_mm(current, parent));
	/* The failures took nothing: still no free ID. */
	KUNIT_EXPECT_EQ(test, ida_alloc_range(&mm_ida, MM_ID_MIN, max, GFP_KERNEL),
			-ENOSPC);

	/* One ID comes back: the next MM gets exactly that one. */
	KUNIT_ASSERT_GT(test, hog->nr, 0);
	idx = hog->nr / 2;
	freed = hog->ids[idx];
	hog->ids[idx] = hog->ids[hog->nr - 1];
	hog->nr--;
	ida_free(&mm_ida, freed);
	mm = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, mm);
	KUNIT_EXPECT_EQ(test, mm->mm_id, freed);
	mmput(mm);
	KUNIT_EXPECT_FALSE(test, mm_id_in_use(freed));
}

/*
 * Fault injection: the ID allocation fails as it does when the IDA cannot
 * allocate memory.  exec's mm_alloc() and fork's copy_mm() fail with
 * -ENOMEM, and a thousand such failures leave no ID taken and take no more
 * memory than as many MMs created and dropped: each one that leaked would
 * keep at least an mm_struct and its page table root.
 */
static int mm_alloc_id_enomem(struct mm_struct *mm)
{
	return -ENOMEM;
}

static long mm_id_free_pages(void)
{
	/* Freed pages wait on per-CPU lists before they count as free. */
	drain_all_pages(NULL);
	return global_zone_page_state(NR_FREE_PAGES);
}

static void failed_id_allocation_fails_fork_and_exec_and_leaks_nothing(struct kunit *test)
{
	struct mm_struct *parent = mm_id_new_mm(test);
	struct task_struct *tsk;
	struct mm_struct *mm;
	long free_before, free_after, baseline;
	const int rounds = 1000;
	int i, ret = 0;
	mm_id_t next;

	/* The IDA hands out the lowest free ID: the next MM's. */
	mm = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, mm);
	next = mm->mm_id;
	mmput(mm);

	/* copy_mm() only reads and writes the child's mm and counters. */
	tsk = kunit_kzalloc(test, sizeof(*tsk), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tsk);

	/*
	 * The baseline: as many MMs created and dropped.  Freed memory can
	 * stay away for a while (KASAN's quarantine holds freed objects), so
	 * what the failures take is compared with what successes take.
	 */
	free_before = mm_id_free_pages();
	for (i = 0; i < 2 * rounds; i++) {
		mm = mm_alloc();
		KUNIT_ASSERT_NOT_NULL(test, mm);
		mmput(mm);
	}
	baseline = free_before - mm_id_free_pages();

	kunit_activate_static_stub(test, mm_alloc_id, mm_alloc_id_enomem);
	free_before = mm_id_free_pages();
	kthread_use_mm(parent);
	for (i = 0; i < rounds && !ret; i++) {
		mm = mm_alloc();
		if (mm) {
			mmput(mm);
			break;
		}
		ret = copy_mm(0, tsk) != -ENOMEM;
		if (tsk->mm)
			mmput(tsk->mm);
	}
	kthread_unuse_mm(parent);
	free_after = mm_id_free_pages();
	kunit_deactivate_static_stub(test, mm_alloc_id);

	KUNIT_EXPECT_EQ_MSG(test, i, rounds, "exec got an MM without an ID");
	KUNIT_EXPECT_EQ_MSG(test, ret, 0, "fork did not fail with -ENOMEM");
	KUNIT_EXPECT_LT_MSG(test, free_before - free_after - baseline, 256L,
			    "%d failed execs and forks took %ld pages, as many successful execs %ld",
			    rounds, free_before - free_after, baseline);
	KUNIT_EXPECT_FALSE(test, mm_id_in_use(next));
	mm = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, mm);
	KUNIT_EXPECT_EQ(test, mm->mm_id, next);
	mmput(mm);
}

static struct kunit_case mm_id_cases[] = {
	KUNIT_CASE(ids_have_the_width_of_the_architecture),
	KUNIT_CASE(new_mm_gets_an_id_in_range),
	KUNIT_CASE(live_mms_have_distinct_ids),
	KUNIT_CASE(dropped_mm_gives_its_id_back),
	KUNIT_CASE(forked_mm_gets_its_own_id),
	KUNIT_CASE(exhausted_ids_fail_mm_creation_until_one_is_freed),
	KUNIT_CASE(failed_id_allocation_fails_fork_and_exec_and_leaks_nothing),
	{}
};

static struct kunit_suite mm_id_suite = {
	.name = "mm_id",
	.test_cases = mm_id_cases,
};

kunit_test_suite(mm_id_suite);
