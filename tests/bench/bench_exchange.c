/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bench_exchange: the exchange strategies alone, on the slab redistribution
 * fftshard does for a given shape (axis 0 split -> axis 1 split), next to
 * MPI_Alltoall on already packed equal blocks, out of place and with
 * MPI_IN_PLACE, MPI_Alltoallw with subarray types straight from the array,
 * and a memcpy of the local array.
 *
 *   mpiexec -n P bench_exchange [SHAPE [REPEATS [PACKET]]]   (default 256x256x256 5 1M)
 *
 * Prints one line per method: best time over the repeats (slowest rank),
 * effective bandwidth (bytes every rank sends to the others / time) and the
 * ratio to MPI_Alltoall with MPI_IN_PLACE. Complex double elements. Every
 * buffer, the references' included, comes from fs_buffer_alloc as
 * fftshard's do: huge pages make MPI's copies faster here, and a comparison
 * where only one side has them measures the pages, not the method. */
#include "config.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/exchange.h"
#include "core/buffer.h"
#include "core/layout.h"
#include "options.h"

static double slowest(MPI_Comm comm, double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, comm);
    return m;
}

/* Box `b` inside the storage of box `in`, as an MPI subarray of complex
 * doubles. */
static MPI_Datatype subarray(const fs_box *b, const fs_box *in)
{
    int sizes[FS_LAYOUT_MAX_DIMS], sub[FS_LAYOUT_MAX_DIMS], starts[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < in->ndim; k++) {
        sizes[k] = (int)(in->count[k] ? in->count[k] : 1);
        sub[k] = (int)b->count[k];
        starts[k] = (int)(b->start[k] - in->start[k]);
    }
    MPI_Datatype t;
    if (fs_box_elems(b) == 0) {
        MPI_Type_contiguous(0, MPI_C_DOUBLE_COMPLEX, &t);
    } else {
        MPI_Type_create_subarray(in->ndim, sizes, sub, starts, MPI_ORDER_C, MPI_C_DOUBLE_COMPLEX, &t);
    }
    MPI_Type_commit(&t);
    return t;
}

/* MPI_Alltoallw with subarray types: MPI moves the boxes straight from the
 * `from` array into a `to` array (out of place), packing them itself. Best
 * time over the repeats. */
static double alltoallw_time(MPI_Comm comm, const fs_redist *rd, int repeats)
{
    int P = rd->npeers;
    size_t eb = 16;
    int64_t nf = fs_box_elems(&rd->from), nt = fs_box_elems(&rd->to);
    size_t a_bytes = (size_t)(nf ? nf : 1) * eb, b_bytes = (size_t)(nt ? nt : 1) * eb;
    char *a = fs_buffer_alloc(a_bytes), *b = fs_buffer_alloc(b_bytes);
    memset(a, 1, a_bytes);
    memset(b, 2, b_bytes);
    MPI_Datatype *st = malloc((size_t)P * sizeof *st), *rt = malloc((size_t)P * sizeof *rt);
    int *ones = malloc((size_t)P * sizeof(int)), *zeros = calloc((size_t)P, sizeof(int));
    for (int q = 0; q < P; q++) {
        st[q] = subarray(&rd->send[q], &rd->from);
        rt[q] = subarray(&rd->recv[q], &rd->to);
        ones[q] = 1;
    }
    double best = 1e30;
    for (int i = 0; i < repeats; i++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        MPI_Alltoallw(a, ones, zeros, st, b, ones, zeros, rt, comm);
        double t = slowest(comm, MPI_Wtime() - t0);
        best = t < best ? t : best;
    }
    for (int q = 0; q < P; q++) {
        MPI_Type_free(&st[q]);
        MPI_Type_free(&rt[q]);
    }
    free(st);
    free(rt);
    free(ones);
    free(zeros);
    fs_buffer_free(a);
    fs_buffer_free(b);
    return best;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int rank, P;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    int64_t shape[FS_LAYOUT_MAX_DIMS] = {256, 256, 256};
    int ndim = 3, repeats = 5;
    uint64_t packet = FS_DEFAULT_PACKET_BYTES;
    if (argc > 1 && (ndim = fs_parse_shape(argv[1], shape)) < 2) {
        if (rank == 0)
            fprintf(stderr, "bench_exchange: '%s': expected a shape of 2 or more axes\n", argv[1]);
        MPI_Abort(comm, 2);
    }
    if (argc > 2)
        repeats = atoi(argv[2]) > 0 ? atoi(argv[2]) : 1;
    if (argc > 3 && fs_parse_bytes(argv[3], &packet) != 0)
        MPI_Abort(comm, 2);
    size_t eb = 16;

    fs_box *from_all = calloc((size_t)P, sizeof *from_all), *to_all = calloc((size_t)P, sizeof *to_all);
    for (int p = 0; p < P; p++) {
        from_all[p] = fs_box_split(ndim, shape, 0, P, p);
        to_all[p] = fs_box_split(ndim, shape, 1, P, p);
    }
    fs_redist *rd = fs_redist_new(P, rank, from_all, to_all);
    double sent = (double)(rd->send_total - rd->send_elems[rank]) * (double)eb, sent_max;
    MPI_Allreduce(&sent, &sent_max, 1, MPI_DOUBLE, MPI_MAX, comm);
    int64_t local = fs_box_elems(&rd->from) > fs_box_elems(&rd->to) ? fs_box_elems(&rd->from)
                                                                    : fs_box_elems(&rd->to);
    char shape_text[128];
    fs_format_shape(ndim, shape, shape_text, sizeof shape_text);
    if (rank == 0)
        printf("# bench_exchange %s complex128 on %d ranks, %.1f MiB local array, packet %llu, best of %d\n"
               "%-22s %10s %10s %10s %14s\n",
               shape_text, P, (double)local * (double)eb / 1048576.0, (unsigned long long)packet,
               repeats, "method", "seconds", "GB/s", "x inplace", "scratch MiB");

    /* References first: MPI_Alltoall on equal packed blocks of the largest
     * block size, then memcpy. */
    int64_t block = 0;
    for (int q = 0; q < P; q++) {
        if (rd->send_elems[q] > block)
            block = rd->send_elems[q];
        if (rd->recv_elems[q] > block)
            block = rd->recv_elems[q];
    }
    int64_t max_block;
    MPI_Allreduce(&block, &max_block, 1, MPI_INT64_T, MPI_MAX, comm);
    /* The allocator fftshard's buffers come from (huge pages where advised). */
    size_t packed_bytes = (size_t)(max_block * P) * eb;
    char *a = fs_buffer_alloc(packed_bytes), *b = fs_buffer_alloc(packed_bytes);
    memset(a, 1, packed_bytes);
    memset(b, 2, packed_bytes);
    double t_inplace = 1e30, t_outplace = 1e30, t_memcpy = 1e30;
    for (int i = 0; i < repeats; i++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        MPI_Alltoall(a, (int)max_block, MPI_C_DOUBLE_COMPLEX, b, (int)max_block, MPI_C_DOUBLE_COMPLEX, comm);
        double t = slowest(comm, MPI_Wtime() - t0);
        t_outplace = t < t_outplace ? t : t_outplace;
        MPI_Barrier(comm);
        t0 = MPI_Wtime();
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, (int)max_block, MPI_C_DOUBLE_COMPLEX, comm);
        t = slowest(comm, MPI_Wtime() - t0);
        t_inplace = t < t_inplace ? t : t_inplace;
        t0 = MPI_Wtime();
        memcpy(b, a, (size_t)local * eb);
        t = slowest(comm, MPI_Wtime() - t0);
        t_memcpy = t < t_memcpy ? t : t_memcpy;
    }
    fs_buffer_free(a);
    fs_buffer_free(b);
    double t_typed = alltoallw_time(comm, rd, repeats);
    if (rank == 0) {
        printf("%-22s %10.4f %10.3f %10.2f %14s\n", "MPI_Alltoall in place", t_inplace,
               sent_max / t_inplace / 1e9, 1.0, "0");
        printf("%-22s %10.4f %10.3f %10.2f %14.1f\n", "MPI_Alltoall packed", t_outplace,
               sent_max / t_outplace / 1e9, t_inplace / t_outplace,
               (double)(max_block * P) * (double)eb / 1048576.0);
        printf("%-22s %10.4f %10.3f %10.2f %14.1f\n", "MPI_Alltoallw types", t_typed,
               sent_max / t_typed / 1e9, t_inplace / t_typed, (double)local * (double)eb / 1048576.0);
        printf("%-22s %10.4f %10.3f %10s %14s\n", "memcpy local array", t_memcpy,
               (double)local * (double)eb / t_memcpy / 1e9, "-", "-");
    }

    fs_exchange_params params = {.seed = FS_DEFAULT_SEED, .packet_bytes = (size_t)packet,
                                 .queues = FS_DEFAULT_QUEUES};
    for (int s = 0; fs_exchange_strategies[s]; s++) {
        fs_exchange_args args = {comm, rd, eb, MPI_C_DOUBLE_COMPLEX, &params, NULL, 0};
        fs_exchange *x = NULL;
        if (fs_exchange_new(fs_exchange_strategies[s], &args, &x) != FS_OK) {
            fprintf(stderr, "bench_exchange: %s: %s\n", fs_exchange_strategies[s]->name,
                    fs_error_message());
            MPI_Abort(comm, 1);
        }
        int64_t elems = x->work_elems;
        void *data = fs_buffer_alloc((size_t)elems * eb);
        memset(data, 3, (size_t)elems * eb);
        double best = 1e30;
        for (int i = 0; i < repeats; i++) {
            MPI_Barrier(comm);
            double t0 = MPI_Wtime();
            /* A strategy with a second array trades it for data: the
             * result stays where it landed, as in fftshard. */
            fs_exchange_execute(x, &data, &elems);
            double t = slowest(comm, MPI_Wtime() - t0);
            best = t < best ? t : best;
        }
        double scratch = (double)x->scratch_bytes, scratch_max;
        MPI_Reduce(&scratch, &scratch_max, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
        double parts[3] = {x->stats.t_pack_s / repeats, x->stats.t_comm_s / repeats,
                           x->stats.t_unpack_s / repeats}, parts_max[3];
        MPI_Reduce(parts, parts_max, 3, MPI_DOUBLE, MPI_MAX, 0, comm);
        if (rank == 0)
            printf("%-22s %10.4f %10.3f %10.2f %14.1f   pack %.4f comm %.4f unpack %.4f\n",
                   fs_exchange_strategies[s]->name, best, sent_max / best / 1e9, t_inplace / best,
                   scratch_max / 1048576.0, parts_max[0], parts_max[1], parts_max[2]);
        fs_buffer_free(data);
        fs_exchange_free(&x);
    }
    fs_redist_free(&rd);
    free(from_all);
    free(to_all);
    MPI_Finalize();
    return 0;
}
