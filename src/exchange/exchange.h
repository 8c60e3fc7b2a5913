/* SPDX-License-Identifier: GPL-3.0-or-later */
/* exchange: the all-to-all redistribution between FFT passes, behind one
 * interface with one implementation file per strategy (exchange/NAME.c).
 *
 * A strategy is a table of functions chosen by name. estimate() says, from
 * arithmetic alone, what a plan for one rank would need (the dry run asks it
 * for any rank without MPI); plan() takes its sizes from the same estimate
 * and makes the buffers; execute() takes the local data in the `from` layout
 * of the redistribution and leaves it in the `to` layout, in the same buffer
 * or, when the plan has a second array, in that array: the data buffer and
 * the second array then trade places (fs_exchange_execute), so the result
 * costs no copy back; destroy() frees the plan and sets the pointer to NULL. Everything else
 * (--help, option checks, the dry run) reads the table: adding a strategy
 * means one new file and one line in the table in exchange.c (and the file
 * in Makefile.am's list of sources). */
#ifndef FS_EXCHANGE_H
#define FS_EXCHANGE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include "core/errors.h"
#include "core/layout.h"

/* Tuning shared by the strategies (each uses what applies to it). */
typedef struct fs_exchange_params {
    uint64_t seed;         /* --seed: random destination order */
    size_t packet_bytes;   /* --packet */
    int queues;            /* --queues */
    /* More ranks than cores on a node (fs_node.crowded): a rank that
     * waits for messages gives its core up between polls (fs_exchange_wait*). */
    int crowded;
} fs_exchange_params;

/* Local FFT work on one block, for strategies that overlap it with their
 * messages (pairwise). `block` is the block's box in global coordinates and
 * `data` its elements, packed row-major. A strategy may call a hook on
 * pieces of a block: sub-boxes cut along the block's first axis. pre runs on
 * a block before it is sent (the own block included), post on a block after
 * it arrived. Either may be NULL. */
typedef struct fs_block_hooks {
    /* A failure (with fs_error_set) stops the block work: the strategy
     * still finishes its messages, so no peer waits for ever, agrees the
     * status among the ranks of the exchange (fs_error_agree_shared) and
     * returns it. */
    fs_status (*pre)(void *ctx, const fs_box *block, void *data);
    fs_status (*post)(void *ctx, const fs_box *block, void *data);
    void *ctx;
    int split_axis;   /* axis the hooks never transform, to cut pieces along (-1: none) */
} fs_block_hooks;

/* What a strategy is asked to do. The plan keeps pointers to rd, params and
 * hooks: they must outlive it. */
/* A second array that several plans share (fs_exchange_args.spare): one
 * runs at a time, each leaves the other array here. Owned by whoever made
 * it (fs_exchange_spare_free); the plans only borrow it. */
typedef struct fs_spare {
    void *data;
    int64_t elems;
    size_t elem_bytes;
} fs_spare;

typedef struct fs_exchange_args {
    MPI_Comm comm;                    /* peers of rd, in comm rank order */
    const fs_redist *rd;
    size_t elem_bytes;                /* bytes per element */
    MPI_Datatype elem_type;           /* MPI type of one element */
    const fs_exchange_params *params;
    const fs_block_hooks *hooks;      /* NULL: no work to overlap */
    /* The shortest run a direct exchange sends (0: the default,
     * FS_EXCHANGE_DIRECT_MIN_RUN_BYTES); the unit tests set 1 (direct
     * wherever a strategy can) and SIZE_MAX (never). */
    size_t direct_min_run_bytes;
    /* NULL: a plan that needs a second array makes its own; else it uses
     * (and grows) this one, shared with other plans: the forward and
     * inverse exchanges of every stage then hold one second array between
     * them, not one each. */
    fs_spare *spare;
} fs_exchange_args;

/* Figures every strategy fills in during execute (accumulated). */
typedef struct fs_exchange_stats {
    uint64_t bytes_sent;      /* to other ranks */
    uint64_t bytes_received;  /* from other ranks */
    uint64_t messages_sent;   /* point-to-point messages (or collective calls) */
    uint64_t wire_bytes_sent; /* what the messages carried: xorswap sends 1.5x its blocks */
    double t_pack_s, t_comm_s, t_unpack_s;
    double t_hooks_s;         /* time in the block hooks */
    double t_hooks_overlapped_s; /* of which while messages were in flight */
    uint64_t runs;            /* times executed */
} fs_exchange_stats;

typedef struct fs_exchange {
    const struct fs_exchange_ops *ops;
    fs_exchange_args args;
    int64_t work_elems;       /* elements the data buffer passed to execute must hold */
    size_t scratch_bytes;     /* extra memory the plan holds (for memory reports) */
    /* The second array (NULL: none): execute leaves the result in it, and
     * fs_exchange_execute trades it for the caller's buffer. Owned by the
     * plan, counted in scratch_bytes; with args.spare, NULL but while
     * fs_exchange_execute runs (the spare's, counted by its owner). */
    void *second;
    int64_t second_elems;
    int shares_spare;         /* needs a second array and takes args.spare's */
    fs_exchange_stats stats;
    void *impl;               /* strategy-private state */
} fs_exchange;

/* What a plan for one rank needs, from arithmetic alone. */
typedef struct fs_exchange_estimate {
    int64_t work_elems;       /* elements the data buffer must hold */
    size_t scratch_bytes;     /* buffers the plan holds besides the data buffer */
    int64_t second_elems;     /* of which a second array of this many elements (0: none) */
    uint64_t messages;        /* messages this rank sends per execute (a collective: 1) */
} fs_exchange_estimate;

/* The fs_exchange_params a strategy reads (fs_exchange_ops.params): --help
 * names the strategies next to each option. */
#define FS_EXCHANGE_USES_PACKET 1u   /* --packet */
#define FS_EXCHANGE_USES_QUEUES 2u   /* --queues */
#define FS_EXCHANGE_USES_SEED 4u     /* --seed */

typedef struct fs_exchange_ops {
    const char *name;
    const char *summary;      /* one line for --help */
    int uses_hooks;           /* runs fs_block_hooks itself (else the caller does that work) */
    int in_place;             /* no second array: scratch is O(packet) */
    unsigned params;          /* FS_EXCHANGE_USES_* */
    /* From args alone (args->comm may be MPI_COMM_NULL: no MPI calls).
     * plan() must size its buffers by the same arithmetic. */
    void (*estimate)(const fs_exchange_args *args, fs_exchange_estimate *est);
    /* Fill x->work_elems, x->scratch_bytes (from estimate) and x->impl. */
    fs_status (*plan)(fs_exchange *x);
    /* data holds work_elems elements: `from` layout in, `to` layout out,
     * in data, or in x->second when the plan has one. */
    fs_status (*execute)(fs_exchange *x, void *data);
    void (*destroy)(fs_exchange *x);
} fs_exchange_ops;

/* The strategy table, NULL-terminated, in the order of expected speed,
 * fastest first: the default strategy takes the first that fits
 * (planner.h), --help lists them so, auto times them so. At most
 * FS_EXCHANGE_MAX_STRATEGIES. */
#define FS_EXCHANGE_MAX_STRATEGIES 32
extern const fs_exchange_ops *const fs_exchange_strategies[];

/* Find a strategy by name (NULL when unknown). */
const fs_exchange_ops *fs_exchange_find(const char *name);

/* Plan: *out is allocated here, free with fs_exchange_free(out). Not
 * collective, but every rank of args->comm must plan with the same strategy. */
fs_status fs_exchange_new(const fs_exchange_ops *ops, const fs_exchange_args *args,
                          fs_exchange **out);
/* Collective over the plan's communicator. *data (in/out) holds *elems
 * (>= x->work_elems) elements: the `from` layout in, the `to` layout out.
 * With a second array the result is left there and the arrays trade
 * places: *data and *elems become the second array's, and the plan keeps
 * the caller's buffer as its next second array (and frees it). Both come
 * from fs_buffer_alloc, so FFT plans run on either (fs_op_execute_on). */
fs_status fs_exchange_execute(fs_exchange *x, void **data, int64_t *elems);
/* Make the second array (if the plan has one) hold at least elems elements, the size of
 * the caller's buffer, so that trading places never leaves the caller a
 * smaller one. */
fs_status fs_exchange_reserve_second(fs_exchange *x, int64_t elems);
void fs_exchange_free(fs_exchange **x);
/* Free the spare's array (the struct is the caller's). */
void fs_exchange_spare_free(fs_spare *s);

/* How every strategy waits for its messages: MPI_Waitall, MPI_Waitany and
 * MPI_Waitsome, or, on a crowded node (params->crowded), MPI_Test* with
 * sched_yield between the polls (fs_wait_*, core/collective.h). MPICH's own waits spin, and a rank
 * spinning on a core that the peer it waits for needs holds that peer off
 * until the scheduler's next turn: with 3, 4 or 8 ranks on 2 cores a 256^3
 * exchange took 1.4 to 12 times as long. On a core of its own a rank spins
 * (yielding made the 2-rank pairwise exchange slower). Statuses are ignored. */
int fs_exchange_waitall(const fs_exchange *x, int n, MPI_Request *reqs);
int fs_exchange_waitany(const fs_exchange *x, int n, MPI_Request *reqs, int *index);
int fs_exchange_waitsome(const fs_exchange *x, int n, MPI_Request *reqs, int *outcount, int *indices);

/* Defaults of fs_exchange_params. */
#define FS_DEFAULT_SEED 1
#define FS_DEFAULT_PACKET_BYTES (1024 * 1024)
#define FS_DEFAULT_QUEUES 4

/* Shared by the strategies (exchange.c). */
/* The elements a plan's data buffer must hold when the strategy works in
 * the `from` and `to` layouts themselves: the larger of the two. */
int64_t fs_exchange_layout_elems(const fs_redist *rd);
/* Nonzero when every received box lands contiguously, in peer order, in the
 * storage of `to`: MPI can then receive straight into the data buffer. */
int fs_exchange_receives_in_place(const fs_redist *rd);
/* Nonzero when the own block can move inside the data buffer, from its
 * place in the `from` layout to its place in the `to` layout, instead of
 * through a send buffer: the received blocks land in place (above) and the
 * own block's runs can be moved in an order that never overwrites a run not
 * yet moved. The strategies that can then pack only the other ranks' blocks
 * (a smaller send buffer, one copy of the own block instead of two). */
int fs_exchange_own_moves_in_place(const fs_redist *rd);
/* For estimates and sizes: the same, but 0 (the own block counted in the
 * send buffer, an upper bound) when deciding would walk more than
 * FS_EXCHANGE_ESTIMATE_RUNS runs: a dry run of a long thin array has
 * billions of short runs, which the run itself moves anyway. */
#define FS_EXCHANGE_ESTIMATE_RUNS ((int64_t)1 << 22)
int fs_exchange_own_moves_in_place_bounded(const fs_redist *rd);
/* Move the own block so (after the other blocks have been packed, before
 * any receive lands in the buffer). */
void fs_exchange_move_own(const fs_exchange *x, void *data);
/* Pack every peer's send box but `skip`'s (-1: none) from `data` (from
 * layout) into sendbuf at element offsets displs[q]. */
void fs_exchange_pack_all(const fs_exchange *x, const void *data, void *sendbuf,
                          const int64_t *displs, int skip);
void fs_exchange_unpack_all(const fs_exchange *x, void *data, const void *recvbuf,
                            const int64_t *displs);
/* Direct exchanges, with a second array: the blocks go straight from their
 * runs in the data buffer to their runs in the second array, with no send
 * buffer and no packing, and the own block is copied once. Messages are cut
 * at the runs of both sides, so that each is contiguous on both (MPI's
 * single-copy path; derived types are packed through its shared-memory
 * cells): worth it when those runs are at least this long. */
#define FS_EXCHANGE_DIRECT_MIN_RUN_BYTES (64 * 1024)
/* Where messages of the block between this rank and peer q (sending: the
 * block to q; else the one from q) are cut besides packets, in bytes: the
 * shorter of the two ranks' runs of it, when at least the threshold
 * (args->direct_min_run_bytes); 0, at packets only. Both ranks compute the
 * same, so ranks that pack and ranks that send directly cut alike. */
int64_t fs_exchange_cut_bytes(const fs_exchange_args *args, int q, int sending);
/* Nonzero when every block to or from another rank is cut at runs, so the
 * rank can send and receive straight from and into its arrays. */
int fs_exchange_direct(const fs_exchange_args *args);
/* The end of the message that starts at byte off of a block of `bytes`: the
 * next multiple of packet or of cut (0: none), or the block's end; and the
 * number of messages of such a block. */
int64_t fs_exchange_piece_end(int64_t off, int64_t bytes, int64_t packet, int64_t cut);
int64_t fs_exchange_pieces(int64_t bytes, int64_t packet, int64_t cut);
/* The address of byte off of box's packed row-major copy in the storage of
 * `outer` at base; a message cut at runs is contiguous from there. */
char *fs_exchange_piece_at(const fs_exchange *x, void *base, const fs_box *box, const fs_box *outer,
                           int64_t off);
/* Copy the own block from `in` (from layout) to `out` (to layout). */
void fs_exchange_copy_own(const fs_exchange *x, const void *in, void *out);
/* The message pattern shared by xorswap: round r's partner of `rank`
 * among `n` in contention-free rounds (-1: idle this round). */
int fs_exchange_rounds(int n);
int fs_exchange_round_partner(int n, int rank, int round);
/* The packet size of the plan (--packet, capped below MPI's int counts). */
size_t fs_exchange_packet_bytes(const fs_exchange *x);
size_t fs_exchange_params_packet_bytes(const fs_exchange_params *params);
/* Record the figures of a run that moved the logical blocks with `messages`
 * messages carrying wire_bytes in all. */
void fs_exchange_count(fs_exchange *x, uint64_t messages, uint64_t wire_bytes);

#endif
