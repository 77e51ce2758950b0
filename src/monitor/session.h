/* The session engine's internal entry points, used by the API (session.c, gather.c) and the
 * whole-run mode (wholerun.c). `internal` sessions belong to the library itself: MPI_M_ALL_MSID
 * and the program's msids never reach them. */
#ifndef MPILENS_SESSION_H
#define MPILENS_SESSION_H

#include <mpi.h>

int ml_session_start(MPI_Comm comm, int internal, int *id);
int ml_session_suspend(int id, int internal);
int ml_session_continue(int id, int internal);
int ml_session_free_internal(int id);

/* A process's row of a session: values[0..size) messages, values[size..2 size) bytes (malloc'ed:
 * the caller frees it); comm and rank are the session's own. */
typedef struct {
    unsigned long *values;
    int size, rank;
    MPI_Comm comm;
} ml_session_row_t;

/* Checks a session can be read with these flags, then fills row (only on success). */
int ml_session_row(int id, int internal, int flags, ml_session_row_t *row);

/* Gathers every process's row on root (root < 0: on every process) into counts and sizes
 * (size x size, row-major); either may be NULL to drop it. Collective over the session. */
int ml_session_gather(int id, int internal, int root, unsigned long *counts, unsigned long *sizes, int flags);

/* MPI_SUCCESS when the API may be used now, else the code every call returns (session.c). */
int ml_api_state(void);

#endif
