/** \file mpi_monitoring.h
 * \brief The introspection monitoring API of seed 004 (Jeannot & Sartori, Inria RR-9292,
 * section 4.3), implemented by libmpilens-monitor.
 *
 * Status convention (the same words in every mpilens public header and in docs/CONTRIBUTING.md):
 * every function returns its library's status type, except `*_status_string`, which names a
 * status. `*_OK` is 0 and means success; every other value names what went wrong. A function
 * writes its outputs (what its pointer parameters point to) only when it returns `*_OK`: after
 * an error, everything the caller owns is as it was. Getters follow the same rule: they write the
 * value through a pointer and return the status, a null pointer being `*_ERR_ARG`.
 * `*_status_string` names every status of its library, and "unknown status" for a value that is
 * none. The monitoring API, mpi_monitoring.h, keeps the seed's convention instead: `MPI_SUCCESS`
 * or a negative `MPI_M_*` code, which `MPI_M_error_string` names.
 *
 * The seed's convention, kept exactly: every function returns MPI_SUCCESS, or one of the MPI_M_*
 * error codes below (all negative, so they never collide with MPI error classes); a failed call
 * changes nothing. MPI_M_error_string() names a code.
 *
 * A program asks, while it runs, how many messages and bytes each process sent to each other
 * process of a communicator, in sessions it can suspend, continue, reset and nest.
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
 * one-sided operations from origin to target. MPI_M_get_backend() says which applies. */
#ifndef MPI_MONITORING_H
#define MPI_MONITORING_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Identifies a monitoring session in the calling process. */
typedef int MPI_M_msid;

/* Arguments */
#define MPI_M_ALL_MSID (-1)                    /**< every started session (suspend, continue, reset, free) */
#define MPI_M_INT_IGNORE ((int *)0)            /**< an int output not wanted */
#define MPI_M_DATA_IGNORE ((unsigned long *)0) /**< an array output not wanted */

/* Kinds of communication, to combine with | */
#define MPI_M_P2P_ONLY 1  /**< point-to-point messages */
#define MPI_M_COLL_ONLY 2 /**< collective operations */
#define MPI_M_OSC_ONLY 4  /**< one-sided operations */
/** every kind of communication */
#define MPI_M_ALL_COMM (MPI_M_P2P_ONLY | MPI_M_COLL_ONLY | MPI_M_OSC_ONLY)

/* Error codes */
#define MPI_M_INTERNAL_FAIL (-1001)         /**< an internal error occurred (malloc or a system call failed) */
#define MPI_M_MPIT_FAIL (-1002)             /**< an MPI or MPI_T function failed, or MPI is finalized */
#define MPI_M_MISSING_INIT (-1003)          /**< no call to MPI_M_init has been done */
#define MPI_M_SESSION_STILL_ACTIVE (-1004)  /**< at least one session has not been suspended */
#define MPI_M_SESSION_NOT_SUSPENDED (-1005) /**< the session has not been suspended */
#define MPI_M_INVALID_MSID (-1006)          /**< no such session, or MPI_M_ALL_MSID where it is not allowed */
#define MPI_M_SESSION_OVERFLOW (-1007)      /**< the maximum number of sessions has been reached */
#define MPI_M_MULTIPLE_CALL (-1008)         /**< init, continue or suspend called again without its counterpart */
#define MPI_M_INVALID_ROOT (-1009)          /**< root is not a rank of the session's communicator */
#define MPI_M_INVALID_ARG (-1010)           /**< mpilens extension: a null pointer where one is needed, bad flags */

/** Sessions that may exist at once in a process. */
#define MPI_M_MAX_SESSIONS 1024

/** \brief Initialises monitoring, after MPI_Init. Collective over MPI_COMM_WORLD.
 * \return MPI_SUCCESS; MPI_M_MULTIPLE_CALL, MPI_M_MPIT_FAIL, MPI_M_INTERNAL_FAIL */
int MPI_M_init(void);

/** \brief Ends monitoring, before MPI_Finalize; frees every session. Collective over
 * MPI_COMM_WORLD.
 * \return MPI_SUCCESS; MPI_M_MISSING_INIT, MPI_M_SESSION_STILL_ACTIVE, MPI_M_MPIT_FAIL */
int MPI_M_finalize(void);

/** \brief Creates and starts a session on comm; it counts messages between any members of comm.
 * \param comm the communicator whose members' messages the session counts
 * \param msid receives the session's identifier
 * \return MPI_SUCCESS; MPI_M_MISSING_INIT, MPI_M_SESSION_OVERFLOW, MPI_M_INVALID_ARG,
 *         MPI_M_MPIT_FAIL, MPI_M_INTERNAL_FAIL */
int MPI_M_start(MPI_Comm comm, MPI_M_msid *msid);

/** \brief Suspends a session: it stops counting, and its data can be read.
 * \param msid the session, or MPI_M_ALL_MSID
 * \return MPI_SUCCESS; MPI_M_MISSING_INIT, MPI_M_INVALID_MSID, MPI_M_MULTIPLE_CALL,
 *         MPI_M_MPIT_FAIL, MPI_M_INTERNAL_FAIL */
int MPI_M_suspend(MPI_M_msid msid);

/** \brief Continues a suspended session: it counts again, adding to its data.
 * \param msid the session, or MPI_M_ALL_MSID
 * \return MPI_SUCCESS; MPI_M_MISSING_INIT, MPI_M_INVALID_MSID, MPI_M_MULTIPLE_CALL,
 *         MPI_M_MPIT_FAIL, MPI_M_INTERNAL_FAIL */
int MPI_M_continue(MPI_M_msid msid);

/** \brief Sets a suspended session's data back to zero.
 * \param msid the session, or MPI_M_ALL_MSID
 * \return MPI_SUCCESS; MPI_M_MISSING_INIT, MPI_M_INVALID_MSID, MPI_M_SESSION_NOT_SUSPENDED */
int MPI_M_reset(MPI_M_msid msid);

/** \brief Frees a suspended session.
 * \param msid the session, or MPI_M_ALL_MSID
 * \return MPI_SUCCESS; MPI_M_MISSING_INIT, MPI_M_INVALID_MSID, MPI_M_SESSION_NOT_SUSPENDED */
int MPI_M_free(MPI_M_msid msid);

/** \brief What a session gives. Local.
 * \param msid the session
 * \param provided receives the thread level the library supports (MPI_THREAD_MULTIPLE), or
 *        MPI_M_INT_IGNORE
 * \param array_size receives the size of the session's communicator (the length of get_data's
 *        arrays, the order of the gathered square matrices), or MPI_M_INT_IGNORE
 * \return MPI_SUCCESS; MPI_M_MISSING_INIT, MPI_M_INVALID_MSID */
int MPI_M_get_info(MPI_M_msid msid, int *provided, int *array_size);

/** \brief This process's messages and bytes sent to each rank of the session's communicator.
 * \param msid the suspended session
 * \param msg_counts receives the message counts (array_size entries), or MPI_M_DATA_IGNORE
 * \param msg_sizes receives the bytes (array_size entries), or MPI_M_DATA_IGNORE
 * \param flags the kinds to count: MPI_M_P2P_ONLY, MPI_M_COLL_ONLY, MPI_M_OSC_ONLY combined with |
 * \return MPI_SUCCESS; MPI_M_MISSING_INIT, MPI_M_INVALID_MSID, MPI_M_SESSION_NOT_SUSPENDED,
 *         MPI_M_INVALID_ARG */
int MPI_M_get_data(MPI_M_msid msid, unsigned long *msg_counts, unsigned long *msg_sizes, int flags);

/** \brief Every process's rows, as size x size matrices in row-major order, on every process.
 * \param msid the suspended session
 * \param matrix_counts receives the message counts, or MPI_M_DATA_IGNORE
 * \param matrix_sizes receives the bytes, or MPI_M_DATA_IGNORE
 * \param flags the kinds to count, as for MPI_M_get_data()
 * \return MPI_SUCCESS; MPI_M_MISSING_INIT, MPI_M_INVALID_MSID, MPI_M_SESSION_NOT_SUSPENDED,
 *         MPI_M_INVALID_ARG, MPI_M_MPIT_FAIL, MPI_M_INTERNAL_FAIL */
int MPI_M_allgather_data(MPI_M_msid msid, unsigned long *matrix_counts, unsigned long *matrix_sizes, int flags);

/** \brief The matrices of MPI_M_allgather_data(), on root only.
 * \param msid the suspended session
 * \param root the rank, in the session's communicator, that receives them
 * \param matrix_counts receives the message counts on root, or MPI_M_DATA_IGNORE (other processes
 *        may pass NULL)
 * \param matrix_sizes receives the bytes on root, or MPI_M_DATA_IGNORE (other processes may pass
 *        NULL)
 * \param flags the kinds to count, as for MPI_M_get_data()
 * \return MPI_SUCCESS; MPI_M_MISSING_INIT, MPI_M_INVALID_MSID, MPI_M_SESSION_NOT_SUSPENDED,
 *         MPI_M_INVALID_ROOT, MPI_M_INVALID_ARG, MPI_M_MPIT_FAIL, MPI_M_INTERNAL_FAIL */
int MPI_M_rootgather_data(MPI_M_msid msid, int root, unsigned long *matrix_counts, unsigned long *matrix_sizes,
                          int flags);

/** \brief Each process writes its row to `filename.<rank>.prof` (rank in the session's
 * communicator). File formats: docs/monitor.md.
 * \param msid the suspended session
 * \param filename the files' prefix
 * \param flags the kinds to count, as for MPI_M_get_data()
 * \return MPI_SUCCESS; MPI_M_MISSING_INIT, MPI_M_INVALID_MSID, MPI_M_SESSION_NOT_SUSPENDED,
 *         MPI_M_INVALID_ARG, MPI_M_INTERNAL_FAIL */
int MPI_M_flush(MPI_M_msid msid, char *filename, int flags);

/** \brief root writes the matrices to `filename_counts.<rank>.prof` and `filename_sizes.<rank>.prof`
 * (rank in MPI_COMM_WORLD). File formats: docs/monitor.md.
 * \param msid the suspended session
 * \param root the rank, in the session's communicator, that writes
 * \param filename the files' prefix
 * \param flags the kinds to count, as for MPI_M_get_data()
 * \return MPI_SUCCESS; MPI_M_MISSING_INIT, MPI_M_INVALID_MSID, MPI_M_SESSION_NOT_SUSPENDED,
 *         MPI_M_INVALID_ROOT, MPI_M_INVALID_ARG, MPI_M_MPIT_FAIL, MPI_M_INTERNAL_FAIL */
int MPI_M_rootflush(MPI_M_msid msid, int root, char *filename, int flags);

/* ---- mpilens extensions ------------------------------------------------------------------- */

/* Which mechanism produced a kind of data (one of the MPI_M_*_ONLY flags) in this process. */
#define MPI_M_BACKEND_PMPI 1 /**< counted at the MPI interface; collectives by logical pattern */
#define MPI_M_BACKEND_OMPI_MPIT                                                                                        \
    2 /**< Open MPI's monitoring components through MPI_T: collectives
                                       as the point-to-point messages the library really sent */

/** \brief Which mechanism produces a kind of data in this process (an mpilens extension).
 * \param kind one of MPI_M_P2P_ONLY, MPI_M_COLL_ONLY, MPI_M_OSC_ONLY
 * \param backend receives MPI_M_BACKEND_PMPI or MPI_M_BACKEND_OMPI_MPIT
 * \return MPI_SUCCESS; MPI_M_MISSING_INIT, MPI_M_INVALID_ARG */
int MPI_M_get_backend(int kind, int *backend);

/** \brief Names an MPI_M_* error code (an mpilens extension).
 * \param code MPI_SUCCESS or an MPI_M_* error code
 * \return a one-line English description ("success" for MPI_SUCCESS) */
const char *MPI_M_error_string(int code);

#ifdef __cplusplus
}
#endif

#endif
