/* The life cycle every PMPI layer shares: MPI_Init, MPI_Init_thread and MPI_Finalize, generated
 * for a layer whose wrapped.spec says `lifecycle` (src/wrap/generate_wrappers.py), call these
 * with the layer's hooks, each optional:
 *   thread_level(required)    the level to ask the library for when the program asks `required`
 *                             (libmpilens-progress's thread needs MPI_THREAD_MULTIPLE); a higher
 *                             one turns MPI_Init into MPI_Init_thread
 *   provided_level(provided)  the level to tell an MPI_Init_thread caller when the library gave
 *                             `provided` (libmpilens-piggyback supports SERIALIZED at most)
 *   after_init(provided)      once MPI is initialised (at the level the library gave)
 *   before_finalize()         before MPI_Finalize is forwarded */
#ifndef MPILENS_CORE_LIFECYCLE_H
#define MPILENS_CORE_LIFECYCLE_H

typedef struct {
    int (*thread_level)(int required);
    int (*provided_level)(int provided);
    void (*after_init)(int provided);
    void (*before_finalize)(void);
} ml_lifecycle_t;

/* MPI_Init (provided NULL) or MPI_Init_thread, forwarded, with the layer's hooks around. */
int ml_lifecycle_init(const ml_lifecycle_t *layer, int *argc, char ***argv, int required, int *provided);
int ml_lifecycle_finalize(const ml_lifecycle_t *layer);

#endif
