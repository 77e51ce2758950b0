/* The life cycle the PMPI layers share (lifecycle.h). */
#include "lifecycle.h"

#include <mpi.h>

#include "next.h"

int ml_lifecycle_init(const ml_lifecycle_t *layer, int *argc, char ***argv, int required, int *provided)
{
    int level = layer->thread_level ? layer->thread_level(required) : required;
    if (level < required)
        level = required;
    int got = MPI_THREAD_SINGLE, rc;
    if (provided || level != required) {
        rc = ML_NEXT(MPI_Init_thread)(argc, argv, level, &got);
    } else {
        rc = ML_NEXT(MPI_Init)(argc, argv);
        if (rc == MPI_SUCCESS)
            PMPI_Query_thread(&got);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    /* The level told first: a layer that lowers it says so before it sets itself up. */
    if (provided)
        *provided = layer->provided_level ? layer->provided_level(got) : got;
    if (layer->after_init)
        layer->after_init(got);
    return rc;
}

int ml_lifecycle_finalize(const ml_lifecycle_t *layer)
{
    if (layer->before_finalize)
        layer->before_finalize();
    return ML_NEXT(MPI_Finalize)();
}
