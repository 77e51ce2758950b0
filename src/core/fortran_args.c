/* Fortran arguments made C ones and back (fortran_args.h). The layers' own MPI calls here go to
 * PMPI_ (the file is built into mpilens_core_layer). */
#include "fortran_args.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* The addresses of the library's Fortran sentinels, found once. */
typedef struct {
    const void *bottom, *in_place, *status_ignore, *statuses_ignore;
} sentinels_t;

/* The first of Open MPI's manglings of one of its sentinel variables that the process has. */
static const void *open_mpi_symbol(const char *stem)
{
    static const char *const forms[] = {"%s_", "%s", "%s__", NULL};
    char name[64], upper[64];
    for (const char *const *form = forms; *form; form++) {
        snprintf(name, sizeof name, *form, stem);
        const void *found = dlsym(RTLD_DEFAULT, name);
        if (found)
            return found;
    }
    int i = 0;
    for (; stem[i] && i < (int)sizeof upper - 1; i++)
        upper[i] = (char)(stem[i] >= 'a' && stem[i] <= 'z' ? stem[i] - 'a' + 'A' : stem[i]);
    upper[i] = '\0';
    return dlsym(RTLD_DEFAULT, upper);
}

static sentinels_t find_sentinels(void)
{
    sentinels_t s = {0};
    const char *mpich1 = dlsym(RTLD_DEFAULT, "mpipriv1_"), *mpich2 = dlsym(RTLD_DEFAULT, "mpipriv2_");
    if (mpich1 && mpich2) {
        /* COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE (MPICH's mpif.h) */
        s.bottom = mpich1;
        s.in_place = mpich1 + sizeof(MPI_Fint);
        s.status_ignore = mpich1 + 2 * sizeof(MPI_Fint);
        s.statuses_ignore = mpich2;
        return s;
    }
    s.bottom = open_mpi_symbol("mpi_fortran_bottom");
    s.in_place = open_mpi_symbol("mpi_fortran_in_place");
    s.status_ignore = open_mpi_symbol("mpi_fortran_status_ignore");
    s.statuses_ignore = open_mpi_symbol("mpi_fortran_statuses_ignore");
    return s;
}

/* A benign race: every thread finds the same addresses. */
static const sentinels_t *sentinels(void)
{
    static sentinels_t found;
    static int ready;
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
        found = find_sentinels();
        __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    }
    return &found;
}

void *ml_f_buffer(const void *buffer)
{
    const sentinels_t *s = sentinels();
    if (buffer && buffer == s->in_place)
        return MPI_IN_PLACE;
    if (buffer && buffer == s->bottom)
        return MPI_BOTTOM;
    return (void *)buffer;
}

void ml_f_indices(MPI_Fint *indices, int n)
{
    for (int i = 0; i < n; i++)
        indices[i] += 1;
}

/* Whether a Fortran status argument is MPI_STATUS_IGNORE: the library's own variable, or the
 * address the library gives C programs for it (MPI_F_STATUS_IGNORE). */
static int status_ignored(const MPI_Fint *status)
{
    return status == sentinels()->status_ignore || (MPI_F_STATUS_IGNORE && status == MPI_F_STATUS_IGNORE);
}

static int statuses_ignored(const MPI_Fint *statuses)
{
    return statuses == sentinels()->statuses_ignore || (MPI_F_STATUSES_IGNORE && statuses == MPI_F_STATUSES_IGNORE);
}

MPI_Status *ml_f_status(MPI_Fint *status, MPI_Status *own)
{
    if (status_ignored(status))
        return MPI_STATUS_IGNORE;
    *own = (MPI_Status){0};
    return own;
}

void ml_f_status_out(int rc, const MPI_Status *status, MPI_Fint *fortran)
{
    if (rc == MPI_SUCCESS && status != MPI_STATUS_IGNORE)
        PMPI_Status_c2f(status, fortran);
}

MPI_Status *ml_f_statuses(MPI_Fint *statuses, int n)
{
    if (statuses_ignored(statuses))
        return MPI_STATUSES_IGNORE;
    return n > 0 ? calloc((size_t)n, sizeof(MPI_Status)) : NULL;
}

void ml_f_statuses_out(int rc, MPI_Status *statuses, MPI_Fint *fortran, int n)
{
    if (statuses == MPI_STATUSES_IGNORE)
        return;
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
        for (int i = 0; statuses && i < n; i++)
            PMPI_Status_c2f(&statuses[i], fortran + (size_t)i * ML_F_STATUS_SIZE);
    free(statuses);
}

/* The C handles of n Fortran ones, in a malloc'ed array (NULL when n <= 0 or out of memory). */
#define HANDLES_F2C(function, type, f2c)                                                                               \
    type *function(const MPI_Fint *handles, int n)                                                                     \
    {                                                                                                                  \
        type *c = n > 0 ? malloc((size_t)n * sizeof *c) : NULL;                                                        \
        for (int i = 0; c && i < n; i++)                                                                               \
            c[i] = f2c(handles[i]);                                                                                    \
        return c;                                                                                                      \
    }

HANDLES_F2C(ml_f_requests, MPI_Request, PMPI_Request_f2c)
HANDLES_F2C(ml_f_type_handles, MPI_Datatype, PMPI_Type_f2c)

void ml_f_requests_out(MPI_Request *requests, MPI_Fint *fortran, int n)
{
    for (int i = 0; requests && i < n; i++)
        fortran[i] = PMPI_Request_c2f(requests[i]);
    free(requests);
}

void ml_f_free(void *array) { free(array); }

int ml_f_peers(MPI_Comm comm)
{
    int inter = 0, size = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        PMPI_Comm_remote_size(comm, &size);
    else
        PMPI_Comm_size(comm, &size);
    return size;
}

int ml_f_neighbours(MPI_Comm comm, int outgoing)
{
    int topology = MPI_UNDEFINED, in = 0, out = 0;
    PMPI_Topo_test(comm, &topology);
    if (topology == MPI_CART) {
        int dims = 0;
        PMPI_Cartdim_get(comm, &dims);
        in = out = 2 * dims;
    } else if (topology == MPI_GRAPH) {
        int rank;
        PMPI_Comm_rank(comm, &rank);
        PMPI_Graph_neighbors_count(comm, rank, &in);
        out = in;
    } else if (topology == MPI_DIST_GRAPH) {
        int weighted;
        PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
    }
    return outgoing ? out : in;
}
