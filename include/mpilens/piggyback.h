/** \file mpilens/piggyback.h
 * \brief libmpilens-piggyback: transparent piggyback data on every point-to-point message
 * (docs/piggyback.md; seed 001, Schulz, Bronevetsky and de Supinski, EuroPVM/MPI 2008).
 *
 * Status convention (the same words in every mpilens public header and in docs/CONTRIBUTING.md):
 * every function returns its library's status type, except `*_status_string`, which names a
 * status. `*_OK` is 0 and means success; every other value names what went wrong. A function
 * writes its outputs (what its pointer parameters point to) only when it returns `*_OK`: after
 * an error, everything the caller owns is as it was. Getters follow the same rule: they write the
 * value through a pointer and return the status, a null pointer being `*_ERR_ARG`.
 * `*_status_string` names every status of its library, and "unknown status" for a value that is
 * none. The monitoring API, mpi_monitoring.h, keeps the seed's convention instead: `MPI_SUCCESS`
 * or a negative `MPI_M_*` code, which `MPI_M_error_string` names.
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
 * time. */
#ifndef MPILENS_PIGGYBACK_H
#define MPILENS_PIGGYBACK_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** \brief What a libmpilens-piggyback function did: MPILENS_PB_OK, or why it failed. */
typedef enum {
    MPILENS_PB_OK = 0,    /**< success */
    MPILENS_PB_ERR_ARG,   /**< a null pointer, a value out of range or an unknown name */
    MPILENS_PB_ERR_STATE, /**< too late: MPI_Init has fixed the size and method */
} mpilens_pb_status_t;

/** Largest piggyback, in bytes. */
#define MPILENS_PB_MAX_SIZE 65536

/** \brief A tool's producer: fills the pb bytes of an outgoing message.
 * \param pb the bytes to fill
 * \param size how many (the pb size)
 * \param dest the destination, a rank in comm
 * \param tag the message's tag
 * \param comm the message's communicator
 * \param payload_bytes the size of the message the application sends
 * \param context what mpilens_pb_set_handlers() was given */
typedef void (*mpilens_pb_producer_t)(void *pb, size_t size, int dest, int tag, MPI_Comm comm, size_t payload_bytes,
                                      void *context);

/** \brief A tool's consumer: receives the pb bytes of a message once its receive completed.
 * \param pb the bytes the message brought
 * \param size how many (the pb size)
 * \param source the sender, a rank in comm
 * \param tag the message's tag
 * \param comm the message's communicator
 * \param payload_bytes the size of the message the application received
 * \param context what mpilens_pb_set_handlers() was given */
typedef void (*mpilens_pb_consumer_t)(const void *pb, size_t size, int source, int tag, MPI_Comm comm,
                                      size_t payload_bytes, void *context);

/** \brief Installs the tool's handlers, replacing a built-in driver, at any time. Handlers must
 * not call MPI point-to-point functions: the layer is in the middle of their message.
 * \param producer fills each outgoing message's pb bytes (NULL: they are zeros)
 * \param consumer receives each completed receive's pb bytes (NULL: none)
 * \param context passed to both handlers
 * \return MPILENS_PB_OK */
mpilens_pb_status_t mpilens_pb_set_handlers(mpilens_pb_producer_t producer, mpilens_pb_consumer_t consumer,
                                            void *context);

/** \brief Sets the pb size, before MPI_Init.
 * \param bytes 0 to MPILENS_PB_MAX_SIZE
 * \return MPILENS_PB_OK; MPILENS_PB_ERR_ARG (too large), MPILENS_PB_ERR_STATE (after MPI_Init) */
mpilens_pb_status_t mpilens_pb_set_size(size_t bytes);

/** \brief Sets the method, before MPI_Init.
 * \param name "pack-before", "pack-after", "datatype-before", "datatype-after", "separate" or
 *        "auto" (docs/piggyback.md says what each does)
 * \return MPILENS_PB_OK; MPILENS_PB_ERR_ARG (NULL or an unknown name), MPILENS_PB_ERR_STATE
 *         (after MPI_Init) */
mpilens_pb_status_t mpilens_pb_set_method(const char *name);

/** \brief The pb size in force (after MPI_Init: the one every rank agreed on).
 * \param bytes receives the size in bytes
 * \return MPILENS_PB_OK; MPILENS_PB_ERR_ARG (NULL) */
mpilens_pb_status_t mpilens_pb_get_size(size_t *bytes);

/** \brief The method in force (after MPI_Init: the one every rank agreed on).
 * \param name receives its name, a constant string (one mpilens_pb_set_method() accepts)
 * \return MPILENS_PB_OK; MPILENS_PB_ERR_ARG (NULL) */
mpilens_pb_status_t mpilens_pb_get_method(const char **name);

/** \brief Names a status.
 * \param status a status a libmpilens-piggyback function returned
 * \return a constant English phrase; "unknown status" for a value that is not an
 *         mpilens_pb_status_t code */
const char *mpilens_pb_status_string(mpilens_pb_status_t status);

#ifdef __cplusplus
}
#endif

#endif
