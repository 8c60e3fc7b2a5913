/* exchange: the all-to-all redistribution between FFT passes, behind one
 * interface with one implementation file per strategy (exchange_*.c).
 *
 * A strategy is a table of functions chosen by name. plan() looks at the
 * redistribution once and says how large the working buffer must be;
 * execute() takes the local data in the `from` layout of the redistribution
 * and leaves it in the `to` layout in the same buffer; destroy() frees the
 * plan and sets the pointer to NULL. Adding a strategy means one new file and
 * one line in the table in exchange.c. */
#ifndef FS_EXCHANGE_H
#define FS_EXCHANGE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include "errors.h"
#include "layout.h"

/* Tuning shared by the strategies (each uses what applies to it). */
typedef struct fs_exchange_params {
    uint64_t seed;         /* --seed: random destination order */
    size_t packet_bytes;   /* --packet */
    int queues;            /* --queues */
} fs_exchange_params;

/* What a strategy is asked to do. The plan keeps pointers to rd and params:
 * they must outlive it. */
typedef struct fs_exchange_args {
    MPI_Comm comm;                    /* peers of rd, in comm rank order */
    const fs_redist *rd;
    size_t elem_bytes;                /* bytes per element */
    MPI_Datatype elem_type;           /* MPI type of one element */
    const fs_exchange_params *params;
} fs_exchange_args;

/* Figures every strategy fills in during execute (accumulated). */
typedef struct fs_exchange_stats {
    uint64_t bytes_sent;      /* to other ranks */
    uint64_t bytes_received;  /* from other ranks */
    double t_pack_s, t_comm_s, t_unpack_s;
} fs_exchange_stats;

typedef struct fs_exchange {
    const struct fs_exchange_ops *ops;
    fs_exchange_args args;
    int64_t work_elems;       /* elements the data buffer passed to execute must hold */
    size_t scratch_bytes;     /* extra memory the plan holds (for memory reports) */
    fs_exchange_stats stats;
    void *impl;               /* strategy-private state */
} fs_exchange;

typedef struct fs_exchange_ops {
    const char *name;
    const char *summary;      /* one line for --help and the man page */
    /* Fill x->work_elems, x->scratch_bytes and x->impl. */
    fs_status (*plan)(fs_exchange *x);
    /* data holds work_elems elements: `from` layout in, `to` layout out. */
    fs_status (*execute)(fs_exchange *x, void *data);
    void (*destroy)(fs_exchange *x);
} fs_exchange_ops;

/* The strategy table: NULL-terminated. */
extern const fs_exchange_ops *const fs_exchange_strategies[];

/* Find a strategy by name (NULL when unknown). */
const fs_exchange_ops *fs_exchange_find(const char *name);

/* Plan: *out is allocated here, free with fs_exchange_free(out). Not
 * collective, but every rank of args->comm must plan with the same strategy. */
fs_status fs_exchange_new(const fs_exchange_ops *ops, const fs_exchange_args *args,
                          fs_exchange **out);
/* Collective over the plan's communicator. */
fs_status fs_exchange_execute(fs_exchange *x, void *data);
void fs_exchange_free(fs_exchange **x);

/* Strategies. */
extern const fs_exchange_ops fs_exchange_alltoall;

#endif
