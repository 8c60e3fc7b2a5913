/* sim_groups: see sim_groups.h. */
#include "config.h"

#include "sim_groups.h"

#include <simgrid/host.h>
#include <simgrid/link.h>
#include <stdint.h>
#include <stdlib.h>
#include <xbt/dynar.h>

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

typedef struct route_scan {
    sg_link_t *links;     /* every link of the platform, sorted */
    size_t nlinks;
    int *owner;           /* per link: the first group whose routes use it, -1 */
    int *parent;          /* per group: union-find of "shares a link with" */
    xbt_dynar_t route;
} route_scan;

/* Joins group g with every group already seen on the route from a to b. */
static int scan_route(route_scan *r, sg_host_t a, sg_host_t b, int g)
{
    xbt_dynar_reset(r->route);
    sg_host_get_route(a, b, r->route);
    unsigned long n = xbt_dynar_length(r->route);
    for (unsigned long i = 0; i < n; i++) {
        sg_link_t l = xbt_dynar_get_as(r->route, i, sg_link_t);
        sg_link_t *hit = bsearch(&l, r->links, r->nlinks, sizeof *r->links, cmp_link);
        if (!hit)
            return -1;
        int *o = &r->owner[hit - r->links];
        if (*o < 0)
            *o = g;
        else
            r->parent[root_of(r->parent, *o)] = root_of(r->parent, g);
    }
    return 0;
}

/* On rank 0, for one exchange: in_component[g] for each of its ngroups
 * groups and the ranks in the component (*ranks). where: per rank, its
 * host index then its group in each exchange (stride ints); col: this
 * exchange's. */
static fs_status component_of(const int *where, int stride, int col, int nranks, int ngroups,
                              int *in_component, int *ranks)
{
    fs_status st = FS_OK;
    route_scan r = {sg_link_list(), sg_link_count(), NULL, NULL, NULL};
    sg_host_t *hosts = sg_host_list();
    int *order = malloc((size_t)nranks * sizeof *order), *start = calloc((size_t)ngroups + 1, sizeof *start);
    int *filled = calloc((size_t)ngroups, sizeof *filled);
    r.owner = malloc((r.nlinks ? r.nlinks : 1) * sizeof *r.owner);
    r.parent = malloc((size_t)ngroups * sizeof *r.parent);
    if (!r.links || !hosts || !order || !start || !filled || !r.owner || !r.parent) {
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
        goto done;
    }
    qsort(r.links, r.nlinks, sizeof *r.links, cmp_link);
    for (size_t i = 0; i < r.nlinks; i++)
        r.owner[i] = -1;
    for (int g = 0; g < ngroups; g++)
        r.parent[g] = g;
    /* The ranks grouped: a counting sort by group. */
    for (int i = 0; i < nranks; i++) {
        int g = where[stride * i + col];
        if (where[stride * i] < 0 || g < 0 || g >= ngroups) {
            st = fs_error_set(FS_ERR_RUNTIME, "rank %d: no host or no group", i);
            goto done;
        }
        start[g + 1]++;
    }
    for (int g = 0; g < ngroups; g++)
        start[g + 1] += start[g];
    for (int i = 0; i < nranks; i++) {
        int g = where[stride * i + col];
        order[start[g] + filled[g]++] = where[stride * i];
    }
    r.route = xbt_dynar_new(sizeof(sg_link_t), NULL);
    for (int g = 0; g < ngroups && st == FS_OK; g++)
        for (int i = start[g]; i < start[g + 1] && st == FS_OK; i++)
            for (int j = start[g]; j < start[g + 1] && st == FS_OK; j++)
                if (i != j && scan_route(&r, hosts[order[i]], hosts[order[j]], g))
                    st = fs_error_set(FS_ERR_RUNTIME, "a route's link is not in the platform's list");
    xbt_dynar_free(&r.route);
    *ranks = 0;
    for (int g = 0; g < ngroups; g++) {
        in_component[g] = root_of(r.parent, g) == root_of(r.parent, where[col]);
        *ranks += in_component[g] ? start[g + 1] - start[g] : 0;
    }
done:
    free(filled);
    free(r.links);
    free(hosts);
    free(order);
    free(start);
    free(r.owner);
    free(r.parent);
    return st;
}

fs_status sim_components_find(MPI_Comm world, int nexch, const int *group, const int *ngroups,
                              sim_component *out)
{
    int rank, nranks, stride = 1 + nexch, mine[1 + SIM_MAX_EXCH] = {host_index()};
    if (MPI_Comm_rank(world, &rank) != MPI_SUCCESS || MPI_Comm_size(world, &nranks) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank/size failed");
    if (nexch < 1 || nexch > SIM_MAX_EXCH)
        return fs_error_set(FS_ERR_RUNTIME, "%d exchanges: 1 to %d only", nexch, SIM_MAX_EXCH);
    /* The verdict: ok, the ranks in each component, each exchange's flags. */
    int nverdict = 1 + nexch;
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
    verdict[0] = 1;
    for (int e = 0, *flags = verdict + 1 + nexch; rank == 0 && e < nexch && st == FS_OK; e++) {
        st = component_of(where, stride, 1 + e, nranks, ngroups[e], flags, &verdict[1 + e]);
        flags += ngroups[e];
    }
    if (st != FS_OK)
        goto done;
    if (MPI_Bcast(verdict, nverdict, MPI_INT, 0, world) != MPI_SUCCESS) {
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Bcast failed");
        goto done;
    }
    for (int e = 0, *flags = verdict + 1 + nexch; e < nexch; e++) {
        out[e] = (sim_component){flags[group[e]], verdict[1 + e], 0};
        for (int g = 0; g < ngroups[e]; g++)
            out[e].groups += flags[g];
        flags += ngroups[e];
    }
done:
    free(where);
    free(verdict);
    return st;
}
