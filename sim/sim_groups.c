/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sim_groups: see sim_groups.h. */
#include "config.h"

#include "sim_groups.h"

#include <simgrid/host.h>
#include <simgrid/link.h>
#include <stdint.h>
#include <stdlib.h>
#include <xbt/dynar.h>

struct sim_links {
    sg_link_t *links;                 /* every link of the platform, sorted */
    size_t nlinks;
    double *platform_bw;              /* per link, as the platform has it */
    double *factor[SIM_MAX_EXCH];     /* per exchange and link; NULL: all 1 */
};

static int cmp_link(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(const sg_link_t *)a, y = (uintptr_t)*(const sg_link_t *)b;
    return x < y ? -1 : x > y;
}

static int root_of(int *parent, int g)
{
    while (parent[g] != g) {
        parent[g] = parent[parent[g]];
        g = parent[g];
    }
    return g;
}

/* This rank's host as an index into sg_host_list(), whose order is the
 * same on every rank: one simulation, one process. */
static int host_index(void)
{
    sg_host_t self = sg_host_self(), *hosts = sg_host_list();
    int n = (int)sg_host_count(), found = -1;
    for (int i = 0; hosts && i < n && found < 0; i++)
        if (hosts[i] == self)
            found = i;
    free(hosts);
    return found;
}

/* One exchange's groups on rank 0: the hosts of group g are
 * hosts[order[start[g]] .. order[start[g + 1] - 1]]. */
typedef struct group_scan {
    const sim_links *lk;
    sg_host_t *hosts;
    int ngroups;
    int *order, *start;
    int *owner;           /* per link: the first group whose routes use it, -1 */
    int *parent;          /* per group: union-find of "shares a link with" */
    xbt_dynar_t route;
} group_scan;

/* Calls visit(ctx, link index, g) for every link of every route inside
 * group g. */
static fs_status scan_group(group_scan *s, int g, void (*visit)(group_scan *, size_t, int, void *),
                            void *ctx)
{
    for (int i = s->start[g]; i < s->start[g + 1]; i++)
        for (int j = s->start[g]; j < s->start[g + 1]; j++) {
            if (i == j)
                continue;
            xbt_dynar_reset(s->route);
            sg_host_get_route(s->hosts[s->order[i]], s->hosts[s->order[j]], s->route);
            unsigned long n = xbt_dynar_length(s->route);
            for (unsigned long k = 0; k < n; k++) {
                sg_link_t l = xbt_dynar_get_as(s->route, k, sg_link_t);
                sg_link_t *hit = bsearch(&l, s->lk->links, s->lk->nlinks, sizeof l, cmp_link);
                if (!hit)
                    return fs_error_set(FS_ERR_RUNTIME, "a route's link is not in the platform's list");
                visit(s, (size_t)(hit - s->lk->links), g, ctx);
            }
        }
    return FS_OK;
}

static void join(group_scan *s, size_t link, int g, void *ctx)
{
    int *o = &s->owner[link];
    if (*o < 0)
        *o = g;
    else
        s->parent[root_of(s->parent, *o)] = root_of(s->parent, g);
}

static void count(group_scan *s, size_t link, int g, void *ctx)
{
    ((double *)ctx)[link] += 1;
}

/* The sample of a component of m groups too large to simulate whole: every
 * k-th of them counting from rank 0's group, as evenly spread as can be,
 * and the factor of the bandwidth of every link the sample uses: the
 * sample's routes over the component's routes through it, so that each of
 * the sample's flows gets the share of a link it would have next to all
 * the others (exact when the groups are alike and their flows run
 * together, which the sampled note in the table owns up to). */
static fs_status sample_of(group_scan *s, int *flags, int root_group, int max_ranks, double **factor)
{
    int m = 0, pos = 0, size = s->start[root_group + 1] - s->start[root_group];
    for (int g = 0; g < s->ngroups; g++) {
        if (g == root_group)
            pos = m;
        m += flags[g];
    }
    int want = size > 0 && max_ranks / size > 1 ? max_ranks / size : 1, k = (m + want - 1) / want;
    double *all = calloc(s->lk->nlinks + 1, sizeof *all), *mine = calloc(s->lk->nlinks + 1, sizeof *mine);
    fs_status st = all && mine ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory");
    for (int g = 0, i = 0; g < s->ngroups && st == FS_OK; g++) {
        if (!flags[g])
            continue;
        int in_sample = (i++ - pos + m) % k == 0;
        st = scan_group(s, g, count, all);
        if (st == FS_OK && in_sample)
            st = scan_group(s, g, count, mine);
        flags[g] = in_sample;
    }
    for (size_t l = 0; st == FS_OK && l < s->lk->nlinks; l++)
        mine[l] = mine[l] > 0 ? mine[l] / all[l] : 1;
    free(all);
    if (st != FS_OK)
        free(mine);
    else
        *factor = mine;
    return st;
}

/* On rank 0, for one exchange: flags[g] for each of its groups (simulated
 * or not) and counts[] = {ranks, groups, component ranks, component
 * groups}. where: per rank, its host index then its group in each
 * exchange (stride ints); col: this exchange's. */
static fs_status component_of(sim_links *lk, const int *where, int stride, int col, int nranks,
                              int ngroups, int max_ranks, int *flags, int *counts, double **factor)
{
    fs_status st = FS_OK;
    group_scan s = {lk, sg_host_list(), ngroups, NULL, NULL, NULL, NULL, NULL};
    s.order = malloc((size_t)nranks * sizeof *s.order);
    s.start = calloc((size_t)ngroups + 1, sizeof *s.start);
    s.owner = malloc((lk->nlinks + 1) * sizeof *s.owner);
    s.parent = malloc((size_t)ngroups * sizeof *s.parent);
    int *filled = calloc((size_t)ngroups, sizeof *filled);
    if (!s.hosts || !s.order || !s.start || !s.owner || !s.parent || !filled) {
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < lk->nlinks; i++)
        s.owner[i] = -1;
    for (int g = 0; g < ngroups; g++)
        s.parent[g] = g;
    /* The ranks grouped: a counting sort by group. */
    for (int i = 0; i < nranks; i++) {
        int g = where[stride * i + col];
        if (where[stride * i] < 0 || g < 0 || g >= ngroups) {
            st = fs_error_set(FS_ERR_RUNTIME, "rank %d: no host or no group", i);
            goto done;
        }
        s.start[g + 1]++;
    }
    for (int g = 0; g < ngroups; g++)
        s.start[g + 1] += s.start[g];
    for (int i = 0; i < nranks; i++) {
        int g = where[stride * i + col];
        s.order[s.start[g] + filled[g]++] = where[stride * i];
    }
    s.route = xbt_dynar_new(sizeof(sg_link_t), NULL);
    for (int g = 0; g < ngroups && st == FS_OK; g++)
        st = scan_group(&s, g, join, NULL);
    int root_group = where[col];
    for (int g = 0; st == FS_OK && g < ngroups; g++) {
        flags[g] = root_of(s.parent, g) == root_of(s.parent, root_group);
        counts[2] += flags[g] ? s.start[g + 1] - s.start[g] : 0;
        counts[3] += flags[g];
    }
    if (st == FS_OK && max_ranks > 0 && counts[2] > max_ranks)
        st = sample_of(&s, flags, root_group, max_ranks, factor);
    for (int g = 0; st == FS_OK && g < ngroups; g++) {
        counts[0] += flags[g] ? s.start[g + 1] - s.start[g] : 0;
        counts[1] += flags[g];
    }
    xbt_dynar_free(&s.route);
done:
    free(filled);
    free(s.hosts);
    free(s.order);
    free(s.start);
    free(s.owner);
    free(s.parent);
    return st;
}

static fs_status links_new(sim_links **out)
{
    sim_links *lk = calloc(1, sizeof *lk);
    if (!lk)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    *out = lk;
    lk->links = sg_link_list();
    lk->nlinks = sg_link_count();
    lk->platform_bw = malloc((lk->nlinks + 1) * sizeof *lk->platform_bw);
    if (!lk->links || !lk->platform_bw) {
        sim_links_free(out);
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    qsort(lk->links, lk->nlinks, sizeof *lk->links, cmp_link);
    for (size_t i = 0; i < lk->nlinks; i++)
        lk->platform_bw[i] = sg_link_get_bandwidth(lk->links[i]);
    return FS_OK;
}

void sim_links_free(sim_links **p)
{
    sim_links *lk = *p;
    if (!lk)
        return;
    /* The platform as it was, for what runs next. */
    sim_links_apply(lk, -1);
    for (int e = 0; e < SIM_MAX_EXCH; e++)
        free(lk->factor[e]);
    free(lk->links);
    free(lk->platform_bw);
    free(lk);
    *p = NULL;
}

void sim_links_apply(const sim_links *lk, int e)
{
    if (!lk)
        return;
    const double *f = e >= 0 && e < SIM_MAX_EXCH ? lk->factor[e] : NULL;
    for (size_t i = 0; i < lk->nlinks; i++) {
        double bw = lk->platform_bw[i] * (f ? f[i] : 1);
        if (sg_link_get_bandwidth(lk->links[i]) != bw)
            sg_link_set_bandwidth(lk->links[i], bw);
    }
}

/* Rank 0's part: every exchange's verdict (flags and counts) from where. */
static fs_status decide(const int *where, int nranks, int nexch, const int *ngroups, int max_ranks,
                        int *verdict, sim_links **links)
{
    sim_links *lk = NULL;
    fs_status st = links_new(&lk);
    int *counts = verdict, *flags = verdict + 4 * nexch;
    for (int e = 0; e < nexch && st == FS_OK; e++) {
        st = component_of(lk, where, 1 + nexch, 1 + e, nranks, ngroups[e], max_ranks, flags, counts + 4 * e,
                          &lk->factor[e]);
        flags += ngroups[e];
    }
    int sampled = 0;
    for (int e = 0; e < nexch; e++)
        sampled |= lk && lk->factor[e] != NULL;
    if (st != FS_OK || !sampled)
        sim_links_free(&lk);
    *links = lk;
    return st;
}

fs_status sim_components_find(MPI_Comm world, int nexch, const int *group, const int *ngroups,
                              int max_ranks, sim_component *out, sim_links **links)
{
    int rank, nranks, stride = 1 + nexch, mine[1 + SIM_MAX_EXCH] = {host_index()};
    *links = NULL;
    if (MPI_Comm_rank(world, &rank) != MPI_SUCCESS || MPI_Comm_size(world, &nranks) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank/size failed");
    if (nexch < 1 || nexch > SIM_MAX_EXCH)
        return fs_error_set(FS_ERR_RUNTIME, "%d exchanges: 1 to %d only", nexch, SIM_MAX_EXCH);
    /* The verdict: four counts per exchange, then each exchange's flags. */
    int nverdict = 4 * nexch;
    for (int e = 0; e < nexch; e++) {
        mine[1 + e] = group[e];
        nverdict += ngroups[e];
    }
    fs_status st = FS_OK;
    int *where = rank == 0 ? malloc((size_t)stride * (size_t)nranks * sizeof *where) : NULL;
    int *verdict = calloc((size_t)nverdict, sizeof *verdict);
    /* A failure ends the run (MPI_Abort), so no rank needs to hear of it. */
    if (!verdict || (rank == 0 && !where)) {
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
        goto done;
    }
    if (MPI_Gather(mine, stride, MPI_INT, where, stride, MPI_INT, 0, world) != MPI_SUCCESS) {
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Gather failed");
        goto done;
    }
    if (rank == 0)
        st = decide(where, nranks, nexch, ngroups, max_ranks, verdict, links);
    if (st != FS_OK)
        goto done;
    if (MPI_Bcast(verdict, nverdict, MPI_INT, 0, world) != MPI_SUCCESS) {
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Bcast failed");
        goto done;
    }
    for (int e = 0, *flags = verdict + 4 * nexch; e < nexch; e++) {
        const int *c = verdict + 4 * e;
        out[e] = (sim_component){flags[group[e]], c[0], c[1], c[2], c[3]};
        flags += ngroups[e];
    }
done:
    free(where);
    free(verdict);
    return st;
}
