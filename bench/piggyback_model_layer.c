/* bench/piggyback_model_layer: the least work an in-band piggyback layer can do per message, as a
 * preloaded library, so that bench/piggyback_cost can show how close to the struct-type floor an
 * interposition layer can come at all, beside libmpilens-piggyback's own figure.
 *
 * A MODEL, NOT A LAYER: it is correct for bench/piggyback_layouts alone. Each MPI_Isend and
 * MPI_Irecv of at least MODEL_FROM bytes goes to the library as the struct type every in-band
 * method needs (a 4-byte pb, then the payload, at absolute addresses), like `auto` from its
 * default threshold. The types are kept in a ring of MODEL_RING entries, one per message of a
 * window, remade only when the buffer or count of their entry changes, and each has its pb bytes
 * in one array. It keeps no record of the requests: it never learns when a message completes, so
 * it cannot know when a pb or type may be reused, nor consume a pb, and a program with more than
 * MODEL_RING messages pending would have pb bytes overwritten in flight (their value does not
 * matter to the bench). What it leaves out is exactly what a real layer must add: a record per
 * request, found again at completion. */
#include <mpi.h>

#include "piggyback_joined.h"

enum { MODEL_FROM = 4096, MODEL_RING = 64, PB = 4 };

typedef struct {
    const void *buf;
    int count;
    MPI_Datatype type;
} entry_t;

static entry_t ring[2][MODEL_RING]; /* sends, receives */
static unsigned char pbs[2][MODEL_RING][PB];
static unsigned next_entry[2];

/* The struct type of the next entry of `direction`'s ring for (buf, count bytes). */
static MPI_Datatype joined(int direction, const void *buf, int count)
{
    unsigned k = next_entry[direction]++ % MODEL_RING;
    entry_t *e = &ring[direction][k];
    if (e->buf == buf && e->count == count)
        return e->type;
    if (e->buf)
        PMPI_Type_free(&e->type);
    e->type = piggyback_joined(pbs[direction][k], PB, buf, count);
    e->buf = buf;
    e->count = count;
    return e->type;
}

static int modelled(int count, MPI_Datatype type) { return type == MPI_BYTE && count >= MODEL_FROM; }

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    if (!modelled(count, type))
        return PMPI_Isend(buf, count, type, dest, tag, comm, request);
    return PMPI_Isend(MPI_BOTTOM, 1, joined(0, buf, count), dest, tag, comm, request);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    if (!modelled(count, type))
        return PMPI_Irecv(buf, count, type, source, tag, comm, request);
    return PMPI_Irecv(MPI_BOTTOM, 1, joined(1, buf, count), source, tag, comm, request);
}
