// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "folio_owner_trace": seeded random traces of fork, exit,
 * partial unmap, re-map and PMD split over up to two or up to four live
 * MMs, on one large folio of each shape, checked after every step against
 * two references:
 *
 *  - the fixture's record of what each MM maps (the exact per-MM
 *    mapcounts): the folio's mapcount equals their sum; a tracked slot names
 *    a live MM that maps the folio and never counts more than that MM maps;
 *    folio_maybe_mapped_shared() is never false while two MMs map the folio
 *    (no false negatives), and it is exact as long as no more than two MMs
 *    have mapped the folio at the same time;
 *  - the design's slot rules, written out here from DESIGN.md independently
 *    of the kernel code: which MM each slot holds, with which count, and the
 *    "maybe mapped shared" bit, after each rmap call the fixture makes.
 *
 * Per-page mapcounts and the entire mapcount are checked in both variants:
 * per page as the fixture's record says, or 0 with CONFIG_NO_PAGE_MAPCOUNT.
 * And at every step, each MM that maps the folio by PTEs asks the write
 * fault's reuse decision, wp_can_reuse_anon_folio(): it never reuses a
 * folio another MM maps, it reuses whenever only one MM maps it (more
 * than once) and no more than two MMs ever mapped it at once, and its
 * sanity checks never fire (the matrix fails on any kernel warning).
 * This file is included at the end of mm/memory.c for that call.
 *
 * Every failure message starts with the seed, the folio shape and the step.
 * To replay a trace, boot with folio_owner_trace.seed=SEED (only that
 * seed then runs, for every shape, with four and with two MMs), and
 * folio_owner_trace.verbose=1 to log each step:
 *   make kunit KUNIT_ARGS="--kernel_args=folio_owner_trace.seed=SEED"
 * A longer list of seeds, 1000 steps each, is marked slow: make kunit SLOW=1.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/moduleparam.h>
#include <linux/prandom.h>
#include <linux/rmap.h>

#include "folio_fixture.h"

/* Built into mm/memory.c: name the parameters after the suite. */
#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "folio_owner_trace."

static unsigned int seed;
module_param(seed, uint, 0444);
MODULE_PARM_DESC(seed, "run only this seed (0: the built-in seed tables)");
static bool verbose;
module_param(verbose, bool, 0444);
MODULE_PARM_DESC(verbose, "log every step of every trace");

#define OT_MAX_LIVE_MMS	4
#define OT_STEPS		200
#define OT_STEPS_SLOW	1000

/* The fixed seeds make test runs, then the longer list the slow case runs. */
static const u32 ot_seeds[] = {
	1, 2, 3, 4, 0x2a, 0xc0ffee, 0xdeadbeef, 0x6150ed,
};

#define OT_NR_SEEDS_SLOW	64

/* One parameter: a folio shape, a seed and how many MMs may live at once. */
struct ot_param {
	const struct ffx_shape *shape;
	u32 seed;
	int max_live;
};

static const struct ffx_shape *ot_shapes[8];
static int ot_nr_shapes;

static void ot_get_shapes(void)
{
	char desc[KUNIT_PARAM_DESC_SIZE];
	const struct ffx_shape *s;

	if (ot_nr_shapes)
		return;
	for (s = ffx_shape_gen_params(NULL, desc); s;
	     s = ffx_shape_gen_params(s, desc))
		if (ot_nr_shapes < ARRAY_SIZE(ot_shapes))
			ot_shapes[ot_nr_shapes++] = s;
}

static u32 ot_seed_at(int i, bool slow)
{
	if (seed)
		return seed;
	if (slow)	/* Seeds the fast case does not run. */
		return 0x5eed0000 + i;
	return ot_seeds[i];
}

static const void *ot_gen(const void *prev, char *desc, bool slow,
			  struct ot_param *params, int max_params)
{
	const struct ot_param *p = prev;
	int nr_seeds = seed ? 2 : slow ? OT_NR_SEEDS_SLOW :
		       ARRAY_SIZE(ot_seeds);
	int i, n;

	ot_get_shapes();
	n = min(nr_seeds * ot_nr_shapes, max_params);
	i = p ? p - params + 1 : 0;
	if (i >= n)
		return NULL;
	params[i].shape = ot_shapes[i % ot_nr_shapes];
	params[i].seed = ot_seed_at(i / ot_nr_shapes, slow);
	/*
	 * Every other seed keeps to two live MMs, where the answer must be
	 * exact at every step; the others go up to four.
	 */
	params[i].max_live = (i / ot_nr_shapes) % 2 ? 2 : OT_MAX_LIVE_MMS;
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s, seed %#x, %d MMs",
		 params[i].shape->desc, params[i].seed, params[i].max_live);
	return &params[i];
}

static struct ot_param ot_params[ARRAY_SIZE(ot_seeds) * 8];
static struct ot_param ot_params_slow[OT_NR_SEEDS_SLOW * 8];

static const void *ot_gen_params(const void *prev, char *desc)
{
	return ot_gen(prev, desc, false, ot_params,
			 ARRAY_SIZE(ot_params));
}

static const void *ot_gen_params_slow(const void *prev, char *desc)
{
	return ot_gen(prev, desc, true, ot_params_slow,
			 ARRAY_SIZE(ot_params_slow));
}

/*
 * The design's slot rules (DESIGN.md), per rmap call of @diff mappings by
 * the MM with ID @id.  Counts here are plain numbers of mappings: a free
 * slot has ID MM_ID_DUMMY and count 0.
 */
struct ot_slots {
	mm_id_t id[2];
	long count[2];
	long total;
	bool shared;
};

static int slots_find(const struct ot_slots *s, mm_id_t id)
{
	return s->id[0] == id ? 0 : s->id[1] == id ? 1 : -1;
}

/* The first mapping of a new folio: the MM owns slot 0, not shared. */
static void slots_new(struct ot_slots *s, mm_id_t id, long diff)
{
	s->id[0] = id;
	s->count[0] = diff;
	s->id[1] = MM_ID_DUMMY;
	s->count[1] = 0;
	s->total = diff;
	s->shared = false;
}

static void slots_add(struct ot_slots *s, mm_id_t id, long diff)
{
	int i = slots_find(s, id);

	s->total += diff;
	if (i >= 0) {
		/* A tracked MM adds: nothing changes about who maps it. */
		s->count[i] += diff;
	} else if (s->id[0] == MM_ID_DUMMY) {
		/* Slot 0 is free: take it; shared if anybody else maps it. */
		s->id[0] = id;
		s->count[0] = diff;
		if (s->total != diff)
			s->shared = true;
	} else if (s->id[1] == MM_ID_DUMMY) {
		/* Slot 1 is free: take it; slot 0's MM maps it too. */
		s->id[1] = id;
		s->count[1] = diff;
		s->shared = true;
	}
	/* No free slot: untracked, and the bit is already set. */
}

static void slots_sub(struct ot_slots *s, mm_id_t id, long diff)
{
	int i = slots_find(s, id);

	s->total -= diff;
	if (i >= 0) {
		if (s->count[i] - diff > 0) {
			s->count[i] -= diff;
			return;
		}
		/* Down to nothing, or below: mapped partly while untracked. */
		s->id[i] = MM_ID_DUMMY;
		s->count[i] = 0;
	}
	/* One tracked MM owns every mapping (or none is left): exclusive. */
	if (s->count[0] == s->total || s->count[1] == s->total)
		s->shared = false;
}

struct ot_trace {
	struct kunit *test;
	const struct ot_param *param;
	struct rnd_state rnd;
	int step;
	const char *op;
	struct ffx *fx;
	struct ffx_folio *f;
	struct folio *folio;
	long nr;
	/* Every MM the trace created, live or exited, and their names. */
	struct ffx_mm **mms;
	char (*names)[16];
	int nr_mms, max_mms;
	/* The most MMs that mapped the folio at the same time so far. */
	int max_mappers;
	/* What the trace went through, logged at its end. */
	int nr_forks, nr_exits, nr_untracked_steps, nr_reuses, nr_noops;
	struct ot_slots slots;
};

#define OT_ASSERT(t, cond, fmt, ...)					\
do {									\
	const struct ot_trace *__t = (t);				\
									\
	KUNIT_ASSERT_TRUE_MSG(__t->test, cond,				\
			      "seed %#x, %s, step %d (%s): " fmt,	\
			      __t->param->seed, __t->param->shape->desc,	\
			      __t->step, __t->op, ##__VA_ARGS__);	\
} while (0)

static u32 ot_rnd(struct ot_trace *t, u32 n)
{
	return prandom_u32_state(&t->rnd) % n;
}

static bool ot_live(struct ffx_mm *m)
{
	return m->mm;
}

static int ot_nr_live(struct ot_trace *t)
{
	int i, n = 0;

	for (i = 0; i < t->nr_mms; i++)
		n += ot_live(t->mms[i]);
	return n;
}

/* A random live MM for which @ok holds, or NULL. */
static struct ffx_mm *ot_pick(struct ot_trace *t,
			      bool (*ok)(struct ot_trace *t, struct ffx_mm *m))
{
	struct ffx_mm *cand[OT_MAX_LIVE_MMS];
	int i, n = 0;

	for (i = 0; i < t->nr_mms; i++)
		if (ot_live(t->mms[i]) && n < ARRAY_SIZE(cand) &&
		    (!ok || ok(t, t->mms[i])))
			cand[n++] = t->mms[i];
	return n ? cand[ot_rnd(t, n)] : NULL;
}

static bool ot_maps_some(struct ot_trace *t, struct ffx_mm *m)
{
	return ffx_model_mapcount(t->f, m) > 0;
}

static bool ot_maps_pmd(struct ot_trace *t, struct ffx_mm *m)
{
	return ffx_model_maps_pmd(t->f, m);
}

/*
 * Whether @m maps page @i (@mapped), or else may map it again: as after
 * swap-in, an anonymous page comes back into an MM only if no other MM
 * maps it while it is PageAnonExclusive (exclusive to one MM).
 */
static bool ot_page_state(struct ot_trace *t, struct ffx_mm *m, long i,
			  bool mapped)
{
	if (ffx_model_maps_page(t->f, m, i))
		return mapped;
	return !mapped && (!PageAnonExclusive(folio_page(t->folio, i)) ||
			   !ffx_model_page_mapcount(t->f, i));
}

/* The run of pages from @first on in that state. */
static long ot_run(struct ot_trace *t, struct ffx_mm *m, long first,
		   bool mapped)
{
	long i = first;

	while (i < t->nr && ot_page_state(t, m, i, mapped))
		i++;
	return i - first;
}

/* A random page in that state, or -1. */
static long ot_pick_page(struct ot_trace *t, struct ffx_mm *m, bool mapped)
{
	long i, start = ot_rnd(t, t->nr);

	for (i = 0; i < t->nr; i++) {
		long p = (start + i) % t->nr;

		if (ot_page_state(t, m, p, mapped))
			return p;
	}
	return -1;
}

static bool ot_can_map(struct ot_trace *t, struct ffx_mm *m)
{
	return !ffx_model_maps_pmd(t->f, m) && ot_pick_page(t, m, false) >= 0;
}

/* The rmap calls, each mirrored by the design's slot rules. */
static void ot_unmap_ptes(struct ot_trace *t, struct ffx_mm *m, long first,
			  long nr)
{
	ffx_unmap_ptes(t->f, m, first, nr);
	slots_sub(&t->slots, m->id, nr);
}

static void ot_unmap_all(struct ot_trace *t, struct ffx_mm *m)
{
	long i, n;

	if (ffx_model_maps_pmd(t->f, m)) {
		/* A PMD mapping is the MM's only mapping of the folio. */
		ffx_unmap_all(t->f, m);
		slots_sub(&t->slots, m->id, 1);
		return;
	}
	/* As zap walks the page table: one call per run of PTEs. */
	for (i = 0; i < t->nr; i += n) {
		n = ot_run(t, m, i, true);
		if (n)
			ot_unmap_ptes(t, m, i, n);
		else
			n = 1;
	}
}

static void ot_split_pmd(struct ot_trace *t, struct ffx_mm *m)
{
	ffx_remap_pmd(t->f, m);
	slots_add(&t->slots, m->id, t->nr);
	slots_sub(&t->slots, m->id, 1);
}

static struct ffx_mm *ot_new_mm(struct ot_trace *t, struct ffx_mm *parent)
{
	char *name = t->names[t->nr_mms];
	struct ffx_mm *m;

	snprintf(name, sizeof(t->names[0]), "mm%d", t->nr_mms);
	m = parent ? ffx_mm_fork(parent, name) : ffx_mm_create(t->fx, name);
	t->mms[t->nr_mms++] = m;
	return m;
}

static void ot_fork(struct ot_trace *t)
{
	struct ffx_mm *parent = ot_pick(t, ot_maps_some);
	struct ffx_mm *child;
	long i, n;

	t->op = "fork: too many MMs";
	if (!parent || ot_nr_live(t) >= t->param->max_live ||
	    t->nr_mms >= t->max_mms)
		return;
	t->op = "fork";
	t->nr_forks++;
	child = ot_new_mm(t, parent);
	OT_ASSERT(t, ffx_fork_folio(t->f, parent, child) == 0,
		  "duplicating %s's mappings failed", parent->name);
	/* copy_page_range(): the PMD, or one call per run of PTEs. */
	if (ffx_model_maps_pmd(t->f, parent)) {
		slots_add(&t->slots, child->id, 1);
		return;
	}
	for (i = 0; i < t->nr; i += n) {
		n = ot_run(t, parent, i, true);
		if (n)
			slots_add(&t->slots, child->id, n);
		else
			n = 1;
	}
}

static void ot_exit(struct ot_trace *t)
{
	struct ffx_mm *m = ot_pick(t, NULL);

	t->op = "exit: last MM";
	if (ot_nr_live(t) < 2)
		return;
	t->op = "exit";
	t->nr_exits++;
	ot_unmap_all(t, m);
	ffx_mm_exit(m);
}

static void ot_unmap(struct ot_trace *t)
{
	struct ffx_mm *m = ot_pick(t, ot_maps_some);
	long first, nr;

	t->op = "unmap: nothing mapped";
	if (!m)
		return;
	if (ffx_model_maps_pmd(t->f, m)) {
		if (ot_rnd(t, 2)) {
			t->op = "unmap PMD";
			ot_unmap_all(t, m);
			return;
		}
		/* A partial zap of a PMD mapping splits it first. */
		ot_split_pmd(t, m);
	}
	t->op = "partial unmap";
	if (!ot_rnd(t, 8)) {
		t->op = "unmap all";
		ot_unmap_all(t, m);
		return;
	}
	first = ot_pick_page(t, m, true);
	nr = 1 + ot_rnd(t, ot_run(t, m, first, true));
	ot_unmap_ptes(t, m, first, nr);
}

/* Pages come back by PTE, as after swap-in or migration. */
static void ot_map(struct ot_trace *t)
{
	struct ffx_mm *m = ot_pick(t, ot_can_map);
	long first, nr;

	t->op = "map: nothing to map";
	if (!m)
		return;
	t->op = "map";
	first = ot_pick_page(t, m, false);
	nr = 1 + ot_rnd(t, ot_run(t, m, first, false));
	ffx_map_ptes(t->f, m, first, nr);
	slots_add(&t->slots, m->id, nr);
}

static void ot_pmd_split(struct ot_trace *t)
{
	struct ffx_mm *m = ot_pick(t, ot_maps_pmd);

	t->op = "PMD split: no PMD";
	if (!m)
		return;
	t->op = "PMD split";
	ot_split_pmd(t, m);
}

static void (*const ot_ops[])(struct ot_trace *t) = {
	ot_fork, ot_exit, ot_unmap, ot_unmap, ot_map,
	ot_map, ot_pmd_split,
};

static struct ffx_mm *ot_live_mm_with_id(struct ot_trace *t, mm_id_t id)
{
	int i;

	for (i = 0; i < t->nr_mms; i++)
		if (ot_live(t->mms[i]) && t->mms[i]->id == id)
			return t->mms[i];
	return NULL;
}

static void ot_check(struct ot_trace *t)
{
	struct folio *folio = t->folio;
	long total = ffx_model_total_mapcount(t->f);
	int i, mappers = 0, pmds = 0;
	bool shared;

	for (i = 0; i < t->nr_mms; i++) {
		mappers += ffx_model_mapcount(t->f, t->mms[i]) > 0;
		pmds += ffx_model_maps_pmd(t->f, t->mms[i]);
	}
	t->max_mappers = max(t->max_mappers, mappers);

	/* Against the exact per-MM mapcounts. */
	OT_ASSERT(t, folio_mapcount(folio) == total,
		  "folio_mapcount() %d, the MMs map it %ld times",
		  folio_mapcount(folio), total);
	OT_ASSERT(t, t->slots.total == total, "slot rules count %ld, MMs %ld",
		  t->slots.total, total);
	for (i = 0; i < 2; i++) {
		mm_id_t id = folio_mm_id(folio, i);
		long count = folio->_mm_id_mapcount[i] + 1;
		struct ffx_mm *m;

		if (id == MM_ID_DUMMY) {
			OT_ASSERT(t, count == 0, "free slot %d counts %ld",
				  i, count);
			continue;
		}
		m = ot_live_mm_with_id(t, id);
		OT_ASSERT(t, m, "slot %d holds ID %u, no live MM has it",
			  i, id);
		OT_ASSERT(t, count >= 1 && count <= ffx_model_mapcount(t->f, m),
			  "slot %d counts %ld mappings of %s, which maps %ld",
			  i, count, m->name, ffx_model_mapcount(t->f, m));
	}
	for (i = 0; i < t->nr_mms; i++)
		if (ot_maps_some(t, t->mms[i]) &&
		    slots_find(&t->slots, t->mms[i]->id) < 0) {
			t->nr_untracked_steps++;
			break;
		}
	shared = folio_maybe_mapped_shared(folio);
	OT_ASSERT(t, shared || mappers < 2,
		  "false negative: %d MMs map the folio", mappers);
	if (t->max_mappers <= 2)
		OT_ASSERT(t, shared == (mappers == 2),
			  "not exact: %d MMs map it, maybe shared %d",
			  mappers, shared);

	/* Against the design's slot rules. */
	for (i = 0; i < 2; i++) {
		OT_ASSERT(t, folio_mm_id(folio, i) == t->slots.id[i],
			  "slot %d holds ID %u, the rules say %u", i,
			  folio_mm_id(folio, i), t->slots.id[i]);
		OT_ASSERT(t, folio->_mm_id_mapcount[i] + 1 == t->slots.count[i],
			  "slot %d counts %d, the rules say %ld", i,
			  folio->_mm_id_mapcount[i] + 1, t->slots.count[i]);
	}
	OT_ASSERT(t, folio_test_large_maybe_mapped_shared(folio) ==
		  t->slots.shared, "shared bit %d, the rules say %d",
		  folio_test_large_maybe_mapped_shared(folio),
		  t->slots.shared);

	/* The write fault's reuse decision in each MM that maps by PTEs. */
	for (i = 0; i < t->nr_mms; i++) {
		struct ffx_mm *m = t->mms[i];
		bool reuse;

		if (!ot_maps_some(t, m) || ffx_model_maps_pmd(t->f, m))
			continue;
		/*
		 * Only the mappings hold references in a fault: drop the
		 * fixture's own for the call.  The PTL stand-in is held, as
		 * do_wp_page() holds the page table lock.
		 */
		mmap_read_lock(m->mm);
		folio_put(folio);
		ffx_ptl_lock();
		reuse = wp_can_reuse_anon_folio(folio, m->vma);
		ffx_ptl_unlock();
		folio_get(folio);
		mmap_read_unlock(m->mm);
		t->nr_reuses += reuse;
		OT_ASSERT(t, !reuse || mappers == 1,
			  "%s reuses a folio %d MMs map", m->name, mappers);
		if (t->max_mappers <= 2)
			OT_ASSERT(t, reuse == (mappers == 1 && total > 1),
				  "%s: reuse %d, %d MMs map it %ld times",
				  m->name, reuse, mappers, total);
	}

	/* The PMD mappings, and the per-page mapcounts where kept. */
	if (folio_test_pmd_mappable(folio))
		OT_ASSERT(t, folio_entire_mapcount(folio) == pmds,
			  "entire mapcount %d, %d PMD mappings",
			  folio_entire_mapcount(folio), pmds);
	for (i = 0; i < t->nr; i++) {
		int want = FFX_VARIANT(ffx_model_page_mapcount(t->f, i) - pmds, 0);

		OT_ASSERT(t, ffx_page_mapcount(t->f, i) == want,
			  "page %d mapcount %d, want %d", i,
			  ffx_page_mapcount(t->f, i), want);
	}
}

static void ot_run_one(struct kunit *test, const struct ot_param *p,
		       int steps)
{
	struct ot_trace *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	struct ffx_mm *m;

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->test = test;
	t->param = p;
	t->max_mms = steps + 1;
	/* Allocated before the fixture: they outlive its teardown. */
	t->mms = kunit_kcalloc(test, t->max_mms, sizeof(*t->mms), GFP_KERNEL);
	t->names = kunit_kcalloc(test, t->max_mms, sizeof(*t->names), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->mms);
	KUNIT_ASSERT_NOT_NULL(test, t->names);
	prandom_seed_state(&t->rnd, p->seed);

	t->fx = ffx_init(test);
	m = ot_new_mm(t, NULL);
	t->f = ffx_folio_alloc(m, p->shape->order);
	t->folio = t->f->folio;
	t->nr = t->f->nr;
	t->op = "first map";
	ffx_map_new(t->f, m, p->shape->level);
	/* folio_add_new_anon_rmap(), then the PMD split for FFX_PTE. */
	slots_new(&t->slots, m->id, folio_test_pmd_mappable(t->folio) ? 1 : t->nr);
	if (folio_test_pmd_mappable(t->folio) && p->shape->level == FFX_PTE) {
		slots_add(&t->slots, m->id, t->nr);
		slots_sub(&t->slots, m->id, 1);
	}
	ot_check(t);

	for (t->step = 1; t->step <= steps; t->step++) {
		ot_ops[ot_rnd(t, ARRAY_SIZE(ot_ops))](t);
		/* An operation that found nothing to do says why after ':'. */
		if (strchr(t->op, ':'))
			t->nr_noops++;
		if (verbose)
			kunit_info(test, "seed %#x step %d: %s, mapcount %d\n",
				   p->seed, t->step, t->op,
				   folio_mapcount(t->folio));
		ot_check(t);
	}

	kunit_info(test,
		   "%d steps (%d no-ops): %d forks, %d exits, up to %d MMs mapping at once, %d steps with an untracked MM, %d reuse answers\n",
		   steps, t->nr_noops, t->nr_forks, t->nr_exits, t->max_mappers,
		   t->nr_untracked_steps, t->nr_reuses);

	/* Everybody exits, in random order. */
	t->op = "final exit";
	while ((m = ot_pick(t, NULL))) {
		ot_unmap_all(t, m);
		ffx_mm_exit(m);
		ot_check(t);
	}
	OT_ASSERT(t, !folio_mapped(t->folio), "still mapped after all exits");
	OT_ASSERT(t, !folio_test_large_maybe_mapped_shared(t->folio),
		  "unmapped folio keeps the shared bit");
	ffx_exit(t->fx);
}

static void random_traces_keep_counts_and_slots_consistent(struct kunit *test)
{
	ot_run_one(test, test->param_value, OT_STEPS);
}

static void long_random_traces_keep_counts_and_slots_consistent(struct kunit *test)
{
	ot_run_one(test, test->param_value, OT_STEPS_SLOW);
}

static struct kunit_case folio_owner_trace_cases[] = {
	KUNIT_CASE_PARAM(random_traces_keep_counts_and_slots_consistent,
			 ot_gen_params),
	KUNIT_CASE_PARAM_ATTR(long_random_traces_keep_counts_and_slots_consistent,
			      ot_gen_params_slow,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite folio_owner_trace_suite = {
	.name = "folio_owner_trace",
	.test_cases = folio_owner_trace_cases,
};

kunit_test_suite(folio_owner_trace_suite);
