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
    uint64_t avail = fs_nodemem_meminfo_available();
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
