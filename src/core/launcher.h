/* SPDX-License-Identifier: GPL-3.0-or-later */
/* launcher: what the program that started the ranks (MPICH's mpiexec,
 * Open MPI's mpirun, Slurm's srun, Cray's PALS) tells a rank, and how a
 * rank ends the whole job with a chosen exit status.
 *
 * Owns the reading of the launchers' variables (which one started this
 * process, and this process's rank before MPI_Init), the connection to the
 * launcher an interrupted rank uses, the thread that ends the job where that
 * takes a library call, and the note by which only one rank of a node
 * speaks for an ending job.
 *
 * How a job is ended with a status, by launcher:
 *  - hydra (MPICH's mpiexec; PMI-1 on PMI_FD): the "cmd=abort exitcode=N"
 *    line MPICH's MPI_Abort writes, by one write(2), from the handler.
 *  - PMIx (Open MPI's mpirun, srun --mpi=pmix): PMIx_Abort(N) of the PMIx
 *    library the MPI loaded (MPI_Abort(N) when there is none), called by a
 *    thread of this module that the handler wakes through a pipe: neither is
 *    safe in a signal handler.
 *  - Slurm (srun --mpi=pmi2, or no PMI the program can use): srun leaves
 *    the other tasks running when one dies, and pmi2's abort kills the step
 *    with SIGKILL (status 137), so the rank asks slurmctld to send its
 *    signal to every task of the step (scancel --signal=SIG JOB.STEP) and
 *    dies of it; srun then ends with 128 + signal. A status without a
 *    signal (the watchdog of MPI_Finalize) needs nothing: every rank exits
 *    with it and srun reports the largest.
 *  - otherwise: nothing is asked; the caller dies of the signal or exits.
 *
 * A launcher can also vanish without ending its ranks: MPICH 4.0's mpiexec
 * killed while it hangs in start-up (its proxy then waits for ranks that
 * wait for it), Open MPI 4.1's mpirun on a second SIGTERM within 5 s (as
 * GNU timeout sends it: to mpirun and to its process group), which exits
 * at once and leaves its ranks to die of the lost PMIx server a second
 * later, without a word. fs_launcher_gone tells, from the rank's parent
 * (the launcher's process on the node, as at the start) and hydra's
 * control connection (HYDI_CONTROL_FD, inherited from the proxy; it hangs
 * up when mpiexec ends). */
#ifndef FS_LAUNCHER_H
#define FS_LAUNCHER_H

typedef enum fs_launcher_kind {
    FS_LAUNCHER_NONE,       /* started alone (a singleton) */
    FS_LAUNCHER_HYDRA,      /* MPICH's mpiexec: PMI_FD, PMI_RANK */
    FS_LAUNCHER_PMIX,       /* Open MPI's mpirun or srun --mpi=pmix: PMIX_RANK */
    FS_LAUNCHER_SLURM_PMI2, /* srun --mpi=pmi2: PMI_FD, PMI_RANK, SLURM_PROCID */
    FS_LAUNCHER_SLURM,      /* srun without a PMI the program can use */
    FS_LAUNCHER_PALS,       /* Cray's PALS: PALS_RANKID */
    FS_LAUNCHER_OTHER,      /* a rank variable of unknown origin */
} fs_launcher_kind;

/* Reads the environment once (before MPI_Init: no threads yet). */
void fs_launcher_detect(void);

/* Which launcher started this process (fs_launcher_detect's). */
fs_launcher_kind fs_launcher_kind_of(void);

/* This process's rank as its launcher set it before MPI_Init, or -1 when no
 * launcher's variable names it (started alone, or by an unknown launcher). */
int fs_launcher_rank(void);

/* Once MPI_Init has returned: what ending the job needs (the thread of the
 * PMIx call). Returns 0, or -1 when the job cannot be ended through the
 * launcher (fs_launcher_end then returns at once). */
int fs_launcher_arm(void);

/* Just before MPI_Finalize: a copy of the launcher's connection that
 * MPI_Finalize does not close, for fs_launcher_end from the watchdog;
 * fs_launcher_finalized closes it. */
void fs_launcher_keep(void);
void fs_launcher_finalized(void);

/* Async-signal-safe: ask the launcher to end the whole job with status
 * (sig: the signal that ends it, else 0) and wait up to wait_s seconds for
 * it to do so. Returns when it cannot be asked or did not act in time, and
 * at once under Slurm (the caller then dies of sig, or exits). */
void fs_launcher_end(int status, int sig, unsigned wait_s);

/* 1 where the launcher reports a rank's nonzero exit in lines of its own
 * but ends the job quietly with the status fs_launcher_end asks for (PMIx:
 * Open MPI's mpirun). */
int fs_launcher_reports_exits(void);

/* Async-signal-safe: 1 if the launcher that started this process is gone
 * (never for a process started alone). */
int fs_launcher_gone(void);

/* Async-signal-safe: where the line of an ending job goes: standard error,
 * or, once the launcher that read it through a pipe is gone, a copy of the
 * launcher's own standard error opened at the start (where it wrote what
 * the ranks said). */
int fs_launcher_message_fd(void);

/* Async-signal-safe: 1 if this process is the first of its node to speak
 * for the job's end (it then holds the note until it ends), 0 if another
 * rank of the node already did. The note is an abstract socket: nothing is
 * left behind. */
int fs_launcher_claim_message(void);

#endif
