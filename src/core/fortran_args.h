/* Fortran arguments of the generated Fortran entry points (src/wrap/generate_wrappers.py): what
 * a Fortran program passes to MPI (mpif.h and `use mpi` bindings: every argument by reference,
 * handles as MPI_Fint, statuses as MPI_STATUS_SIZE integers, logicals, 1-based indices, and the
 * sentinels MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS(ES)_IGNORE, which are addresses of the MPI
 * library's own Fortran variables) made into C arguments, and the results made back.
 *
 * The sentinels' addresses are the library's: Open MPI exports them as mpi_fortran_in_place_,
 * mpi_fortran_bottom_, ...; MPICH keeps them in its common blocks mpipriv1_ (MPI_BOTTOM,
 * MPI_IN_PLACE, then MPI_STATUS_IGNORE) and mpipriv2_ (MPI_STATUSES_IGNORE). They are looked up
 * once, on the first Fortran call; a library that has neither is taken to have no Fortran
 * sentinels (its Fortran programs cannot pass them). Logicals are gfortran's (true = 1), the
 * compiler both Debian libraries are built with. */
#ifndef MPILENS_CORE_FORTRAN_ARGS_H
#define MPILENS_CORE_FORTRAN_ARGS_H

#include <mpi.h>

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran integer arrays are passed to C as int arrays");

/* Integers in a Fortran status: MPI-4 says MPI_F_STATUS_SIZE; before it, Open MPI and MPICH both
 * size a Fortran status to hold their C status exactly (6 and 5 integers here). */
#ifdef MPI_F_STATUS_SIZE
#define ML_F_STATUS_SIZE MPI_F_STATUS_SIZE
#else
#define ML_F_STATUS_SIZE (sizeof(MPI_Status) / sizeof(MPI_Fint))
#endif

/* A choice buffer: MPI_IN_PLACE and MPI_BOTTOM of Fortran become C's; any other address stays. */
void *ml_f_buffer(const void *buffer);

/* Scalars made back for Fortran. */
static inline MPI_Fint ml_f_logical(int value) { return value ? 1 : 0; }
static inline MPI_Fint ml_f_index(int index) { return index == MPI_UNDEFINED ? index : index + 1; }
/* Waitsome/Testsome: how many results there are (MPI_UNDEFINED: none). */
static inline int ml_f_outcount(int outcount) { return outcount == MPI_UNDEFINED ? 0 : outcount; }
/* Their indices, made 1-based in place. */
void ml_f_indices(MPI_Fint *indices, int n);

/* One status: the C status to give MPI (MPI_STATUS_IGNORE for Fortran's), made back into the
 * Fortran one after a call that succeeded. */
MPI_Status *ml_f_status(MPI_Fint *status, MPI_Status *own);
void ml_f_status_out(int rc, const MPI_Status *status, MPI_Fint *fortran);

/* Arrays of n elements (malloc'ed: ml_f_free; NULL when n is 0 or for the IGNORE sentinel). */
MPI_Status *ml_f_statuses(MPI_Fint *statuses, int n);
void ml_f_statuses_out(int rc, MPI_Status *statuses, MPI_Fint *fortran, int n); /* frees them */
MPI_Request *ml_f_requests(const MPI_Fint *requests, int n);
void ml_f_requests_out(MPI_Request *requests, MPI_Fint *fortran, int n); /* frees them */
MPI_Datatype *ml_f_type_handles(const MPI_Fint *types, int n);
void ml_f_free(void *array);

/* Lengths of the datatype arrays of Alltoallw (the peers of comm: its size, or its remote size)
 * and of Neighbor_alltoallw (out-neighbours for the send types, in-neighbours for the receive
 * types). */
int ml_f_peers(MPI_Comm comm);
int ml_f_neighbours(MPI_Comm comm, int outgoing);

#endif
