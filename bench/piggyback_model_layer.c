/* bench/piggyback_model_layer: the least work a correct in-band piggyback layer does per message,
 * as a preloaded library, so that bench/piggyback_cost can show how close to the struct-type floor
 * an interposition layer that keeps track of its requests can come, beside libmpilens-piggyback's
 * own figure.
 *
 * A MODEL, NOT A LAYER: it is correct for bench/piggyback_layouts and bench/layer_calls' windows
 * alone (MPI_Isend, MPI_Irecv and MPI_Waitall on one stream, between two ranks or a rank and
 * itself, at most MODEL_PENDING requests pending). Each MPI_Isend and MPI_Irecv of at least
 * MODEL_FROM bytes or chars goes to the library as the struct type every in-band method needs (a
 * 4-byte pb, then the payload, at absolute addresses), like `auto` from its default threshold.
 * What a layer must do, it does:
 *   - a message takes an idle entry for its (buffer, count, type): a pb of its own and the struct
 *     type joining it with that buffer, made once and kept (as libmpilens-piggyback keeps them);
 *   - the entry is recorded under the request's handle, in a table with the handles inline;
 *   - MPI_Waitall finds the entries of its requests before the library completes them, then
 *     consumes each received pb (checked: it must carry the sender's sequence number, in order,
 *     else the job aborts) and gives every entry back to its idle list, reusable only now.
 * What it leaves out is what libmpilens-piggyback adds for the rest of MPI: other completion
 * calls, persistent and cancelled requests, derived types, staging, the separate method, drivers. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "piggyback_joined.h"

enum { MODEL_FROM = 4096, MODEL_PENDING = 512, TABLE_BITS = 10, KEYS = 256, PB = 4 };

typedef struct entry {
    const void *buf;
    int count;
    int receive;
    MPI_Datatype payload; /* the program's type, byte-sized */
    MPI_Datatype type;    /* the struct type joining the pb and the buffer */
    struct entry *next;   /* the next idle entry of its key */
    uint32_t pb;          /* the pb bytes themselves */
} entry_t;

/* ---- idle entries, by (buffer, count, type) ---------------------------------------------------- */

static entry_t *idle[2][KEYS];

static entry_t **idle_list(int receive, const void *buf, int count)
{
    uint64_t key = (uint64_t)(uintptr_t)buf ^ (uint64_t)count * 0x9e3779b97f4a7c15ULL;
    return &idle[receive][(key ^ key >> 11 ^ key >> 29) % KEYS];
}

static entry_t *take(int receive, const void *buf, int count, MPI_Datatype payload)
{
    for (entry_t **at = idle_list(receive, buf, count); *at; at = &(*at)->next)
        if ((*at)->buf == buf && (*at)->count == count && (*at)->payload == payload) {
            entry_t *e = *at;
            *at = e->next;
            return e;
        }
    entry_t *e = malloc(sizeof *e);
    if (!e)
        PMPI_Abort(MPI_COMM_WORLD, 1);
    *e = (entry_t){buf, count, receive, payload, MPI_DATATYPE_NULL, NULL, 0};
    e->type = piggyback_joined(&e->pb, PB, buf, count, payload);
    return e;
}

static void give_back(entry_t *e)
{
    entry_t **list = idle_list(e->receive, e->buf, e->count);
    e->next = *list;
    *list = e;
}

/* ---- entries of pending requests, by handle (open addressing, backward-shift removal) ---------- */

typedef struct {
    MPI_Request handle;
    entry_t *entry; /* NULL: free */
} slot_t;

static slot_t table[1 << TABLE_BITS];
static int pending;

static size_t home(MPI_Request handle)
{
    uint64_t key = 0;
    memcpy(&key, &handle, sizeof handle < sizeof key ? sizeof handle : sizeof key);
    return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> (64 - TABLE_BITS));
}

static void record(MPI_Request handle, entry_t *e)
{
    if (++pending > MODEL_PENDING) {
        fprintf(stderr, "piggyback_model_layer: more than %d requests pending\n", MODEL_PENDING);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t mask = ((size_t)1 << TABLE_BITS) - 1, i = home(handle);
    for (; table[i].entry; i = (i + 1) & mask)
        if (table[i].handle == handle) {
            /* MPICH gives every send complete at its call one shared handle: the earlier send of
             * that handle is complete, its entry idle again (libmpilens-piggyback does the same) */
            give_back(table[i].entry);
            table[i].entry = e;
            pending--;
            return;
        }
    table[i] = (slot_t){handle, e};
}

/* The entry recorded under `handle`, taken out of the table; NULL for a request of no entry. */
static entry_t *found(MPI_Request handle)
{
    size_t mask = ((size_t)1 << TABLE_BITS) - 1, i = home(handle);
    while (table[i].entry && table[i].handle != handle)
        i = (i + 1) & mask;
    entry_t *e = table[i].entry;
    if (!e)
        return NULL;
    for (size_t j = (i + 1) & mask; table[j].entry; j = (j + 1) & mask)
        if (((j - home(table[j].handle)) & mask) >= ((j - i) & mask)) {
            table[i] = table[j];
            i = j;
        }
    table[i].entry = NULL;
    pending--;
    return e;
}

/* ---- the wrapped calls ------------------------------------------------------------------------- */

static uint32_t sent, received; /* pb sequence numbers: one stream, so received in sent order */

/* Payloads of bytes or chars (bench/layer_calls sends chars), joined to the pb as the program's
 * own type, as libmpilens-piggyback joins them. */
static int modelled(int count, MPI_Datatype type)
{
    return (type == MPI_BYTE || type == MPI_CHAR) && count >= MODEL_FROM;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    if (!modelled(count, type))
        return PMPI_Isend(buf, count, type, dest, tag, comm, request);
    entry_t *e = take(0, buf, count, type);
    e->pb = sent++;
    int rc = PMPI_Isend(MPI_BOTTOM, 1, e->type, dest, tag, comm, request);
    record(*request, e);
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    if (!modelled(count, type))
        return PMPI_Irecv(buf, count, type, source, tag, comm, request);
    entry_t *e = take(1, buf, count, type);
    int rc = PMPI_Irecv(MPI_BOTTOM, 1, e->type, source, tag, comm, request);
    record(*request, e);
    return rc;
}

/* A received pb consumed: it must be the stream's next. */
static void consume(const entry_t *e)
{
    if (e->pb == received++)
        return;
    fprintf(stderr, "piggyback_model_layer: pb %u received where %u was due\n", (unsigned)e->pb,
            (unsigned)(received - 1));
    PMPI_Abort(MPI_COMM_WORLD, 1);
}

int MPI_Waitall(int n, MPI_Request requests[], MPI_Status statuses[])
{
    entry_t *entries[MODEL_PENDING];
    MPI_Status own[MODEL_PENDING];
    if (n > MODEL_PENDING)
        return PMPI_Waitall(n, requests, statuses);
    int any = 0;
    for (int i = 0; i < n; i++)
        any |= (entries[i] = found(requests[i])) != NULL;
    if (!any)
        return PMPI_Waitall(n, requests, statuses);
    int seen = statuses != MPI_STATUSES_IGNORE;
    MPI_Status *st = seen ? statuses : own;
    int rc = PMPI_Waitall(n, requests, st);
    for (int i = 0; i < n; i++) { /* posted in matching order: index order is the stream's */
        entry_t *e = entries[i];
        if (!e)
            continue;
        if (e->receive) {
            consume(e);
            int bytes;
            if (seen && PMPI_Get_count(&st[i], MPI_BYTE, &bytes) == MPI_SUCCESS) /* the payload's only */
                PMPI_Status_set_elements(&st[i], MPI_BYTE, bytes - PB);
        }
        give_back(e);
    }
    return rc;
}

/* Every entry is idle once the program's requests are complete: their types freed. */
int MPI_Finalize(void)
{
    for (int receive = 0; receive < 2; receive++)
        for (int k = 0; k < KEYS; k++)
            while (idle[receive][k]) {
                entry_t *e = idle[receive][k];
                idle[receive][k] = e->next;
                PMPI_Type_free(&e->type);
                free(e);
            }
    return PMPI_Finalize();
}
