/* The in-band methods: pb and payload in one message (seed 001, §2.1 pack and §2.2 datatypes).
 *
 * Wire format: P pb bytes then the payload ("before"), or the payload then P pb bytes ("after").
 * A sender builds it either by packing both into a pooled staging buffer (sent as MPI_PACKED) or
 * with a struct datatype of absolute addresses from MPI_BOTTOM (no copy). A receiver takes it
 * either into a staging buffer sized with MPI_Pack_size, received as MPI_PACKED (which matches
 * any message) and unpacked, or, when the pb comes first, straight into a struct type. Where the
 * pb comes last a struct receive would be wrong for a message shorter than the receive: its pb
 * would land in the user's buffer; so "after" always receives through staging. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pb.h"

/* ---- datatypes: size, and whether the data is one contiguous run of bytes -----------------------
 * A payload of a predefined type without holes is copied with memcpy, with no MPI_Pack call: on
 * the small messages where every nanosecond shows, that is most of the layer's cost. Derived types
 * are always packed (one whose bytes are contiguous may still list them out of order), and asked
 * each time, since their handles may be freed and reused; predefined ones are remembered. */

typedef struct {
    MPI_Datatype type;
    MPI_Count size;
    int contiguous, predefined, known;
} type_info_t;

static type_info_t predefined[64];

/* What is known of `type`: a predefined type's entry in the table, a derived type's in a scratch
 * entry valid until the next call (the layer runs one call at a time, docs/piggyback.md). */
static const type_info_t *type_info(MPI_Datatype type)
{
    static const type_info_t *last; /* a program sends one type again and again: one compare */
    if (last && last->type == type)
        return last;
    uint64_t key = 0;
    memcpy(&key, &type, sizeof type < sizeof key ? sizeof type : sizeof key);
    type_info_t *slot = &predefined[(key ^ key >> 7 ^ key >> 17) % 64];
    if (slot->known && slot->type == type)
        return last = slot;
    int integers, addresses, types, combiner;
    PMPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner);
    type_info_t info = {type, 0, 0, 0, 1};
    PMPI_Type_size_x(type, &info.size);
    if (combiner != MPI_COMBINER_NAMED) {
        static type_info_t derived;
        derived = info;
        return &derived;
    }
    info.predefined = 1;
    MPI_Count lb, extent;
    PMPI_Type_get_true_extent_x(type, &lb, &extent);
    info.contiguous = lb == 0 && extent == info.size;
    *slot = info; /* `last` may point here: it then describes the new type, and is checked as such */
    return last = slot;
}

size_t ml_pb_payload_bytes(int count, MPI_Datatype type)
{
    return (size_t)type_info(type)->size * (size_t)(count > 0 ? count : 0);
}

void ml_pb_produce(unsigned char *pb, int dest, int tag, MPI_Comm comm, size_t payload_bytes)
{
    if (!ml_pb.size)
        return;
    if (ml_pb.producer)
        ml_pb.producer(pb, ml_pb.size, dest, tag, comm, payload_bytes, ml_pb.context);
    else
        memset(pb, 0, ml_pb.size);
}

void ml_pb_consume(const unsigned char *pb, int source, int tag, MPI_Comm comm, size_t payload_bytes)
{
    if (ml_pb.consumer)
        ml_pb.consumer(pb, ml_pb.size, source, tag, comm, payload_bytes, ml_pb.context);
}

int ml_pb_send_staged(size_t payload_bytes)
{
    if (ml_pb.method->automatic)
        return payload_bytes < ml_pb.auto_send_datatype_from;
    return ml_pb.method->mechanism == PB_PACK;
}

int ml_pb_recv_staged(size_t payload_bytes)
{
    if (ml_pb.method->place == PB_AFTER)
        return 1;
    if (ml_pb.method->automatic)
        return payload_bytes < ml_pb.auto_recv_datatype_from;
    return ml_pb.method->mechanism == PB_PACK;
}

/* A struct type joining the pb bytes and the user's payload, at absolute addresses. */
static int struct_type(const unsigned char *pb, const void *buf, int count, MPI_Datatype type, MPI_Datatype *out)
{
    MPI_Aint pb_at, buf_at;
    PMPI_Get_address(pb, &pb_at);
    PMPI_Get_address(buf, &buf_at);
    /* A payload of no bytes is left out: at a null buffer (MPI_Send(NULL, 1, empty_type), legal)
     * it would put the type's lower bound at address 0, where MPICH takes the whole message for
     * a null buffer and refuses it. */
    if (ml_pb_payload_bytes(count, type) == 0) {
        int length = (int)ml_pb.size;
        MPI_Datatype byte = MPI_BYTE;
        int rc = PMPI_Type_create_struct(1, &length, &pb_at, &byte, out);
        return rc == MPI_SUCCESS ? PMPI_Type_commit(out) : rc;
    }
    int before = ml_pb.method->place == PB_BEFORE;
    int lengths[2] = {before ? (int)ml_pb.size : count, before ? count : (int)ml_pb.size};
    MPI_Aint displacements[2] = {before ? pb_at : buf_at, before ? buf_at : pb_at};
    MPI_Datatype types[2] = {before ? MPI_BYTE : type, before ? type : MPI_BYTE};
    int rc = PMPI_Type_create_struct(2, lengths, displacements, types, out);
    return rc == MPI_SUCCESS ? PMPI_Type_commit(out) : rc;
}

/* ---- blocking calls: one pb buffer per direction, and their struct types kept --------------------
 * A blocking call's pb lives in the layer's buffer for its direction, so that the struct type
 * joining it with the same user buffer, count and predefined type is the same from one call to
 * the next (a ping-pong, a halo exchange): it is kept and reused rather than made, committed and
 * freed each time, which costs microseconds. Only predefined user types: a derived type's handle
 * may be freed and given to another type. Handlers must not call MPI point-to-point functions,
 * which would reuse the buffer under them (docs/piggyback.md). */

static unsigned char *direction_pb[2]; /* REQ_SEND, REQ_RECV */

/* The layer's own communicator with this process alone, for unpack_partial. */
static MPI_Comm self_comm = MPI_COMM_NULL;

typedef struct {
    const void *buf;
    int count;
    MPI_Datatype type, wire;
    int used;
} cached_type_t;

/* One cache per direction: a Sendrecv uses a type of each at once, and a new entry frees the one
 * it replaces (one shared cache freed the send's type when the receive's took its slot). */
enum { CACHED_TYPES = 32 };
static cached_type_t cached_types[2][CACHED_TYPES];

static unsigned char *blocking_pb(ml_req_kind_t kind)
{
    if (!direction_pb[kind] && !(direction_pb[kind] = malloc(ml_pb.size ? ml_pb.size : 1)))
        ml_pb_fail("out of memory for the piggyback buffers");
    return direction_pb[kind];
}

static int cached_struct_type(ml_req_t *r, MPI_Datatype *wire_type)
{
    uint64_t key = (uint64_t)(uintptr_t)r->buf ^ (uint64_t)r->count * 0x9e3779b97f4a7c15ULL;
    cached_type_t *slot = &cached_types[r->kind][(key ^ key >> 11 ^ key >> 29) % CACHED_TYPES];
    if (!(slot->used && slot->buf == r->buf && slot->count == r->count && slot->type == r->type)) {
        MPI_Datatype made;
        int rc = struct_type(r->pb, r->buf, r->count, r->type, &made);
        if (rc != MPI_SUCCESS)
            return rc;
        if (slot->used)
            PMPI_Type_free(&slot->wire);
        *slot = (cached_type_t){r->buf, r->count, r->type, made, 1};
    }
    *wire_type = slot->wire;
    r->type_cached = 1;
    return MPI_SUCCESS;
}

/* ---- nonblocking calls: struct types kept with a pb buffer of their own --------------------------
 * A nonblocking message's pb comes from the pool, a different buffer from one message to the next,
 * so a struct type joining it with the user's buffer was made, committed and freed per message:
 * 310-350 ns on Open MPI 4.1 and MPICH 4.0, a fifth of a 4 KiB message's time over shared memory.
 * Programs send from and receive into the same buffers again and again (a window of messages, a
 * halo exchange), so for each (buffer, count, predefined type) the layer keeps idle pairs of a pb
 * buffer and the struct type pointing at it; a message takes one (several messages from one
 * buffer may be pending at once, each with its own pair) and gives it back when its request is
 * freed. Keys live in a small open-addressed table per direction; a key pushed out by another
 * frees its idle pairs, and a pair coming back to a key no longer there is freed. */

enum { KEPT_SLOTS = 256, KEPT_PROBES = 4, KEPT_MAX = 4096 };

typedef struct {
    const void *buf;
    int count;
    MPI_Datatype type;
    int used;
    ml_pb_kept_t *idle;
} kept_key_t;

struct ml_pb_kept {
    const void *buf;
    int count;
    MPI_Datatype type;
    ml_req_kind_t kind;
    unsigned char *pb;
    MPI_Datatype wire;
    kept_key_t *key;    /* where its key was when it was taken: looked at first when it comes back */
    ml_pb_kept_t *next; /* the next idle pair of its key */
    ml_req_t record;    /* the request record of a message that takes the pair by the lean path */
};

static kept_key_t kept_keys[2][KEPT_SLOTS];
static int kept_pairs; /* idle or in use: a bound on the datatypes the layer holds */

static size_t kept_hash(const void *buf, int count)
{
    uint64_t key = (uint64_t)(uintptr_t)buf ^ (uint64_t)count * 0x9e3779b97f4a7c15ULL;
    return (size_t)((key ^ key >> 11 ^ key >> 29) % KEPT_SLOTS);
}

static void kept_free(ml_pb_kept_t *k)
{
    PMPI_Type_free(&k->wire);
    free(k->pb);
    free(k);
    kept_pairs--;
}

static void key_clear(kept_key_t *key)
{
    while (key->idle) {
        ml_pb_kept_t *k = key->idle;
        key->idle = k->next;
        kept_free(k);
    }
    key->used = 0;
}

/* The slot holding (buf, count, type), if any. A slot once used stays used (a key pushed out is
 * replaced in its slot at once), and a key goes to the first free slot of its probes: so a free
 * slot ends the search, and a message that takes no kept pair (a small one) costs one probe
 * where the lean path looks first (ml_pb_kept_record). */
static kept_key_t *key_find(ml_req_kind_t kind, const void *buf, int count, MPI_Datatype type)
{
    size_t h = kept_hash(buf, count);
    for (int i = 0; i < KEPT_PROBES; i++) {
        kept_key_t *key = &kept_keys[kind][(h + (size_t)i) % KEPT_SLOTS];
        if (!key->used)
            return NULL;
        if (key->buf == buf && key->count == count && key->type == type)
            return key;
    }
    return NULL;
}

/* A slot for a new key: a free one among the probes, else the first, its idle pairs freed. */
static kept_key_t *key_make(ml_req_kind_t kind, const void *buf, int count, MPI_Datatype type)
{
    size_t h = kept_hash(buf, count);
    kept_key_t *key = &kept_keys[kind][h];
    for (int i = 0; i < KEPT_PROBES; i++)
        if (!kept_keys[kind][(h + (size_t)i) % KEPT_SLOTS].used) {
            key = &kept_keys[kind][(h + (size_t)i) % KEPT_SLOTS];
            break;
        }
    key_clear(key);
    *key = (kept_key_t){buf, count, type, 1, NULL};
    return key;
}

/* The pair's own record, filled once with what the general path learns of each message (r's), for
 * the messages that take the pair by the lean path (ml_pb_kept_record). Its other fields are
 * those of a fresh record; completion leaves them so (ml_pb_complete). */
static void record_init(ml_pb_kept_t *k, const ml_req_t *r)
{
    k->record = (ml_req_t){.handle = MPI_REQUEST_NULL,
                           .kind = r->kind,
                           .buf = r->buf,
                           .count = r->count,
                           .type = r->type,
                           .type_cached = 1,
                           .contiguous = r->contiguous,
                           .predefined = 1,
                           .payload_bytes = r->payload_bytes,
                           .pb = k->pb,
                           .kept = k,
                           .lean = 1,
                           .wire_type = MPI_DATATYPE_NULL,
                           .pb_request = MPI_REQUEST_NULL};
}

/* A pair for r's message (its pb and struct type set in r), or 0 where the layer keeps none. */
static int take_kept(ml_req_t *r, MPI_Datatype *wire_type)
{
    kept_key_t *key = key_find(r->kind, r->buf, r->count, r->type);
    ml_pb_kept_t *k = key ? key->idle : NULL;
    if (k) {
        key->idle = k->next;
        k->key = key; /* it may have come back to its key in another slot */
    } else {
        if (kept_pairs >= KEPT_MAX || !(k = malloc(sizeof *k)))
            return 0;
        /* zeroed: struct_type only locates the pb, but GCC takes its const pointer for a read of
         * fresh memory and warns (-Wmaybe-uninitialized, builds without link-time optimisation) */
        if (!(k->pb = calloc(1, ml_pb.size ? ml_pb.size : 1)) ||
            struct_type(k->pb, r->buf, r->count, r->type, &k->wire) != MPI_SUCCESS) {
            free(k->pb);
            free(k);
            return 0;
        }
        kept_pairs++;
        if (!key)
            key = key_make(r->kind, r->buf, r->count, r->type);
        *k = (ml_pb_kept_t){r->buf, r->count, r->type, r->kind, k->pb, k->wire, key, NULL, {0}};
        record_init(k, r);
    }
    r->kept = k;
    r->pb = k->pb;
    r->type_cached = 1;
    *wire_type = k->wire;
    return 1;
}

static int key_holds(const kept_key_t *key, const ml_pb_kept_t *k)
{
    return key->used && key->buf == k->buf && key->count == k->count && key->type == k->type;
}

/* A pair back to its key's idle list, found where it was taken from unless another key took
 * that slot meanwhile; freed when its key is gone. */
static void kept_return(ml_pb_kept_t *k)
{
    kept_key_t *key = key_holds(k->key, k) ? k->key : key_find(k->kind, k->buf, k->count, k->type);
    if (!key) {
        kept_free(k);
        return;
    }
    k->next = key->idle;
    key->idle = k;
}

ml_req_t *ml_pb_kept_record(ml_req_kind_t kind, const void *buf, int count, MPI_Datatype type, MPI_Datatype *wire_type)
{
    kept_key_t *key = key_find(kind, buf, count, type);
    ml_pb_kept_t *k = key ? key->idle : NULL;
    if (!k)
        return NULL;
    key->idle = k->next;
    k->key = key;
    *wire_type = k->wire;
    return &k->record;
}

void ml_pb_kept_record_done(ml_req_t *r) { kept_return(r->kept); }

/* Whether r's message may use a kept pair: nonblocking (a blocking call has the direction's
 * buffer), not persistent (its struct type is its own for its whole life), and a predefined type
 * (a derived type's handle may be freed and given to another type). */
static int keeps_pair(const ml_req_t *r) { return !r->blocking && !r->persistent && r->predefined; }

/* The pb buffer of r: the direction's own for a blocking call, else one from the pool. */
static void take_pb(ml_req_t *r)
{
    r->pb_fixed = r->blocking;
    r->pb = r->blocking ? blocking_pb(r->kind) : ml_pb_buffer_get(ml_pb.size);
}

/* The pb buffer of an unstaged message and its struct type: cached for a blocking call with a
 * predefined type, a kept pair for a nonblocking one, else made for this message. */
static int take_pb_and_struct_type(ml_req_t *r, MPI_Datatype *wire_type)
{
    if (keeps_pair(r) && take_kept(r, wire_type))
        return MPI_SUCCESS;
    take_pb(r);
    if (r->blocking && r->predefined)
        return cached_struct_type(r, wire_type);
    return struct_type(r->pb, r->buf, r->count, r->type, wire_type);
}

/* Whether wire_type was made for r's message alone (not a cache's or kept pair's, and not the
 * packed bytes of a staged message), so that r's call frees it. */
static int made_for_message(const ml_req_t *r, MPI_Datatype wire_type)
{
    return !r->staged && !r->type_cached && wire_type != MPI_DATATYPE_NULL;
}

void ml_pb_wire_type_done(ml_req_t *r, MPI_Datatype *wire_type)
{
    if (!made_for_message(r, *wire_type))
        return;
    if (r->persistent)
        r->wire_type = *wire_type;
    else
        PMPI_Type_free(wire_type);
}

void ml_pb_release(ml_req_t *r, MPI_Datatype *wire_type)
{
    if (made_for_message(r, *wire_type))
        PMPI_Type_free(wire_type);
    ml_pb_buffer_put(r->staging);
    r->staging = NULL;
    ml_pb_give_back(r);
}

void ml_pb_give_back(ml_req_t *r)
{
    if (r->kept)
        kept_return(r->kept);
    else if (!r->pb_fixed)
        ml_pb_buffer_put(r->pb);
    r->kept = NULL;
    r->pb = NULL;
}

void ml_pb_inband_finalize(void)
{
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < CACHED_TYPES; i++)
            if (cached_types[k][i].used)
                PMPI_Type_free(&cached_types[k][i].wire);
    memset(cached_types, 0, sizeof cached_types);
    if (self_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&self_comm);
    for (int k = 0; k < 2; k++) {
        free(direction_pb[k]);
        direction_pb[k] = NULL;
        for (int i = 0; i < KEPT_SLOTS; i++)
            key_clear(&kept_keys[k][i]);
    }
}

/* MPI_Pack and MPI_Unpack of a payload at MPI_BOTTOM (absolute addresses): MPICH refuses a null
 * buffer (pmodels/mpich#6410), so the same bytes are described from a non-null base with the
 * displacement shifted back. The type is freed by the caller when it is not the user's. */
static char bottom_base;

static void payload_view(const ml_req_t *r, void **buf, int *count, MPI_Datatype *type)
{
    *buf = r->buf;
    *count = r->count;
    *type = r->type;
    if (r->buf != MPI_BOTTOM)
        return;
    MPI_Aint base;
    PMPI_Get_address(&bottom_base, &base);
    MPI_Aint displacement = -base;
    PMPI_Type_create_struct(1, &r->count, &displacement, &r->type, type);
    PMPI_Type_commit(type);
    *buf = &bottom_base;
    *count = 1;
}

static void payload_view_free(const ml_req_t *r, MPI_Datatype *type)
{
    if (*type != r->type)
        PMPI_Type_free(type);
}

/* Packs pb and payload into r's staging buffer, in wire order; returns the bytes used. */
static int pack_message(ml_req_t *r, int *used)
{
    int position = 0, rc;
    if (r->contiguous) {
        size_t payload = r->payload_bytes;
        int before = ml_pb.method->place == PB_BEFORE;
        unsigned char *staging = r->staging;
        memcpy(staging + (before ? 0 : payload), r->pb, ml_pb.size);
        if (payload)
            memcpy(staging + (before ? ml_pb.size : 0), r->buf, payload);
        *used = (int)(payload + ml_pb.size);
        return MPI_SUCCESS;
    }
    if (ml_pb.method->place == PB_BEFORE) {
        memcpy(r->staging, r->pb, ml_pb.size);
        position = (int)ml_pb.size;
    }
    void *buf;
    int count;
    MPI_Datatype type;
    payload_view(r, &buf, &count, &type);
    rc = PMPI_Pack(buf, count, type, r->staging, (int)r->staging_size, &position, r->comm);
    payload_view_free(r, &type);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ml_pb.method->place == PB_AFTER) {
        memcpy((unsigned char *)r->staging + position, r->pb, ml_pb.size);
        position += (int)ml_pb.size;
    }
    *used = position;
    return MPI_SUCCESS;
}

/* A staging buffer for r's message: the payload's bytes plus the pb, or, for a payload that is
 * not contiguous, what MPI_Pack_size says it needs (more than its bytes where packing adds some). */
static int staging_for(ml_req_t *r)
{
    int packed = 0, rc = MPI_SUCCESS;
    if (r->contiguous)
        packed = (int)r->payload_bytes;
    else
        rc = PMPI_Pack_size(r->count, r->type, r->comm, &packed);
    r->staging_size = (size_t)packed + ml_pb.size;
    r->staging = ml_pb_buffer_get(r->staging_size);
    return rc;
}

/* What every message needs known once: its payload's bytes, whether they are contiguous and
 * whether its type is predefined. */
static void learn_payload(ml_req_t *r)
{
    const type_info_t *info = type_info(r->type);
    r->contiguous = info->contiguous;
    r->predefined = info->predefined;
    r->payload_bytes = (size_t)info->size * (size_t)(r->count > 0 ? r->count : 0);
}

int ml_pb_send_prepare(ml_req_t *r, const void **wire_buf, int *wire_count, MPI_Datatype *wire_type)
{
    learn_payload(r);
    size_t payload = r->payload_bytes;
    r->staged = r->staged || ml_pb_send_staged(payload);
    if (!r->staged) {
        int rc = take_pb_and_struct_type(r, wire_type);
        if (!r->persistent)
            ml_pb_produce(r->pb, r->peer, r->tag, r->comm, payload);
        *wire_buf = MPI_BOTTOM;
        *wire_count = 1;
        return rc;
    }
    take_pb(r);
    if (!r->persistent)
        ml_pb_produce(r->pb, r->peer, r->tag, r->comm, payload);
    int rc = staging_for(r);
    if (rc != MPI_SUCCESS)
        return rc;
    *wire_buf = r->staging;
    *wire_type = r->contiguous ? MPI_BYTE : MPI_PACKED;
    return pack_message(r, wire_count);
}

int ml_pb_send_restart(ml_req_t *r)
{
    ml_pb_produce(r->pb, r->peer, r->tag, r->comm, r->payload_bytes);
    int used;
    return r->staged ? pack_message(r, &used) : MPI_SUCCESS;
}

int ml_pb_recv_prepare(ml_req_t *r, void **wire_buf, int *wire_count, MPI_Datatype *wire_type)
{
    learn_payload(r);
    r->staged = r->staged || ml_pb_recv_staged(r->payload_bytes);
    if (!r->staged) {
        *wire_buf = MPI_BOTTOM;
        *wire_count = 1;
        return take_pb_and_struct_type(r, wire_type);
    }
    int rc = staging_for(r);
    *wire_buf = r->staging;
    *wire_count = (int)r->staging_size;
    *wire_type = r->contiguous ? MPI_BYTE : MPI_PACKED;
    return rc;
}

/* The bytes a receive got. Open MPI and MPICH keep them in their public status structure, read
 * here as their MPI_Get_count reads them: the call checks its arguments and divides by the
 * type's size, which on a 1-byte message is a good part of the layer's whole cost. Elsewhere,
 * MPI_Get_count (cheaper than Open MPI's MPI_Get_elements, which walks the type), and beyond an
 * int's reach MPI_Get_elements_x. */
static MPI_Count status_bytes(const MPI_Status *status)
{
#if defined(OPEN_MPI)
    return (MPI_Count)status->_ucount;
#elif defined(MPICH)
    return (MPI_Count)((uint64_t)((unsigned)status->count_hi_and_cancelled >> 1) << (8 * sizeof(int)) |
                       (unsigned)status->count_lo);
#else
    int small = MPI_UNDEFINED;
    MPI_Count bytes = 0;
    PMPI_Get_count(status, MPI_BYTE, &small);
    if (small != MPI_UNDEFINED)
        bytes = small;
    else
        PMPI_Get_elements_x(status, MPI_BYTE, &bytes);
    return bytes;
#endif
}

/* Whether the operation of `status` was cancelled, read as MPI_Test_cancelled reads it where
 * the structure is known: a call per received message otherwise (its argument checks cost more
 * than the read). */
static int status_cancelled(const MPI_Status *status)
{
#if defined(OPEN_MPI)
    return status->_cancelled != 0;
#elif defined(MPICH)
    return status->count_hi_and_cancelled & 1;
#else
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);
    return cancelled;
#endif
}

static size_t received_bytes(const MPI_Status *status)
{
    MPI_Count bytes = status_bytes(status);
    if (bytes < (MPI_Count)ml_pb.size)
        ml_pb_fail("a message of %lld bytes from rank %d (tag %d) carries no piggyback: does every rank "
                   "run the layer with the same method?",
                   (long long)bytes, status->MPI_SOURCE, status->MPI_TAG);
    return (size_t)bytes;
}

/* A payload that ends inside an element of the receive's type (legal: MPI_Get_count is then
 * MPI_UNDEFINED, MPI_Get_elements counts the basic elements that came). MPI_Unpack takes whole
 * elements only, so the packed bytes go to this process itself as MPI_PACKED, which the receive's
 * (count, type) matches, on a communicator of the layer's own: MPI fills the elements and the
 * part of the last one exactly as the receive without the layer would. Rare: costs a message. */
static void unpack_partial(const ml_req_t *r, const unsigned char *packed, size_t payload)
{
    if (self_comm == MPI_COMM_NULL)
        PMPI_Comm_dup(MPI_COMM_SELF, &self_comm);
    void *buf;
    int count;
    MPI_Datatype type;
    payload_view(r, &buf, &count, &type);
    PMPI_Sendrecv(packed, (int)payload, MPI_PACKED, 0, 0, buf, count, type, 0, 0, self_comm, MPI_STATUS_IGNORE);
    payload_view_free(r, &type);
}

/* Unpacks a staged message into the user's buffer; returns the payload's bytes. */
static size_t unpack_message(ml_req_t *r, size_t total, const unsigned char **pb)
{
    size_t payload = total - ml_pb.size;
    int before = ml_pb.method->place == PB_BEFORE;
    *pb = (const unsigned char *)r->staging + (before ? 0 : payload);
    if (r->contiguous) { /* a partial element too is copied as MPI would */
        if (payload)
            memcpy(r->buf, (const unsigned char *)r->staging + (before ? ml_pb.size : 0), payload);
        return payload;
    }
    MPI_Count element = 0;
    PMPI_Type_size_x(r->type, &element);
    int position = before ? (int)ml_pb.size : 0;
    if (payload && (!element || payload % (size_t)element)) {
        unpack_partial(r, (const unsigned char *)r->staging + position, payload);
        return payload;
    }
    int n = payload ? (int)(payload / (size_t)element) : 0;
    if (n > 0) {
        ml_req_t whole = *r;
        whole.count = n;
        void *buf;
        int count;
        MPI_Datatype type;
        payload_view(&whole, &buf, &count, &type);
        PMPI_Unpack(r->staging, (int)total, &position, buf, count, type, r->comm);
        payload_view_free(&whole, &type);
    }
    return payload;
}

int ml_pb_recv_finish(ml_req_t *r, MPI_Status *status, int flags)
{
    if (((flags & ML_FINISH_CANCELLABLE) && status_cancelled(status)) || status->MPI_SOURCE == MPI_PROC_NULL)
        return MPI_SUCCESS;
    size_t total = received_bytes(status), payload;
    const unsigned char *pb = r->pb;
    if (r->staged)
        payload = unpack_message(r, total, &pb);
    else
        payload = total - ml_pb.size;
    if (flags & ML_FINISH_STATUS_SEEN)
        PMPI_Status_set_elements_x(status, MPI_BYTE, (MPI_Count)payload);
    ml_pb_consume(pb, status->MPI_SOURCE, status->MPI_TAG, r->comm, payload);
    return MPI_SUCCESS;
}

void ml_pb_probe_fix(MPI_Status *status)
{
    if (ml_pb.method->mechanism == PB_SEPARATE || status->MPI_SOURCE == MPI_PROC_NULL)
        return;
    PMPI_Status_set_elements_x(status, MPI_BYTE, (MPI_Count)(received_bytes(status) - ml_pb.size));
}

/* ---- small blocking messages, staged on the stack ----------------------------------------------
 * A blocking call's message of a contiguous predefined type that the method stages (pack, auto
 * below its threshold, and every "after" receive) and that fits SMALL_MESSAGE bytes with its pb
 * goes through a buffer on the stack: no record, no pooled buffer, one type lookup. On the small
 * messages of a ping-pong, the layer's bookkeeping cost as much as MPI's own send and receive.
 * The bytes on the wire are those of the general path. */
enum { SMALL_MESSAGE = 512 };

/* The payload's bytes when (count, type) may take the small path, else (size_t)-1. */
static size_t small_payload(int count, MPI_Datatype type)
{
    const type_info_t *info = type_info(type);
    if (!info->contiguous || count < 0)
        return (size_t)-1;
    size_t payload = (size_t)info->size * (size_t)count;
    return payload + ml_pb.size <= SMALL_MESSAGE ? payload : (size_t)-1;
}

int ml_pb_small_send(int (*next)(int, const void *, int, MPI_Datatype, int, int, MPI_Comm), int mode, const void *buf,
                     int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, int *rc)
{
    size_t payload = small_payload(count, type);
    if (payload == (size_t)-1 || !ml_pb_send_staged(payload))
        return 0;
    _Alignas(16) unsigned char wire[SMALL_MESSAGE];
    _Alignas(16) unsigned char pb[SMALL_MESSAGE]; /* produced aligned, wherever it goes */
    int before = ml_pb.method->place == PB_BEFORE;
    unsigned char *pb_at = before ? wire : pb;
    ml_pb_produce(pb_at, dest, tag, comm, payload);
    if (payload)
        memcpy(wire + (before ? ml_pb.size : 0), buf, payload);
    if (!before)
        memcpy(wire + payload, pb, ml_pb.size);
    *rc = next(mode, wire, (int)(payload + ml_pb.size), MPI_BYTE, dest, tag, comm);
    return 1;
}

int ml_pb_small_recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status,
                     int *rc)
{
    size_t posted = small_payload(count, type);
    if (posted == (size_t)-1 || !ml_pb_recv_staged(posted))
        return 0;
    _Alignas(16) unsigned char wire[SMALL_MESSAGE];
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    *rc = ML_NEXT(MPI_Recv)(wire, (int)(posted + ml_pb.size), MPI_BYTE, source, tag, comm, st);
    if (*rc != MPI_SUCCESS)
        return 1;
    size_t payload = received_bytes(st) - ml_pb.size;
    int before = ml_pb.method->place == PB_BEFORE;
    if (payload)
        memcpy(buf, wire + (before ? ml_pb.size : 0), payload);
    if (status != MPI_STATUS_IGNORE)
        PMPI_Status_set_elements_x(status, MPI_BYTE, (MPI_Count)payload);
    ml_pb_consume(wire + (before ? 0 : payload), st->MPI_SOURCE, st->MPI_TAG, comm, payload);
    return 1;
}
