/* Reading a suspended session across processes: the gathers and the two kinds of files
 * (docs/monitor.md, "Files"). Every collective step runs on the session's own duplicate
 * communicator, bracketed so that Open MPI's monitoring does not count it as the program's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor.h"
#include "mpi_monitoring.h"
#include "mpit.h"
#include "session.h"

/* One half of the rows (offset 0: messages, size: bytes) into matrix on root (or every rank when
 * root < 0). A rank that wants the matrix but passed NULL gets a scratch one. */
static int gather_half(const unsigned long *row, int offset, int size, int root, int rank, unsigned long *matrix,
                       MPI_Comm comm)
{
    int receives = root < 0 || root == rank;
    unsigned long *into = matrix;
    if (receives && !into && !(into = malloc(sizeof *into * (size_t)size * (size_t)size)))
        return MPI_M_INTERNAL_FAIL;
    int rc = root < 0 ? PMPI_Allgather(row + offset, size, MPI_UNSIGNED_LONG, into, size, MPI_UNSIGNED_LONG, comm)
                      : PMPI_Gather(row + offset, size, MPI_UNSIGNED_LONG, into, size, MPI_UNSIGNED_LONG, root, comm);
    if (into != matrix)
        free(into);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : MPI_M_MPIT_FAIL;
}

int ml_session_gather(int id, int internal, int root, unsigned long *counts, unsigned long *sizes, int flags)
{
    ml_session_row_t row;
    int status = ml_session_row(id, internal, flags, &row);
    if (status != MPI_SUCCESS)
        return status;
    if (root >= row.size) {
        free(row.values);
        return MPI_M_INVALID_ROOT;
    }
    ml_tool_traffic_t tool;
    ml_tool_traffic_begin(&tool);
    status = gather_half(row.values, 0, row.size, root, row.rank, counts, row.comm);
    int second = gather_half(row.values, row.size, row.size, root, row.rank, sizes, row.comm);
    ml_tool_traffic_end(&tool);
    free(row.values);
    return status != MPI_SUCCESS ? status : second;
}

int MPI_M_allgather_data(MPI_M_msid msid, unsigned long *matrix_counts, unsigned long *matrix_sizes, int flags)
{
    int state = ml_api_state();
    if (state != MPI_SUCCESS)
        return state;
    return ml_session_gather(msid, 0, -1, matrix_counts, matrix_sizes, flags);
}

int MPI_M_rootgather_data(MPI_M_msid msid, int root, unsigned long *matrix_counts, unsigned long *matrix_sizes,
                          int flags)
{
    int state = ml_api_state();
    if (state != MPI_SUCCESS)
        return state;
    if (root < 0)
        return MPI_M_INVALID_ROOT;
    return ml_session_gather(msid, 0, root, matrix_counts, matrix_sizes, flags);
}

/* ---- files ---------------------------------------------------------------------------------- */

/* Every rank returns the same status: the worst one (errors are negative). */
static int agree(int status, MPI_Comm comm)
{
    int all = status;
    ml_tool_traffic_t tool;
    ml_tool_traffic_begin(&tool);
    PMPI_Allreduce(&status, &all, 1, MPI_INT, MPI_MIN, comm);
    ml_tool_traffic_end(&tool);
    return all;
}

static int write_row(const char *path, const unsigned long *row, int size)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return MPI_M_INTERNAL_FAIL;
    for (int r = 0; r < size; r++)
        fprintf(f, "%d %lu %lu\n", r, row[r], row[size + r]);
    return fclose(f) == 0 ? MPI_SUCCESS : MPI_M_INTERNAL_FAIL;
}

static int write_matrix(const char *path, const unsigned long *matrix, int size)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return MPI_M_INTERNAL_FAIL;
    for (int i = 0; i < size; i++)
        for (int j = 0; j < size; j++)
            fprintf(f, "%lu%c", matrix[(size_t)i * (size_t)size + (size_t)j], j + 1 < size ? ' ' : '\n');
    return fclose(f) == 0 ? MPI_SUCCESS : MPI_M_INTERNAL_FAIL;
}

/* The file a flush writes: FILENAME<part>.<rank>.prof (malloc'ed; NULL when out of memory). */
static char *prof_path(const char *filename, const char *part, int rank)
{
    size_t len = strlen(filename) + strlen(part) + 32;
    char *path = malloc(len);
    if (path)
        snprintf(path, len, "%s%s.%d.prof", filename, part, rank);
    return path;
}

int MPI_M_flush(MPI_M_msid msid, char *filename, int flags)
{
    int state = ml_api_state();
    if (state != MPI_SUCCESS)
        return state;
    if (!filename)
        return MPI_M_INVALID_ARG;
    ml_session_row_t row;
    int status = ml_session_row(msid, 0, flags, &row);
    if (status != MPI_SUCCESS)
        return status;
    char *path = prof_path(filename, "", row.rank);
    status = path ? write_row(path, row.values, row.size) : MPI_M_INTERNAL_FAIL;
    free(path);
    free(row.values);
    return agree(status, row.comm);
}

int MPI_M_rootflush(MPI_M_msid msid, int root, char *filename, int flags)
{
    int state = ml_api_state();
    if (state != MPI_SUCCESS)
        return state;
    if (!filename)
        return MPI_M_INVALID_ARG;
    if (root < 0)
        return MPI_M_INVALID_ROOT;
    ml_session_row_t row;
    int status = ml_session_row(msid, 0, flags, &row);
    if (status != MPI_SUCCESS)
        return status;
    free(row.values);
    int size = row.size, rank = row.rank;
    if (root >= size)
        return MPI_M_INVALID_ROOT;
    unsigned long *counts = NULL, *sizes = NULL;
    if (rank == root) {
        counts = malloc(sizeof *counts * (size_t)size * (size_t)size);
        sizes = malloc(sizeof *sizes * (size_t)size * (size_t)size);
    }
    /* a root out of memory still takes part in the gathers (into scratch), then reports it */
    int memory = rank == root && (!counts || !sizes) ? MPI_M_INTERNAL_FAIL : MPI_SUCCESS;
    status = ml_session_gather(msid, 0, root, counts, sizes, flags);
    if (rank == root && status == MPI_SUCCESS && memory == MPI_SUCCESS) {
        char *path = prof_path(filename, "_counts", ml_mon.world_rank);
        status = path ? write_matrix(path, counts, size) : MPI_M_INTERNAL_FAIL;
        free(path);
        path = status == MPI_SUCCESS ? prof_path(filename, "_sizes", ml_mon.world_rank) : NULL;
        if (status == MPI_SUCCESS)
            status = path ? write_matrix(path, sizes, size) : MPI_M_INTERNAL_FAIL;
        free(path);
    }
    free(counts);
    free(sizes);
    return agree(status != MPI_SUCCESS ? status : memory, row.comm);
}
