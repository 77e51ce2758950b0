/* What the Fortran module needs from C beyond the MPI_M_ functions themselves: a Fortran
 * communicator handle becomes a C one here (fortran/mpi_monitoring.f90). */
#include "mpi_monitoring.h"

int mpilens_f_m_start(MPI_Fint comm, MPI_M_msid *msid);
int mpilens_f_m_start(MPI_Fint comm, MPI_M_msid *msid) { return MPI_M_start(MPI_Comm_f2c(comm), msid); }
