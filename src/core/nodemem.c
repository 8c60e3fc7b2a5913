/* SPDX-License-Identifier: GPL-3.0-or-later */
/* nodemem: see nodemem.h. */
#include "config.h"

#include "core/nodemem.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


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

uint64_t fs_nodemem_meminfo_available(void)
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

/* The value of `key` in a memory.stat file, in bytes; 0 when missing. */
static uint64_t stat_value(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[256], name[128];
    unsigned long long v = 0, found = 0;
    while (!found && fgets(line, sizeof line, f))
        if (sscanf(line, "%127s %llu", name, &v) == 2 && strcmp(name, key) == 0)
            found = v;
    fclose(f);
    return (uint64_t)found;
}

/* The files of a memory cgroup: v2's, or v1's memory controller's. */
typedef struct cgroup_files {
    const char *root;      /* where the hierarchy is mounted */
    const char *limit;     /* the limit */
    const char *usage;     /* what it is charged, the page cache included */
    const char *inactive;  /* memory.stat's keys: the inactive file pages */
    const char *shmem;     /* and shared memory */
} cgroup_files;

static const cgroup_files CGROUP2 = {"/sys/fs/cgroup", "memory.max", "memory.current",
                                     "inactive_file", "shmem"};
static const cgroup_files CGROUP1 = {"/sys/fs/cgroup/memory", "memory.limit_in_bytes",
                                     "memory.usage_in_bytes", "total_inactive_file",
                                     "total_shmem"};

/* What a cgroup directory still allows: its limit less its usage, of
 * which neither the inactive page cache (files read or written before,
 * which the kernel reclaims before it kills: a batch job's earlier steps)
 * nor shared memory (MPI's segments among the ranks of the node, which
 * the memory of a rank already counts) is counted; 0 without a limit. */
static uint64_t cgroup_room(const char *dir, const cgroup_files *cf)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, cf->limit);
    uint64_t limit = read_number(path);
    if (limit == 0 || limit >= NO_LIMIT)
        return 0;
    snprintf(path, sizeof path, "%s/%s", dir, cf->usage);
    uint64_t used = read_number(path);
    snprintf(path, sizeof path, "%s/memory.stat", dir);
    uint64_t cache = stat_value(path, cf->inactive) + stat_value(path, cf->shmem);
    used = used > cache ? used - cache : 0;
    return limit > used ? limit - used : 1;
}

/* This process's cgroup in the hierarchy of cf (v2: the line "0::PATH" of
 * /proc/self/cgroup; v1: the line whose controllers include memory) into
 * rel; 0 when there is none. */
static int own_cgroup(const cgroup_files *cf, char *rel, size_t size)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return 0;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        line[strcspn(line, ":")] = '\0';
        char ctrl[4096];
        snprintf(ctrl, sizeof ctrl, ",%s,", c1 + 1);
        found = cf == &CGROUP2 ? strcmp(line, "0") == 0 && c1[1] == '\0'
                               : strstr(ctrl, ",memory,") != NULL;
        if (found) {
            c2[1 + strcspn(c2 + 1, "\n")] = '\0';
            snprintf(rel, size, "%s", c2 + 1);
        }
    }
    fclose(f);
    return found && rel[0] == '/';
}

/* The smallest room of this process's cgroup and its ancestors in the
 * hierarchy of cf, 0 without a limit. */
static uint64_t cgroup_tree_room(const cgroup_files *cf)
{
    char rel[4000] = "/";
    if (!own_cgroup(cf, rel, sizeof rel))
        snprintf(rel, sizeof rel, "/");
    uint64_t best = 0;
    char dir[4096];
    for (;;) {
        snprintf(dir, sizeof dir, "%s%s", cf->root, strcmp(rel, "/") == 0 ? "" : rel);
        uint64_t room = cgroup_room(dir, cf);
        if (room && (!best || room < best))
            best = room;
        char *slash = strrchr(rel, '/');
        if (!slash || slash == rel) {
            if (strcmp(rel, "/") == 0)
                break;
            snprintf(rel, sizeof rel, "/"); /* the root last */
            continue;
        }
        *slash = '\0';
    }
    return best;
}

uint64_t fs_nodemem_available(const char **limited_by)
{
    uint64_t avail = fs_nodemem_meminfo_available();
    *limited_by = "MemAvailable";
    uint64_t room = cgroup_tree_room(&CGROUP2);
    if (!room)
        room = cgroup_tree_room(&CGROUP1);
    if (room && (!avail || room < avail)) {
        avail = room;
        *limited_by = "the cgroup's limit";
    }
    return avail;
}

uint64_t fs_nodemem_own_anon(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "RssAnon: %llu kB", &kib) == 1)
            break;
    fclose(f);
    return (uint64_t)kib * 1024;
}

/* The CPUs this process may run on: its affinity mask, or every online CPU
 * when it has none. */
void fs_nodemem_own_cpus(cpu_set_t *set)
{
    CPU_ZERO(set);
    if (sched_getaffinity(0, sizeof *set, set) == 0 && CPU_COUNT(set) > 0)
        return;
    CPU_ZERO(set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < n && c < CPU_SETSIZE; c++)
        CPU_SET((int)c, set);
}
