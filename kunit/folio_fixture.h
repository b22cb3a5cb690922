/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixture for KUnit tests of large folio mapcounts and MM owner tracking.
 *
 * The tests drive the real rmap API (folio_add_new_anon_rmap(),
 * folio_try_dup_anon_rmap_*(), folio_remove_rmap_*() ...) on real folios,
 * with real mm_structs, VMAs and anon_vmas, but without page tables: the
 * fixture plays the part of the page table code (fault, fork, zap, PMD
 * split) and keeps its own record of what each MM maps.  That record is the
 * reference the tests compare the folio's counters with.
 *
 * Every object the fixture creates is released by one kunit action that
 * ffx_init() registers: first every remaining mapping is removed, then the
 * fixture's folio references are dropped, then the MMs are put.  A test can
 * therefore stop (or fail an assertion) at any point without leaking or
 * leaving a folio that points at a freed anon_vma.
 */
#ifndef MM_TESTS_FOLIO_FIXTURE_H
#define MM_TESTS_FOLIO_FIXTURE_H

#include <kunit/test.h>
#include <linux/list.h>
#include <linux/mm.h>

/*
 * An expectation that differs between the two variants of the series:
 * @page_mapcount with per-page mapcounts (CONFIG_PAGE_MAPCOUNT, the default),
 * @no_page_mapcount without them (CONFIG_NO_PAGE_MAPCOUNT).
 */
#define FFX_VARIANT(page_mapcount, no_page_mapcount) \
	(!IS_ENABLED(CONFIG_NO_PAGE_MAPCOUNT) ? (page_mapcount) : (no_page_mapcount))

/* How the fixture maps (a part of) a folio into an MM. */
enum ffx_level {
	FFX_PTE,	/* page by page, as after a fault or a PMD split */
	FFX_PMD,	/* one PMD mapping of a PMD-sized folio */
};

/* Stands for the PMD order in parameter tables: resolved at run time. */
#define FFX_ORDER_PMD	(-1)

/*
 * The folio shapes most cases run for, as a KUnit parameter table: the
 * smallest anonymous mTHP (order 2), a 64K-on-4K mTHP (order 4), and a
 * PMD-sized THP, both PTE-mapped and PMD-mapped.  A case takes them with
 * KUNIT_CASE_PARAM(case, ffx_shape_gen_params).
 */
struct ffx_shape {
	const char *desc;
	int order;
	enum ffx_level level;
};

const void *ffx_shape_gen_params(const void *prev, char *desc);

/* The one anonymous VMA each fixture MM has, at the same place in all. */
#define FFX_VMA_START	0x40000000UL
#define FFX_VMA_SIZE	(4 * PMD_SIZE)

struct ffx {
	struct kunit *test;
	struct list_head mms;		/* struct ffx_mm, in creation order */
	struct list_head folios;	/* struct ffx_folio */
};

/* A simulated process: an MM with one anonymous VMA. */
struct ffx_mm {
	struct list_head node;
	struct ffx *fx;
	const char *name;
	struct mm_struct *mm;
	struct vm_area_struct *vma;
	unsigned int id;		/* mm->mm_id, kept after exit */
};

/* A folio the fixture allocated, and what it mapped of it where. */
struct ffx_folio {
	struct list_head node;
	struct ffx *fx;
	struct folio *folio;
	unsigned int order;
	bool file;			/* page cache style, not anonymous */
	long nr;			/* folio_nr_pages() */
	unsigned long addr;		/* address of page 0 in every MM */
	struct list_head maps;		/* struct ffx_map */
};

/* The fixture's record of one MM's mappings of one folio. */
struct ffx_map {
	struct list_head node;
	struct ffx_mm *m;
	unsigned long *ptes;		/* bitmap: pages mapped by a PTE */
	int pmd;			/* 1 if mapped by a PMD */
};

/*
 * The page table lock the rmap functions expect their callers to hold.
 * The fixture takes it around each of its rmap calls; a suite that calls
 * the rmap functions itself takes it too.
 */
void ffx_ptl_lock(void);
void ffx_ptl_unlock(void);

struct ffx *ffx_init(struct kunit *test);
/*
 * Tear the fixture down now rather than at the end of the test (a test that
 * builds many scenarios in a row): what ffx_init()'s action would do.
 */
void ffx_exit(struct ffx *fx);

/*
 * The usual start: a fixture, an MM "parent" and an anonymous folio of
 * @order that the parent has faulted in, PTE-mapped and exclusive.
 */
struct ffx_folio *ffx_start(struct kunit *test, int order, struct ffx_mm **parent);

/* A new MM ("exec") with one anonymous VMA and its anon_vma. */
struct ffx_mm *ffx_mm_create(struct ffx *fx, const char *name);
/*
 * A new MM as fork() creates it from @parent: a copy of the VMA, linked to
 * the parent's anon_vma with anon_vma_fork().  No folio is duplicated yet:
 * see ffx_fork_folio().
 */
struct ffx_mm *ffx_mm_fork(struct ffx_mm *parent, const char *name);
/* The MM exits: remove all its folio mappings (zap), then mmput(). */
void ffx_mm_exit(struct ffx_mm *m);

/* Resolve FFX_ORDER_PMD; skip the test if the order is not usable here. */
unsigned int ffx_order(struct kunit *test, int order);
/*
 * An anonymous folio of @order allocated for @m's VMA, not yet mapped.  The
 * fixture holds one reference of its own until teardown, so the folio stays
 * valid after the last unmap.  Skips the test if allocation fails.
 */
struct ffx_folio *ffx_folio_alloc(struct ffx_mm *m, int order);
/*
 * A large folio as the page cache holds it (not anonymous, no mapping: only
 * the rmap counters are exercised), charged to @m.  It is mapped with the
 * file rmap functions, by PTEs only, and fork duplicates its mappings with
 * folio_dup_file_rmap_ptes().  Unlike anonymous folios, order 1 is possible.
 */
struct ffx_folio *ffx_folio_alloc_file(struct ffx_mm *m, int order);

/* First mapping, as the anonymous fault path does it (exclusive). */
void ffx_map_new(struct ffx_folio *f, struct ffx_mm *m, enum ffx_level level);
/* Map pages [first, first + nr) again by PTE (e.g. after swap-in). */
void ffx_map_ptes(struct ffx_folio *f, struct ffx_mm *m, long first, long nr);
/* Remove the PTE mappings of pages [first, first + nr) (zap, COW). */
void ffx_unmap_ptes(struct ffx_folio *f, struct ffx_mm *m, long first, long nr);
/* Remove whatever @m maps of the folio. */
void ffx_unmap_all(struct ffx_folio *f, struct ffx_mm *m);
/* Replace @m's PMD mapping by PTE mappings of every page (PMD split). */
void ffx_remap_pmd(struct ffx_folio *f, struct ffx_mm *m);
/*
 * fork()'s copy of @parent's mappings of the folio into @child: the
 * folio_try_dup_anon_rmap_*() path, under the parent's mmap lock and
 * write_protect_seq.  Returns what the dup returned (-EBUSY: must copy).
 */
int ffx_fork_folio(struct ffx_folio *f, struct ffx_mm *parent,
		   struct ffx_mm *child);
/*
 * fork() as far as the folio is concerned: ffx_mm_fork(), then
 * ffx_fork_folio(), asserting that the dup succeeded.
 */
struct ffx_mm *ffx_fork(struct ffx_folio *f, struct ffx_mm *parent,
			const char *name);
/* If @m maps the folio by a PMD, split that into PTE mappings. */
void ffx_pte_map(struct ffx_folio *f, struct ffx_mm *m);

/* The fixture's record: mappings of the folio in @m, and in all MMs. */
long ffx_model_mapcount(struct ffx_folio *f, struct ffx_mm *m);
long ffx_model_total_mapcount(struct ffx_folio *f);

/*
 * Whether @m maps page @i (by a PTE or the PMD), whether it maps the folio
 * by a PMD, and how often all MMs map page @i.
 */
bool ffx_model_maps_page(struct ffx_folio *f, struct ffx_mm *m, long i);
bool ffx_model_maps_pmd(struct ffx_folio *f, struct ffx_mm *m);
int ffx_model_page_mapcount(struct ffx_folio *f, long i);

/*
 * A node statistic (NR_ANON_MAPPED ...) of the folio's node, exact at the
 * time of the call: only differences between two calls are meaningful.
 */
long ffx_node_stat(struct ffx_folio *f, enum node_stat_item item);

/*
 * Per-page mapcount of page @i, read from the page itself.  Without
 * per-page mapcounts (CONFIG_NO_PAGE_MAPCOUNT) it stays 0 for the pages of
 * large folios.
 */
int ffx_page_mapcount(struct ffx_folio *f, long i);
/* Number of pages of the folio with PageAnonExclusive set. */
long ffx_nr_anon_exclusive(struct ffx_folio *f);
/* Number of distinct MMs an rmap walk of the folio visits. */
int ffx_rmap_nr_mms(struct ffx_folio *f);

#endif /* MM_TESTS_FOLIO_FIXTURE_H */
