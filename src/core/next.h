/* Calling the next implementation of an MPI function, so that PMPI layers stack.
 *
 * A wrapper forwards the application's call to whatever comes next in the symbol search order:
 * another preloaded mpilens layer (piggyback, progress, ...) or the MPI library itself, found
 * with dlsym(RTLD_NEXT). Calling PMPI_ instead would skip the layers below. Where dlsym finds
 * nothing (a static link), the PMPI_ entry point is used. The layer's own MPI calls (its gathers,
 * communicator duplications) are not forwarded: they go to PMPI_ directly and no layer sees them.
 *
 *     int MPI_Send(const void *buf, int count, ...) { ...count it...; ML_FORWARD(MPI_Send, buf, count, ...); }
 *     int rc = ML_NEXT(MPI_Send_init)(...); ...then use the request...; return rc;
 */
#ifndef MPILENS_NEXT_H
#define MPILENS_NEXT_H

#include <dlfcn.h>

void *ml_next_symbol(const char *name, void *fallback);

/* The next implementation of fn, resolved once (a benign race: every thread stores the same). */
#define ML_NEXT(fn)                                                                                                    \
    ({                                                                                                                 \
        static __typeof__(&P##fn) next_;                                                                               \
        __typeof__(&P##fn) call_ = __atomic_load_n(&next_, __ATOMIC_RELAXED);                                          \
        if (!call_) {                                                                                                  \
            call_ = (__typeof__(&P##fn))ml_next_symbol(#fn, (void *)&P##fn);                                           \
            __atomic_store_n(&next_, call_, __ATOMIC_RELAXED);                                                         \
        }                                                                                                              \
        call_;                                                                                                         \
    })

/* Forwards the wrapped call and returns its result. */
#define ML_FORWARD(fn, ...) return ML_NEXT(fn)(__VA_ARGS__)

#endif
