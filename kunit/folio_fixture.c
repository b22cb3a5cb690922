// SPDX-License-Identifier: GPL-2.0
/*
 * Fixture for KUnit tests of large folio mapcounts: real MMs, VMAs and
 * anon_vmas, real folios, the real rmap functions.  See folio_fixture.h.
 */
#include <linux/bitmap.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/rmap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "folio_fixture.h"

/*
 * Stands in for the page table locks: the rmap functions are called with
 * the PTL held, and their statistics updates (__lruvec_stat_mod_folio())
 * rely on preemption being disabled.
 */
static DEFINE_SPINLOCK(ffx_ptl);

void ffx_ptl_lock(void)
{
	spin_lock(&ffx_ptl);
}

void ffx_ptl_unlock(void)
{
	spin_unlock(&ffx_ptl);
}

static const struct ffx_shape ffx_shapes[] = {
	{ "order-2 PTE-mapped", 2, FFX_PTE },
	{ "order-4 PTE-mapped", 4, FFX_PTE },
	{ "PMD-order PTE-mapped", FFX_ORDER_PMD, FFX_PTE },
	{ "PMD-order PMD-mapped", FFX_ORDER_PMD, FFX_PMD },
};

static void ffx_shape_desc(const struct ffx_shape *s, char *desc)
{
	strscpy(desc, s->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ffx_shapes, ffx_shapes, ffx_shape_desc);

const void *ffx_shape_gen_params(const void *prev, char *desc)
{
	return ffx_shapes_gen_params(prev, desc);
}

static struct ffx_map *ffx_map_of(struct ffx_folio *f, struct ffx_mm *m,
				  bool create)
{
	struct kunit *test = f->fx->test;
	struct ffx_map *r;

	list_for_each_entry(r, &f->maps, node)
		if (r->m == m)
			return r;
	if (!create)
		return NULL;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->ptes = bitmap_zalloc(f->nr, GFP_KERNEL);
	if (!r->ptes) {
		kfree(r);
		KUNIT_FAIL_AND_ABORT(test, "no memory for the mapping record");
	}
	r->m = m;
	list_add_tail(&r->node, &f->maps);
	return r;
}

static struct page *ffx_page(struct ffx_folio *f, long i)
{
	return folio_page(f->folio, i);
}

static void ffx_check_live(struct ffx_mm *m)
{
	KUNIT_ASSERT_NOT_NULL_MSG(m->fx->test, m->mm, "%s has exited", m->name);
}

/*
 * The unchecked operations: the public helpers check their arguments with
 * KUnit assertions first; teardown calls these directly.
 */
static void __ffx_unmap_ptes(struct ffx_folio *f, struct ffx_map *r,
			     long first, long nr)
{
	ffx_ptl_lock();
	folio_remove_rmap_ptes(f->folio, ffx_page(f, first), nr, r->m->vma);
	ffx_ptl_unlock();
	folio_ref_sub(f->folio, nr);
	bitmap_clear(r->ptes, first, nr);
}

static void __ffx_unmap_pmd(struct ffx_folio *f, struct ffx_map *r)
{
	ffx_ptl_lock();
	folio_remove_rmap_pmd(f->folio, ffx_page(f, 0), r->m->vma);
	ffx_ptl_unlock();
	folio_ref_sub(f->folio, 1);
	r->pmd = 0;
}

static void __ffx_unmap_all(struct ffx_folio *f, struct ffx_map *r)
{
	unsigned int rs, re;

	if (r->pmd)
		__ffx_unmap_pmd(f, r);
	for_each_set_bitrange(rs, re, r->ptes, f->nr)
		__ffx_unmap_ptes(f, r, rs, re - rs);
}

static void ffx_teardown(void *data)
{
	struct ffx *fx = data;
	struct ffx_folio *f, *tf;
	struct ffx_map *r, *tr;
	struct ffx_mm *m, *tm;

	/* Folios first: their mappings point at the MMs' VMAs. */
	list_for_each_entry_safe(f, tf, &fx->folios, node) {
		list_for_each_entry_safe(r, tr, &f->maps, node) {
			__ffx_unmap_all(f, r);
			bitmap_free(r->ptes);
			kfree(r);
		}
		folio_put(f->folio);
		kfree(f);
	}
	list_for_each_entry_safe_reverse(m, tm, &fx->mms, node) {
		if (m->mm)
			mmput(m->mm);
		kfree(m);
	}
}

struct ffx *ffx_init(struct kunit *test)
{
	struct ffx *fx = kunit_kzalloc(test, sizeof(*fx), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, fx);
	fx->test = test;
	INIT_LIST_HEAD(&fx->mms);
	INIT_LIST_HEAD(&fx->folios);
	/*
	 * The fixture's own objects are kmalloc'ed, not kunit-managed: kunit
	 * frees resources in reverse order of creation, so anything allocated
	 * with kunit_kzalloc() after this point would be gone before teardown
	 * runs.
	 */
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, ffx_teardown, fx));
	return fx;
}

struct ffx_folio *ffx_start(struct kunit *test, int order, struct ffx_mm **parent)
{
	struct ffx *fx = ffx_init(test);
	struct ffx_folio *f;

	*parent = ffx_mm_create(fx, "parent");
	f = ffx_folio_alloc(*parent, order);
	ffx_map_new(f, *parent, FFX_PTE);
	return f;
}

void ffx_exit(struct ffx *fx)
{
	kunit_release_action(fx->test, ffx_teardown, fx);
}

static struct ffx_mm *ffx_mm_new(struct ffx *fx, const char *name,
				 struct ffx_mm *parent)
{
	struct kunit *test = fx->test;
	struct vm_area_struct *vma;
	struct ffx_mm *m;
	int ret;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	m->fx = fx;
	m->name = name;
	m->mm = mm_alloc();
	if (!m->mm) {
		kfree(m);
		KUNIT_FAIL_AND_ABORT(test, "mm_alloc() failed for %s", name);
	}
	list_add_tail(&m->node, &fx->mms);
#ifdef CONFIG_MM_ID
	m->id = m->mm->mm_id;
#endif

	vma = vm_area_alloc(m->mm);
	KUNIT_ASSERT_NOT_NULL(test, vma);
	vma->vm_start = FFX_VMA_START;
	vma->vm_end = FFX_VMA_START + FFX_VMA_SIZE;
	vma_set_anonymous(vma);
	vm_flags_init(vma, VM_READ | VM_WRITE | VM_MAYREAD | VM_MAYWRITE);
	vma->vm_page_prot = vm_get_page_prot(vma->vm_flags);

	/*
	 * The VMA has to be in the MM's tree before it gets an anon_vma:
	 * find_mergeable_anon_vma() looks at its neighbours.
	 */
	if (parent) {
		mmap_write_lock(parent->mm);
		mmap_write_lock_nested(m->mm, SINGLE_DEPTH_NESTING);
	} else {
		mmap_write_lock(m->mm);
	}
	ret = insert_vm_struct(m->mm, vma);
	if (ret)
		vm_area_free(vma);
	else if (parent)
		ret = anon_vma_fork(vma, parent->vma);
	else
		ret = anon_vma_prepare(vma);
	mmap_write_unlock(m->mm);
	if (parent)
		mmap_write_unlock(parent->mm);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "setting up the VMA of %s failed", name);
	m->vma = vma;
	return m;
}

struct ffx_mm *ffx_mm_create(struct ffx *fx, const char *name)
{
	return ffx_mm_new(fx, name, NULL);
}

struct ffx_mm *ffx_mm_fork(struct ffx_mm *parent, const char *name)
{
	return ffx_mm_new(parent->fx, name, parent);
}

void ffx_mm_exit(struct ffx_mm *m)
{
	struct ffx_folio *f;
	struct ffx_map *r;

	KUNIT_ASSERT_NOT_NULL_MSG(m->fx->test, m->mm, "%s exited twice", m->name);
	list_for_each_entry(f, &m->fx->folios, node) {
		r = ffx_map_of(f, m, false);
		if (r)
			__ffx_unmap_all(f, r);
	}
	mmput(m->mm);
	m->mm = NULL;
	m->vma = NULL;
}

unsigned int ffx_order(struct kunit *test, int order)
{
	if (order == FFX_ORDER_PMD)
		order = HPAGE_PMD_ORDER;
	if (order > MAX_PAGE_ORDER)
		kunit_skip(test, "order %d is above MAX_PAGE_ORDER %d", order,
			   MAX_PAGE_ORDER);
	return order;
}

static struct ffx_folio *__ffx_folio_alloc(struct ffx_mm *m, int order,
					   bool file)
{
	const gfp_t gfp = GFP_HIGHUSER_MOVABLE | __GFP_NOWARN | __GFP_RETRY_MAYFAIL;
	struct kunit *test = m->fx->test;
	struct ffx_folio *f;
	struct folio *folio;
	unsigned int o = ffx_order(test, order);

	ffx_check_live(m);
	if (file) {
		folio = folio_alloc(gfp, o);
	} else {
		mmap_read_lock(m->mm);
		folio = vma_alloc_folio(gfp, o, m->vma, FFX_VMA_START, false);
		mmap_read_unlock(m->mm);
	}
	if (!folio)
		kunit_skip(test, "could not allocate an order-%u folio", o);
	/* As the anonymous fault path: charge it to the MM's memcg. */
	if (mem_cgroup_charge(folio, m->mm, gfp)) {
		folio_put(folio);
		kunit_skip(test, "could not charge an order-%u folio", o);
	}

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		folio_put(folio);
	KUNIT_ASSERT_NOT_NULL(test, f);
	f->fx = m->fx;
	f->folio = folio;
	f->order = o;
	f->file = file;
	f->nr = folio_nr_pages(folio);
	f->addr = FFX_VMA_START;
	INIT_LIST_HEAD(&f->maps);
	list_add_tail(&f->node, &m->fx->folios);

	KUNIT_ASSERT_EQ(test, folio_order(folio), o);
	KUNIT_ASSERT_EQ(test, folio_test_large(folio), o > 0);
	return f;
}

struct ffx_folio *ffx_folio_alloc(struct ffx_mm *m, int order)
{
	return __ffx_folio_alloc(m, order, false);
}

struct ffx_folio *ffx_folio_alloc_file(struct ffx_mm *m, int order)
{
	return __ffx_folio_alloc(m, order, true);
}

static void ffx_check_range(struct ffx_folio *f, long first, long nr)
{
	struct kunit *test = f->fx->test;

	KUNIT_ASSERT_GE(test, first, 0);
	KUNIT_ASSERT_GT(test, nr, 0);
	KUNIT_ASSERT_LE(test, first + nr, f->nr);
}

void ffx_remap_pmd(struct ffx_folio *f, struct ffx_mm *m)
{
	struct ffx_map *r = ffx_map_of(f, m, false);
	struct kunit *test = f->fx->test;
	rmap_t flags = RMAP_NONE;

	ffx_check_live(m);
	KUNIT_ASSERT_FALSE(test, f->file);
	KUNIT_ASSERT_TRUE_MSG(test, r && r->pmd, "%s has no PMD mapping", m->name);

	/* As __split_huge_pmd_locked(): PTEs first, then drop the PMD. */
	if (PageAnonExclusive(ffx_page(f, 0)))
		flags = RMAP_EXCLUSIVE;
	folio_ref_add(f->folio, f->nr);
	ffx_ptl_lock();
	folio_add_anon_rmap_ptes(f->folio, ffx_page(f, 0), f->nr, m->vma,
				 f->addr, flags);
	ffx_ptl_unlock();
	bitmap_fill(r->ptes, f->nr);
	__ffx_unmap_pmd(f, r);
}

void ffx_map_new(struct ffx_folio *f, struct ffx_mm *m, enum ffx_level level)
{
	struct ffx_map *r = ffx_map_of(f, m, true);
	struct kunit *test = f->fx->test;
	struct folio *folio = f->folio;

	ffx_check_live(m);
	KUNIT_ASSERT_FALSE_MSG(test, folio_mapped(folio),
			       "a new folio is mapped before its first mapping");
	if (level == FFX_PMD)
		KUNIT_ASSERT_TRUE_MSG(test, folio_test_pmd_mappable(folio) &&
				      !f->file,
				      "an order-%u %s folio cannot be PMD-mapped here",
				      f->order, f->file ? "file" : "anon");

	if (f->file) {
		folio_ref_add(folio, f->nr);
		ffx_ptl_lock();
		folio_add_file_rmap_ptes(folio, ffx_page(f, 0), f->nr, m->vma);
		ffx_ptl_unlock();
		bitmap_fill(r->ptes, f->nr);
	} else if (folio_test_pmd_mappable(folio)) {
		/*
		 * A PMD-sized anonymous folio is always mapped by a PMD
		 * first; it becomes PTE-mapped when the PMD is split.
		 */
		folio_get(folio);
		ffx_ptl_lock();
		folio_add_new_anon_rmap(folio, m->vma, f->addr, RMAP_EXCLUSIVE);
		ffx_ptl_unlock();
		r->pmd = 1;
		if (level == FFX_PTE)
			ffx_remap_pmd(f, m);
	} else {
		folio_ref_add(folio, f->nr);
		ffx_ptl_lock();
		folio_add_new_anon_rmap(folio, m->vma, f->addr, RMAP_EXCLUSIVE);
		ffx_ptl_unlock();
		bitmap_fill(r->ptes, f->nr);
	}
}

void ffx_map_ptes(struct ffx_folio *f, struct ffx_mm *m, long first, long nr)
{
	struct ffx_map *r = ffx_map_of(f, m, true);
	struct kunit *test = f->fx->test;

	ffx_check_live(m);
	ffx_check_range(f, first, nr);
	/* An anonymous page is mapped at most once per MM. */
	KUNIT_ASSERT_FALSE(test, r->pmd);
	KUNIT_ASSERT_EQ_MSG(test, find_next_bit(r->ptes, first + nr, first),
			    first + nr, "%s already maps a page of [%ld, %ld)",
			    m->name, first, first + nr);

	folio_ref_add(f->folio, nr);
	ffx_ptl_lock();
	if (f->file)
		folio_add_file_rmap_ptes(f->folio, ffx_page(f, first), nr,
					 m->vma);
	else
		folio_add_anon_rmap_ptes(f->folio, ffx_page(f, first), nr,
					 m->vma, f->addr + first * PAGE_SIZE,
					 RMAP_NONE);
	ffx_ptl_unlock();
	bitmap_set(r->ptes, first, nr);
}

void ffx_unmap_ptes(struct ffx_folio *f, struct ffx_mm *m, long first, long nr)
{
	struct ffx_map *r = ffx_map_of(f, m, false);
	struct kunit *test = f->fx->test;

	ffx_check_live(m);
	ffx_check_range(f, first, nr);
	KUNIT_ASSERT_NOT_NULL_MSG(test, r, "%s maps nothing of the folio", m->name);
	KUNIT_ASSERT_EQ_MSG(test, find_next_zero_bit(r->ptes, first + nr, first),
			    first + nr, "%s does not map all of [%ld, %ld)",
			    m->name, first, first + nr);
	__ffx_unmap_ptes(f, r, first, nr);
}

void ffx_unmap_all(struct ffx_folio *f, struct ffx_mm *m)
{
	struct ffx_map *r = ffx_map_of(f, m, false);

	ffx_check_live(m);
	if (r)
		__ffx_unmap_all(f, r);
}

int ffx_fork_folio(struct ffx_folio *f, struct ffx_mm *parent,
		   struct ffx_mm *child)
{
	struct ffx_map *rp = ffx_map_of(f, parent, false);
	struct ffx_map *rc = ffx_map_of(f, child, true);
	struct kunit *test = f->fx->test;
	struct folio *folio = f->folio;
	unsigned int rs, re;
	int ret = 0;

	ffx_check_live(parent);
	ffx_check_live(child);
	KUNIT_ASSERT_NOT_NULL_MSG(test, rp, "%s maps nothing to fork", parent->name);
	KUNIT_ASSERT_TRUE_MSG(test, !rc->pmd && bitmap_empty(rc->ptes, f->nr),
			      "%s already maps the folio", child->name);

	/* As copy_page_range(): the reference first, then the dup. */
	mmap_write_lock(parent->mm);
	raw_write_seqcount_begin(&parent->mm->write_protect_seq);
	ffx_ptl_lock();
	if (rp->pmd) {
		folio_get(folio);
		ret = folio_try_dup_anon_rmap_pmd(folio, ffx_page(f, 0),
						  child->vma, parent->vma);
		if (ret)
			folio_ref_sub(folio, 1);
		else
			rc->pmd = 1;
	}
	for_each_set_bitrange(rs, re, rp->ptes, f->nr) {
		if (ret)
			break;
		folio_ref_add(folio, re - rs);
		if (f->file) {
			folio_dup_file_rmap_ptes(folio, ffx_page(f, rs), re - rs,
						 child->vma);
			bitmap_set(rc->ptes, rs, re - rs);
			continue;
		}
		ret = folio_try_dup_anon_rmap_ptes(folio, ffx_page(f, rs),
						   re - rs, child->vma,
						   parent->vma);
		if (ret)
			folio_ref_sub(folio, re - rs);
		else
			bitmap_set(rc->ptes, rs, re - rs);
	}
	ffx_ptl_unlock();
	raw_write_seqcount_end(&parent->mm->write_protect_seq);
	mmap_write_unlock(parent->mm);
	return ret;
}

struct ffx_mm *ffx_fork(struct ffx_folio *f, struct ffx_mm *parent,
			const char *name)
{
	struct ffx_mm *child = ffx_mm_fork(parent, name);

	KUNIT_ASSERT_EQ_MSG(f->fx->test, ffx_fork_folio(f, parent, child), 0,
			    "duplicating the mappings into %s failed", name);
	return child;
}

void ffx_pte_map(struct ffx_folio *f, struct ffx_mm *m)
{
	struct ffx_map *r = ffx_map_of(f, m, false);

	if (r && r->pmd)
		ffx_remap_pmd(f, m);
}

long ffx_model_mapcount(struct ffx_folio *f, struct ffx_mm *m)
{
	struct ffx_map *r = ffx_map_of(f, m, false);

	return r ? bitmap_weight(r->ptes, f->nr) + r->pmd : 0;
}

long ffx_model_total_mapcount(struct ffx_folio *f)
{
	struct ffx_map *r;
	long total = 0;

	list_for_each_entry(r, &f->maps, node)
		total += bitmap_weight(r->ptes, f->nr) + r->pmd;
	return total;
}

bool ffx_model_maps_page(struct ffx_folio *f, struct ffx_mm *m, long i)
{
	struct ffx_map *r = ffx_map_of(f, m, false);

	return r && (r->pmd || test_bit(i, r->ptes));
}

bool ffx_model_maps_pmd(struct ffx_folio *f, struct ffx_mm *m)
{
	struct ffx_map *r = ffx_map_of(f, m, false);

	return r && r->pmd;
}

int ffx_model_page_mapcount(struct ffx_folio *f, long i)
{
	struct ffx_map *r;
	int nr = 0;

	list_for_each_entry(r, &f->maps, node)
		nr += r->pmd + test_bit(i, r->ptes);
	return nr;
}

long ffx_node_stat(struct ffx_folio *f, enum node_stat_item item)
{
	struct pglist_data *pgdat = folio_pgdat(f->folio);
	long prev = LONG_MIN, val = 0;
	int cpu, tries;

	/*
	 * The global counter plus every CPU's pending delta.  vmstat folds
	 * the deltas into the counter now and then; a read that raced with a
	 * fold differs from the next one, so read until two agree.
	 */
	for (tries = 0; tries < 10 && val != prev; tries++) {
		prev = val;
		val = atomic_long_read(&pgdat->vm_stat[item]);
		for_each_online_cpu(cpu)
			val += per_cpu_ptr(pgdat->per_cpu_nodestats,
					   cpu)->vm_node_stat_diff[item];
	}
	return val;
}

int ffx_page_mapcount(struct ffx_folio *f, long i)
{
	return atomic_read(&ffx_page(f, i)->_mapcount) + 1;
}

long ffx_nr_anon_exclusive(struct ffx_folio *f)
{
	long i, nr = 0;

	for (i = 0; i < f->nr; i++)
		nr += PageAnonExclusive(ffx_page(f, i));
	return nr;
}

struct ffx_rmap_mms {
	struct mm_struct *mms[8];
	int nr;
};

static bool ffx_rmap_one(struct folio *folio, struct vm_area_struct *vma,
			 unsigned long addr, void *arg)
{
	struct ffx_rmap_mms *seen = arg;
	int i;

	for (i = 0; i < seen->nr; i++)
		if (seen->mms[i] == vma->vm_mm)
			return true;
	if (seen->nr < ARRAY_SIZE(seen->mms))
		seen->mms[seen->nr++] = vma->vm_mm;
	return true;
}

int ffx_rmap_nr_mms(struct ffx_folio *f)
{
	struct ffx_rmap_mms seen = { .nr = 0 };
	struct rmap_walk_control rwc = {
		.rmap_one = ffx_rmap_one,
		.arg = &seen,
	};

	/* rmap_walk() of a page cache folio needs its mapping and lock. */
	KUNIT_ASSERT_FALSE(f->fx->test, f->file);

	rmap_walk(f->folio, &rwc);
	return seen.nr;
}
