/* The next implementation of an MPI function, for the PMPI layers (next.h). */
#include "next.h"

void *ml_next_symbol(const char *name, void *fallback)
{
    void *next = dlsym(RTLD_NEXT, name);
    return next ? next : fallback;
}
