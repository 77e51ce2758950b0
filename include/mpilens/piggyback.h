/* libmpilens-piggyback: transparent piggyback data on every point-to-point message
 * (docs/piggyback.md; seed 001, Schulz, Bronevetsky and de Supinski, EuroPVM/MPI 2008).
 *
 * The library is a PMPI layer, preloaded (LD_PRELOAD=libmpilens-piggyback.so) or linked before
 * the MPI library. A tool registers a producer, called for each outgoing message to fill its
 * piggyback (pb) bytes, and a consumer, called for each completed receive with the pb bytes that
 * the message brought. The application sees its messages unchanged: counts, statuses and
 * matching are those it would see without the layer.
 *
 * Size and method are fixed at MPI_Init (from these calls made before it, else from the
 * environment: MPILENS_PB_SIZE, MPILENS_PB_METHOD), and must be the same on every rank; the layer
 * checks that at MPI_Init and aborts with the reason if they differ. Handlers may change at any
 * time.
 *
 * Errors: every function returns MPILENS_PB_OK or an error status, and changes nothing on error;
 * mpilens_pb_status_string() names it. */
#ifndef MPILENS_PIGGYBACK_H
#define MPILENS_PIGGYBACK_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MPILENS_PB_OK = 0,
    MPILENS_PB_ERR_ARG,       /* a value out of range or an unknown name */
    MPILENS_PB_ERR_STATE,     /* too late: MPI_Init has fixed the size and method */
} mpilens_pb_status_t;

/* Largest piggyback, in bytes. */
#define MPILENS_PB_MAX_SIZE 65536

/* Fills `size` pb bytes for a message of `payload_bytes` to `dest` (rank in `comm`). */
typedef void (*mpilens_pb_producer_t)(void *pb, size_t size, int dest, int tag, MPI_Comm comm,
                                      size_t payload_bytes, void *context);
/* Receives the pb bytes of a message from `source` (rank in `comm`) once its receive completed. */
typedef void (*mpilens_pb_consumer_t)(const void *pb, size_t size, int source, int tag, MPI_Comm comm,
                                      size_t payload_bytes, void *context);

/* Installs the tool's handlers (either may be NULL), replacing a built-in driver. Handlers must
 * not call MPI point-to-point functions: the layer is in the middle of their message. */
mpilens_pb_status_t mpilens_pb_set_handlers(mpilens_pb_producer_t producer, mpilens_pb_consumer_t consumer,
                                            void *context);

/* Before MPI_Init: the pb size, 0 to MPILENS_PB_MAX_SIZE bytes. */
mpilens_pb_status_t mpilens_pb_set_size(size_t bytes);

/* Before MPI_Init: "pack-before", "pack-after", "datatype-before", "datatype-after", "separate"
 * or "auto" (docs/piggyback.md says what each does). */
mpilens_pb_status_t mpilens_pb_set_method(const char *name);

/* The pb size and the method in force (after MPI_Init: the ones every rank agreed on). */
size_t mpilens_pb_size(void);
const char *mpilens_pb_method(void);

const char *mpilens_pb_status_string(mpilens_pb_status_t status);

#ifdef __cplusplus
}
#endif

#endif
