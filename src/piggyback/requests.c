/* The layer's request records, found by the handle the user holds, and its pooled buffers.
 *
 * Handles are ints (MPICH) or pointers (Open MPI): either way a number, hashed into an
 * open-addressing table (linear probing) that grows when a quarter full: every message's record
 * is inserted, found and removed once, and the longer probe runs of a table grown at half full
 * cost 30 more instructions per 4 KiB message (bench/layer_instructions), to save 16 bytes per
 * pending request. A removal shifts the records
 * after it back instead of leaving a tombstone, so that a program that posts and completes
 * requests for ever never fills the table with tombstones (which took a rehash of the whole
 * table every few windows of messages). Each record keeps its home slot, so that neither the
 * shift nor a walk past it hashes another record's handle again. The layer runs at most at
 * MPI_THREAD_SERIALIZED (docs/piggyback.md, "Threads"), so nothing here takes a lock. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pb.h"

static ml_req_t **slots;
static size_t n_slots, n_live;
static unsigned slot_bits; /* n_slots == 1 << slot_bits */

static uint64_t key_of(MPI_Request handle)
{
    uint64_t key = 0;
    memcpy(&key, &handle, sizeof handle < sizeof key ? sizeof handle : sizeof key);
    return key;
}

/* Fibonacci hashing: the high bits of the key times 2^64 / phi. Both kinds of handle differ in
 * their middle bits (an index in MPICH's, an object's address in Open MPI's), which the product
 * carries up; one multiply where a full mix took five operations per handle hashed. */
static size_t slot_of(uint64_t key) { return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> (64 - slot_bits)); }

/* Slot i holds r from now on; r remembers where, so that removing it needs no search. */
static void put(ml_req_t *r, size_t i)
{
    slots[i] = r;
    r->slot = i;
}

/* Puts r in the first free slot of its run (the table has room). */
static void place(ml_req_t *r)
{
    size_t i = r->home = slot_of(key_of(r->handle));
    while (slots[i])
        i = (i + 1) & (n_slots - 1);
    put(r, i);
    n_live++;
}

/* Rehashes into a table twice as large. */
static void grow(void)
{
    size_t old_n = n_slots;
    ml_req_t **old = slots;
    slot_bits = old_n ? slot_bits + 1 : 8;
    n_slots = (size_t)1 << slot_bits;
    slots = calloc(n_slots, sizeof *slots);
    if (!slots)
        ml_pb_fail("out of memory for the request table");
    n_live = 0;
    for (size_t i = 0; i < old_n; i++)
        if (old[i])
            place(old[i]);
    free(old);
}

/* MPICH hands the same handle to every send it completed at once (a built-in "lightweight"
 * request), so a new record may find an old one under its handle. That old send is complete
 * too, and the layer's part of it (releasing its buffers) can be done now. */
static void drop_completed_twin(ml_req_t *old)
{
    if (old->kind == REQ_RECV)
        ml_pb_fail("MPI gave a new request the handle of a receive the layer never saw complete: was it "
                   "completed by a call the layer does not wrap (a Fortran binding, a generalized request)?");
    ml_req_remove(old);
    ml_req_free(old);
}

/* One walk from the handle's home slot finds both a twin under the same handle and the free
 * slot the record goes to: a record is inserted per message, and a second walk showed. A null
 * handle (never looked up) has no twin. */
void ml_req_insert(ml_req_t *r)
{
    if (4 * (n_live + 1) > n_slots)
        grow();
    int null = r->handle == MPI_REQUEST_NULL;
    for (;;) {
        size_t i = r->home = slot_of(key_of(r->handle));
        while (slots[i] && (null || slots[i]->handle != r->handle))
            i = (i + 1) & (n_slots - 1);
        if (!slots[i]) {
            put(r, i);
            n_live++;
            return;
        }
        drop_completed_twin(slots[i]); /* moves records back: walk again */
    }
}

/* Whether the record uses its derived datatype after the call that made it returns: a packed
 * receive unpacks at completion, a persistent request packs or counts at each start. */
static int type_needed_later(const ml_req_t *r)
{
    if (!(r->persistent || (r->kind == REQ_RECV && r->staged && !r->contiguous)) || r->type == MPI_DATATYPE_NULL)
        return 0;
    int integers, addresses, types, combiner;
    PMPI_Type_get_envelope(r->type, &integers, &addresses, &types, &combiner);
    return combiner != MPI_COMBINER_NAMED;
}

/* The program may free a datatype as soon as the call that uses it returns: "any communication
 * that is currently using this datatype will complete normally" (MPI_TYPE_FREE). The layer keeps
 * its own duplicate for what it does later (MPICH's dtype_send freed the type under 128 packed
 * receives). */
static void hold_type(ml_req_t *r)
{
    if (!type_needed_later(r))
        return;
    MPI_Datatype own;
    if (PMPI_Type_dup(r->type, &own) != MPI_SUCCESS)
        ml_pb_fail("MPI_Type_dup failed on the datatype of a pending operation");
    r->type = own;
    r->type_held = 1;
}

int ml_req_record(ml_req_t *r, int rc, MPI_Request handle, int active)
{
    if (rc != MPI_SUCCESS) {
        ml_req_free(r);
        return rc;
    }
    if (!r->lean) /* a lean record's type is predefined */
        hold_type(r);
    r->handle = handle;
    r->active = active;
    ml_req_insert(r);
    return rc;
}

static size_t find_slot(MPI_Request handle)
{
    if (!n_slots)
        return SIZE_MAX;
    for (size_t i = slot_of(key_of(handle)), probes = 0; slots[i] && probes < n_slots;
         i = (i + 1) & (n_slots - 1), probes++)
        if (slots[i]->handle == handle)
            return i;
    return SIZE_MAX;
}

ml_req_t *ml_req_find(MPI_Request handle)
{
    if (handle == MPI_REQUEST_NULL)
        return NULL;
    size_t i = find_slot(handle);
    return i == SIZE_MAX ? NULL : slots[i];
}

void ml_req_remove(ml_req_t *r)
{
    size_t i = r->slot;
    if (i >= n_slots || slots[i] != r) /* not in the table (a stale slot holds another or none) */
        return;
    /* Backward shift: a later record of the run whose home slot is not cyclically in (i, j]
     * would no longer be found past the hole at i, so it moves into it and leaves its own. */
    size_t mask = n_slots - 1;
    for (size_t j = (i + 1) & mask; slots[j]; j = (j + 1) & mask) {
        if (((j - slots[j]->home) & mask) >= ((j - i) & mask)) {
            put(slots[j], i);
            i = j;
        }
    }
    slots[i] = NULL;
    n_live--;
}

/* Records of completed requests, kept for the next ones: a malloc and a free per message showed
 * in the profile of small messages. */
static ml_req_t *spare_records;

ml_req_t *ml_req_new(ml_req_kind_t kind)
{
    ml_req_t *r = spare_records;
    if (r)
        spare_records = r->pending_next;
    else if (!(r = malloc(sizeof *r)))
        ml_pb_fail("out of memory for a request record");
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->handle = MPI_REQUEST_NULL;
    r->wire_type = MPI_DATATYPE_NULL;
    r->pb_request = MPI_REQUEST_NULL;
    return r;
}

void ml_req_describe(ml_req_t *r, const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm)
{
    r->buf = (void *)buf;
    r->count = count;
    r->type = type;
    r->peer = peer;
    r->tag = tag;
    r->comm = comm;
}

void ml_req_free(ml_req_t *r)
{
    if (!r)
        return;
    if (r->lean) { /* nothing of its own: its pair's pb and struct type */
        ml_pb_kept_record_done(r);
        return;
    }
    if (r->pb_request != MPI_REQUEST_NULL) { /* a pb message still going: left in flight */
        ml_pb_in_flight_add(r->pb_request, r->pb);
        r->pb = NULL;
    }
    ml_pb_buffer_put(r->staging);
    ml_pb_give_back(r);
    if (r->wire_type != MPI_DATATYPE_NULL)
        PMPI_Type_free(&r->wire_type);
    if (r->type_held)
        PMPI_Type_free(&r->type);
    if (r->pair)
        ml_pb_pair_free(r->pair);
    r->pending_next = spare_records;
    spare_records = r;
}

/* ---- pooled buffers ----------------------------------------------------------------------------
 * Power-of-two size classes, a free list each: a ping-pong reuses the same buffer every time
 * instead of a malloc and free per message. The class is stored in front of the buffer. */

#define N_CLASSES 48
#define HEADER 16 /* keeps the buffer 16-byte aligned */
static void *free_lists[N_CLASSES];

static unsigned class_of(size_t bytes)
{
    unsigned c = 6; /* 64 bytes at least */
    while (((size_t)1 << c) < bytes)
        c++;
    return c;
}

void *ml_pb_buffer_get(size_t bytes)
{
    unsigned c = class_of(bytes);
    unsigned char *block = free_lists[c];
    if (block) {
        memcpy(&free_lists[c], block, sizeof(void *));
    } else {
        block = malloc(HEADER + ((size_t)1 << c));
        if (!block)
            ml_pb_fail("out of memory for a %zu-byte buffer", bytes);
    }
    memcpy(block + sizeof(void *), &c, sizeof c);
    return block + HEADER;
}

void ml_pb_buffer_put(void *buffer)
{
    if (!buffer)
        return;
    unsigned char *block = (unsigned char *)buffer - HEADER;
    unsigned c;
    memcpy(&c, block + sizeof(void *), sizeof c);
    memcpy(block, &free_lists[c], sizeof(void *));
    free_lists[c] = block;
}
