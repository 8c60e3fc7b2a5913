/* SPDX-License-Identifier: GPL-3.0-or-later */
/* nodemem: see nodemem.h. */
#include "config.h"

#include "core/nodemem.h"

#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/testhooks.h"

/* A cgroup limit at or above this is no limit (v1 writes 2^63 rounded
 * down to pages). */
#define NO_LIMIT ((uint64_t)1 << 60)

/* The first number in a file (a decimal count of bytes); 0 when the file
 * is missing or says "max". */
static uint64_t read_number(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    unsigned long long v = 0;
    if (fscanf(f, "%llu", &v) != 1)
        v = 0;
    fclose(f);
    return (uint64_t)v;
}

/* MemAvailable of /proc/meminfo in bytes, 0 when not there. */
static uint64_t meminfo_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            break;
    fclose(f);
    return (uint64_t)kib * 1024;
}

/* What a cgroup directory still allows: its limit less its usage (v2:
 * memory.max and memory.current; v1: memory.limit_in_bytes and
 * memory.usage_in_bytes); 0 without a limit. */
static uint64_t cgroup_room(const char *dir, const char *limit_file, const char *usage_file)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, limit_file);
    uint64_t limit = read_number(path);
    if (limit == 0 || limit >= NO_LIMIT)
        return 0;
    snprintf(path, sizeof path, "%s/%s", dir, usage_file);
    uint64_t used = read_number(path);
    return limit > used ? limit - used : 1;
}

/* The smallest room of this process's cgroup v2 and its ancestors, 0
 * without a limit. */
static uint64_t cgroup2_room(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return 0;
    char line[4096], rel[4000] = "";
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "0::", 3) == 0 && sscanf(line + 3, "%3999s", rel) == 1)
            break;
    fclose(f);
    uint64_t best = 0;
    char dir[4096];
    for (;;) {
        snprintf(dir, sizeof dir, "/sys/fs/cgroup%s", strcmp(rel, "/") == 0 ? "" : rel);
        uint64_t room = cgroup_room(dir, "memory.max", "memory.current");
        if (room && (!best || room < best))
            best = room;
        char *slash = strrchr(rel, '/');
        if (!slash || slash == rel)
            break;
        *slash = '\0';
    }
    uint64_t root = cgroup_room("/sys/fs/cgroup", "memory.max", "memory.current");
    return root && (!best || root < best) ? root : best;
}

uint64_t fs_nodemem_available(const char **limited_by)
{
    uint64_t avail = meminfo_available();
    *limited_by = "MemAvailable";
    uint64_t room = cgroup2_room();
    if (!room)
        room = cgroup_room("/sys/fs/cgroup/memory", "memory.limit_in_bytes",
                           "memory.usage_in_bytes");
    if (room && (!avail || room < avail)) {
        avail = room;
        *limited_by = "the cgroup's limit";
    }
    return avail;
}

fs_status fs_nodemem_per_rank(MPI_Comm comm, uint64_t given, int ranks_per_node, uint64_t *bytes,
                              char *source, size_t size)
{
    *bytes = given;
    if (given) {
        snprintf(source, size, "--mem-per-rank");
        return FS_OK;
    }
    MPI_Comm node = MPI_COMM_NULL;
    int local_rank = 0, local_size = 1;
    fs_status st = FS_OK;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS ||
        MPI_Comm_rank(node, &local_rank) != MPI_SUCCESS ||
        MPI_Comm_size(node, &local_size) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_split_type failed");
    if (node != MPI_COMM_NULL)
        MPI_Comm_free(&node);
    if ((st = fs_error_agree(comm, st)) != FS_OK)
        return st;
    int sharing = ranks_per_node > 0 ? ranks_per_node : local_size;
    const char *limited_by = "MemAvailable";
    /* One reader per node; the smallest share of any node counts. (Signed:
     * MPICH 4.0's MPI_MIN compares MPI_UINT64_T as signed.) */
    int64_t mine = INT64_MAX, least = 0;
    if (local_rank == 0) {
        uint64_t avail = fs_nodemem_available(&limited_by) / (uint64_t)sharing;
        mine = avail > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)avail;
    }
    if (MPI_Allreduce(&mine, &least, 1, MPI_INT64_T, MPI_MIN, comm) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Allreduce failed"));
    *bytes = (uint64_t)least;
    /* Rank 0's words: the ranks agree on the figure, which is what counts. */
    snprintf(source, size, "%s of the node over %d rank%s", limited_by, sharing,
             sharing == 1 ? "" : "s");
    return FS_OK;
}

/* The CPUs this process may run on: its affinity mask, or every online CPU
 * when it has none. */
static void own_cpus(cpu_set_t *set)
{
    CPU_ZERO(set);
    if (sched_getaffinity(0, sizeof *set, set) == 0 && CPU_COUNT(set) > 0)
        return;
    CPU_ZERO(set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < n && c < CPU_SETSIZE; c++)
        CPU_SET((int)c, set);
}

int fs_nodemem_usable_cpus(void)
{
    cpu_set_t set;
    own_cpus(&set);
    return CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1;
}

/* The CPUs this rank and the others of its node (node) may run on: the
 * union of their affinity masks. Collective over node. */
static fs_status node_cpus(MPI_Comm node, int *cpus)
{
    cpu_set_t mine, all;
    own_cpus(&mine);
    if (MPI_Allreduce(&mine, &all, (int)sizeof mine, MPI_BYTE, MPI_BOR, node) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Allreduce failed");
    *cpus = CPU_COUNT(&all);
    return FS_OK;
}

fs_status fs_nodemem_crowded(MPI_Comm comm, int ranks_per_node, int *crowded)
{
    MPI_Comm node = MPI_COMM_NULL;
    int local_size = 1, cpus = fs_testhooks_node_cpus(), mine = 0;
    fs_status st = FS_OK;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS ||
        MPI_Comm_size(node, &local_size) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_split_type failed");
    /* Every rank of a node in node_cpus or none. */
    if ((st = fs_error_agree(comm, st)) == FS_OK && !cpus)
        st = node_cpus(node, &cpus);
    if (node != MPI_COMM_NULL && MPI_Comm_free(&node) != MPI_SUCCESS && st == FS_OK)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_free failed");
    if ((st = fs_error_agree(comm, st)) != FS_OK)
        return st;
    mine = (ranks_per_node > 0 ? ranks_per_node : local_size) > cpus;
    if (MPI_Allreduce(&mine, crowded, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Allreduce failed"));
    return FS_OK;
}
