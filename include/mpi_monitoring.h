/* mpi_monitoring.h: the introspection monitoring API of seed 004 (Jeannot & Sartori, Inria
 * RR-9292, section 4.3), implemented by libmpilens-monitor.
 *
 * A program asks, while it runs, how many messages and bytes each process sent to each other
 * process of a communicator, in sessions it can suspend, continue, reset and nest.
 *
 * Error convention: every function returns MPI_SUCCESS, or one of the MPI_M_* error codes below
 * (all negative, so they never collide with MPI error classes). A failed call changes nothing.
 *
 * Rules (seed 004, 4.1): call MPI_M_init after MPI_Init and MPI_M_finalize before MPI_Finalize;
 * every function but MPI_M_get_info is collective over the session's communicator; data can be
 * read only while a session is suspended; sessions are independent and may overlap or nest;
 * a session counts every message sent between two members of its communicator, whatever
 * communicator carries it, indexed by ranks of the session's communicator; counts and bytes are
 * what each process sent (row i of a gathered matrix is what rank i sent). Counters are 64 bits.
 * All functions are thread-safe.
 *
 * What is counted (docs/monitor.md): point-to-point sends of every kind (bytes = count x type
 * size; persistent sends at MPI_Start), collectives (decomposed into the messages the library
 * really sent where Open MPI's monitoring exposes them, otherwise by their logical pattern), and
 * one-sided operations from origin to target. MPI_M_get_backend says which applies. */
#ifndef MPI_MONITORING_H
#define MPI_MONITORING_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Identifies a monitoring session in the calling process. */
typedef int MPI_M_msid;

/* Arguments */
#define MPI_M_ALL_MSID (-1)                   /* every started session (suspend, continue, reset, free) */
#define MPI_M_INT_IGNORE ((int *)0)           /* an int output not wanted */
#define MPI_M_DATA_IGNORE ((unsigned long *)0) /* an array output not wanted */

/* Kinds of communication, to combine with | */
#define MPI_M_P2P_ONLY 1
#define MPI_M_COLL_ONLY 2
#define MPI_M_OSC_ONLY 4
#define MPI_M_ALL_COMM (MPI_M_P2P_ONLY | MPI_M_COLL_ONLY | MPI_M_OSC_ONLY)

/* Error codes */
#define MPI_M_INTERNAL_FAIL (-1001)          /* an internal error occurred (malloc or a system call failed) */
#define MPI_M_MPIT_FAIL (-1002)              /* an MPI or MPI_T function failed */
#define MPI_M_MISSING_INIT (-1003)           /* no call to MPI_M_init has been done */
#define MPI_M_SESSION_STILL_ACTIVE (-1004)   /* at least one session has not been suspended */
#define MPI_M_SESSION_NOT_SUSPENDED (-1005)  /* the session has not been suspended */
#define MPI_M_INVALID_MSID (-1006)           /* no such session, or MPI_M_ALL_MSID where it is not allowed */
#define MPI_M_SESSION_OVERFLOW (-1007)       /* the maximum number of sessions has been reached */
#define MPI_M_MULTIPLE_CALL (-1008)          /* init, continue or suspend called again without its counterpart */
#define MPI_M_INVALID_ROOT (-1009)           /* root is not a rank of the session's communicator */
#define MPI_M_INVALID_ARG (-1010)            /* mpilens extension: a null pointer where one is needed, bad flags */

/* Sessions that may exist at once in a process. */
#define MPI_M_MAX_SESSIONS 1024

int MPI_M_init(void);
int MPI_M_finalize(void);

/* Creates and starts a session on comm; counts messages between any members of comm. */
int MPI_M_start(MPI_Comm comm, MPI_M_msid *msid);
int MPI_M_suspend(MPI_M_msid msid);
int MPI_M_continue(MPI_M_msid msid);
/* Sets a suspended session's data back to zero. */
int MPI_M_reset(MPI_M_msid msid);
/* Frees a suspended session. */
int MPI_M_free(MPI_M_msid msid);

/* Local. provided: the thread level the library supports (MPI_THREAD_MULTIPLE); array_size: the
 * size of the session's communicator (the length of get_data's arrays, the order of the
 * gathered square matrices). */
int MPI_M_get_info(MPI_M_msid msid, int *provided, int *array_size);

/* This process's messages and bytes sent to each rank of the session's communicator. */
int MPI_M_get_data(MPI_M_msid msid, unsigned long *msg_counts, unsigned long *msg_sizes, int flags);
/* Every process's rows, as size x size matrices in row-major order, on every process. */
int MPI_M_allgather_data(MPI_M_msid msid, unsigned long *matrix_counts, unsigned long *matrix_sizes, int flags);
/* The same matrices, on root only (other processes may pass NULL). */
int MPI_M_rootgather_data(MPI_M_msid msid, int root, unsigned long *matrix_counts, unsigned long *matrix_sizes,
                          int flags);
/* Each process writes its row to filename.<rank>.prof (rank in the session's communicator). */
int MPI_M_flush(MPI_M_msid msid, char *filename, int flags);
/* root writes the matrices to filename_counts.<rank>.prof and filename_sizes.<rank>.prof (rank in
 * MPI_COMM_WORLD). File formats: docs/monitor.md. */
int MPI_M_rootflush(MPI_M_msid msid, int root, char *filename, int flags);

/* ---- mpilens extensions ------------------------------------------------------------------- */

/* Which mechanism produced a kind of data (one of the MPI_M_*_ONLY flags) in this process. */
#define MPI_M_BACKEND_PMPI 1          /* counted at the MPI interface; collectives by logical pattern */
#define MPI_M_BACKEND_OMPI_MPIT 2     /* Open MPI's monitoring components through MPI_T: collectives
                                         as the point-to-point messages the library really sent */
int MPI_M_get_backend(int kind, int *backend);

/* A one-line English description of an MPI_M_* error code (or "success"). */
const char *MPI_M_error_string(int code);

#ifdef __cplusplus
}
#endif

#endif
