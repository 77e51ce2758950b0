/* The PMPI layers' messages (libmpilens-piggyback, libmpilens-progress): one line on stderr,
 * prefixed with the layer's name, and with the rank when not every rank says it. */
#ifndef MPILENS_LAYER_SAY_H
#define MPILENS_LAYER_SAY_H

#include <stdarg.h>

/* This process's rank in MPI_COMM_WORLD, or 0 outside MPI_Init..MPI_Finalize. */
int ml_layer_world_rank(void);
/* "LAYER: text" from rank 0 only (`once`), else "LAYER: rank R: text" from the caller. */
void ml_layer_vsay(const char *layer, int once, const char *fmt, va_list ap);

#endif
