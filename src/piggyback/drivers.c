/* Built-in drivers, chosen by MPILENS_PB_DRIVER when no tool installed handlers:
 *   check    each pb names its message: sender rank, tag, payload bytes, the per-stream sequence
 *            number, and a pattern over the rest of the pb. The receiver verifies every field
 *            against the message it completed, and at MPI_Finalize that each stream (sender,
 *            tag, communicator) brought sequence numbers 0..n-1 exactly once. Errors are
 *            counted at every rank and reported by rank 0.
 *   lamport  a Lamport clock (a real use): +1 at each send, max(own, received) + 1 at each
 *            receive; every rank's clock is printed at MPI_Finalize.
 *   bytes    opaque bytes, filled and not read: what a tool of that pb size costs, for the
 *            benchmark. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pb.h"

/* ---- tables: per (communicator, peer, tag), a few counters ----------------------------------- */

typedef struct {
    uint64_t comm; /* a communicator's serial number (below), or in `named` its handle's bits */
    int peer, tag, used;
    uint64_t n, sum, sum_squares;
} stream_t;

typedef struct {
    stream_t *slots;
    size_t n_slots, n_used;
} streams_t;

static size_t stream_hash(uint64_t comm, int peer, int tag, size_t n)
{
    uint64_t key =
        comm * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(unsigned)peer * 0xff51afd7ed558ccdULL ^ (uint64_t)(unsigned)tag;
    key ^= key >> 31;
    return (size_t)key & (n - 1);
}

static stream_t *stream_get(streams_t *t, uint64_t comm, int peer, int tag);

static void streams_grow(streams_t *t)
{
    streams_t bigger = {calloc(t->n_slots ? 2 * t->n_slots : 64, sizeof(stream_t)), t->n_slots ? 2 * t->n_slots : 64,
                        0};
    if (!bigger.slots)
        ml_pb_fail("out of memory for the check driver's streams");
    for (size_t i = 0; i < t->n_slots; i++)
        if (t->slots[i].used) {
            stream_t *s = stream_get(&bigger, t->slots[i].comm, t->slots[i].peer, t->slots[i].tag);
            *s = t->slots[i];
        }
    free(t->slots);
    *t = bigger;
}

static stream_t *stream_get(streams_t *t, uint64_t comm, int peer, int tag)
{
    if (2 * (t->n_used + 1) > t->n_slots)
        streams_grow(t);
    size_t i = stream_hash(comm, peer, tag, t->n_slots);
    while (t->slots[i].used && !(t->slots[i].comm == comm && t->slots[i].peer == peer && t->slots[i].tag == tag))
        i = (i + 1) & (t->n_slots - 1);
    if (!t->slots[i].used) {
        t->slots[i] = (stream_t){comm, peer, tag, 1, 0, 0, 0};
        t->n_used++;
    }
    return &t->slots[i];
}

/* ---- communicators: a serial number each, never reused -----------------------------------------
 * MPI gives a new communicator the handle of a freed one on some ranks and not on others (a rank
 * may make communicators of its own in between), so streams keyed by handle would go on with a
 * freed communicator's numbers at one end and start again at the other (MPICH's pt2pt/probe_unexp
 * showed it). Each communicator gets a serial number in an attribute of the layer's own, which
 * MPI_Comm_dup does not copy, read whenever an operation names the communicator: its handle is
 * valid then. A completion, which may come after the program freed the communicator, finds the
 * serial by handle in `named`, where a handle keeps it until an operation names the handle's next
 * communicator; MPI reuses a handle only once every operation on the freed one has completed. */

static int serial_keyval = MPI_KEYVAL_INVALID;
static uint64_t last_serial;
static streams_t named; /* (handle's bits, 0, 0) -> n: the serial of the handle's communicator */

static uint64_t handle_bits(MPI_Comm comm)
{
    uint64_t bits = 0;
    memcpy(&bits, &comm, sizeof comm < sizeof bits ? sizeof comm : sizeof bits);
    return bits;
}

void ml_pb_drivers_comm_named(MPI_Comm comm)
{
    if (serial_keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL)
        return;
    void *value;
    int found = 0;
    PMPI_Comm_get_attr(comm, serial_keyval, &value, &found);
    if (!found) {
        value = (void *)(uintptr_t)++last_serial;
        PMPI_Comm_set_attr(comm, serial_keyval, value);
    }
    stream_get(&named, handle_bits(comm), 0, 0)->n = (uint64_t)(uintptr_t)value;
}

/* The serial of the communicator `comm` names (named by an operation before). */
static uint64_t comm_serial(MPI_Comm comm) { return stream_get(&named, handle_bits(comm), 0, 0)->n; }

static void serials_start(void)
{
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &serial_keyval, NULL);
}

static void serials_stop(void)
{
    PMPI_Comm_free_keyval(&serial_keyval);
    free(named.slots);
    named = (streams_t){0};
}

/* ---- check ------------------------------------------------------------------------------------ */

typedef struct {
    int32_t source, tag;
    uint64_t payload_bytes, sequence;
} check_pb_t;

static streams_t sent, received;
static uint64_t check_messages, check_errors;
#define ERRORS_SHOWN 5

static unsigned char pattern(uint64_t sequence, size_t k) { return (unsigned char)(sequence * 31 + k); }

static void check_produce(void *pb, size_t size, int dest, int tag, MPI_Comm comm, size_t payload_bytes, void *context)
{
    (void)context;
    int me;
    PMPI_Comm_rank(comm, &me);
    stream_t *s = stream_get(&sent, comm_serial(comm), dest, tag);
    check_pb_t head = {me, tag, payload_bytes, s->n++};
    memcpy(pb, &head, sizeof head);
    for (size_t k = sizeof head; k < size; k++)
        ((unsigned char *)pb)[k] = pattern(head.sequence, k);
}

int ml_pb_drivers_number_streams(void) { return ml_pb.producer == check_produce; }

void ml_pb_drivers_withdrawn(const void *pb, int dest, int tag, MPI_Comm comm)
{
    if (!ml_pb_drivers_number_streams())
        return;
    check_pb_t head;
    memcpy(&head, pb, sizeof head);
    stream_t *s = stream_get(&sent, comm_serial(comm), dest, tag);
    if (head.sequence + 1 == s->n) /* the stream's last: the next message takes its number */
        s->n--;
    else
        ml_pb_say(0,
                  "check: a message to rank %d, tag %d was cancelled after later ones of its stream were sent: "
                  "its receiver will count it missing",
                  dest, tag);
}

static void check_error(const char *what, int source, int tag, long long expected, long long got)
{
    if (check_errors++ < ERRORS_SHOWN)
        ml_pb_say(0, "check: message from rank %d, tag %d: %s %lld, expected %lld", source, tag, what, got, expected);
}

static void check_consume(const void *pb, size_t size, int source, int tag, MPI_Comm comm, size_t payload_bytes,
                          void *context)
{
    (void)context;
    check_pb_t head;
    memcpy(&head, pb, sizeof head);
    check_messages++;
    if (head.source != source)
        check_error("piggyback names sender", source, tag, source, head.source);
    if (head.tag != tag)
        check_error("piggyback names tag", source, tag, tag, head.tag);
    if (head.payload_bytes != payload_bytes)
        check_error("piggyback names a payload of bytes", source, tag, (long long)payload_bytes,
                    (long long)head.payload_bytes);
    for (size_t k = sizeof head; k < size; k++)
        if (((const unsigned char *)pb)[k] != pattern(head.sequence, k)) {
            check_error("piggyback byte differs at offset", source, tag, (long long)k, (long long)k);
            break;
        }
    stream_t *s = stream_get(&received, comm_serial(comm), source, tag);
    s->n++;
    s->sum += head.sequence;
    s->sum_squares += head.sequence * head.sequence;
}

/* Each stream must have brought 0..n-1, each once: the sums of the numbers and of their squares
 * tell a missing or repeated one. */
static void check_streams(void)
{
    for (size_t i = 0; i < received.n_slots; i++) {
        const stream_t *s = &received.slots[i];
        if (!s->used)
            continue;
        uint64_t n = s->n, sum = n * (n - 1) / 2, squares = (n - 1) * n * (2 * n - 1) / 6;
        if (s->sum != sum || s->sum_squares != squares)
            if (check_errors++ < ERRORS_SHOWN)
                ml_pb_say(0,
                          "check: the %llu messages from rank %d, tag %d (communicator %llu) did not bring "
                          "sequence numbers 0 to %llu once each",
                          (unsigned long long)n, s->peer, s->tag, (unsigned long long)s->comm,
                          (unsigned long long)n - 1);
    }
}

/* ---- lamport ---------------------------------------------------------------------------------- */

static uint64_t clock_value;

static void lamport_produce(void *pb, size_t size, int dest, int tag, MPI_Comm comm, size_t payload_bytes,
                            void *context)
{
    (void)size, (void)dest, (void)tag, (void)comm, (void)payload_bytes, (void)context;
    clock_value++;
    memcpy(pb, &clock_value, sizeof clock_value);
}

static void lamport_consume(const void *pb, size_t size, int source, int tag, MPI_Comm comm, size_t payload_bytes,
                            void *context)
{
    (void)size, (void)source, (void)tag, (void)comm, (void)payload_bytes, (void)context;
    uint64_t theirs;
    memcpy(&theirs, pb, sizeof theirs);
    clock_value = (theirs > clock_value ? theirs : clock_value) + 1;
}

/* ---- bytes ------------------------------------------------------------------------------------ */

static void bytes_produce(void *pb, size_t size, int dest, int tag, MPI_Comm comm, size_t payload_bytes, void *context)
{
    (void)dest, (void)tag, (void)comm, (void)payload_bytes, (void)context;
    memset(pb, 0x5a, size);
}

/* ---- selection and reports -------------------------------------------------------------------- */

typedef enum { DRIVER_NONE, DRIVER_CHECK, DRIVER_LAMPORT, DRIVER_BYTES } driver_t;
static driver_t driver;

void ml_pb_drivers_init(MPI_Comm world)
{
    (void)world;
    const char *name = getenv("MPILENS_PB_DRIVER");
    if (!name || !*name || strcmp(name, "none") == 0)
        return;
    if (strcmp(name, "check") == 0) {
        driver = DRIVER_CHECK;
        serials_start();
        if (ml_pb.size < sizeof(check_pb_t))
            ml_pb_fail("the check driver needs MPILENS_PB_SIZE of at least %zu bytes (it is %zu)", sizeof(check_pb_t),
                       ml_pb.size);
        mpilens_pb_set_handlers(check_produce, check_consume, NULL);
    } else if (strcmp(name, "lamport") == 0) {
        driver = DRIVER_LAMPORT;
        if (ml_pb.size < sizeof clock_value)
            ml_pb_fail("the lamport driver needs MPILENS_PB_SIZE of at least %zu bytes (it is %zu)", sizeof clock_value,
                       ml_pb.size);
        mpilens_pb_set_handlers(lamport_produce, lamport_consume, NULL);
    } else if (strcmp(name, "bytes") == 0) {
        driver = DRIVER_BYTES;
        mpilens_pb_set_handlers(bytes_produce, NULL, NULL);
    } else {
        ml_pb_fail("unknown driver \"%s\" in MPILENS_PB_DRIVER: expected check, lamport, bytes or none", name);
    }
}

void ml_pb_drivers_finalize(MPI_Comm world)
{
    int rank, size;
    PMPI_Comm_rank(world, &rank);
    PMPI_Comm_size(world, &size);
    if (driver == DRIVER_CHECK) {
        check_streams();
        unsigned long long mine[2] = {check_messages, check_errors}, all[2];
        PMPI_Reduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, world);
        if (rank == 0)
            ml_pb_say(1, "check (%s, %zu-byte pb): %llu messages verified, %llu errors", ml_pb.method->name, ml_pb.size,
                      all[0], all[1]);
        serials_stop();
    } else if (driver == DRIVER_LAMPORT) {
        unsigned long long mine = clock_value, *all = rank == 0 ? malloc((size_t)size * sizeof *all) : NULL;
        PMPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, 0, world);
        if (rank == 0) {
            char line[4096];
            size_t used = 0;
            for (int i = 0; i < size && used < sizeof line - 24; i++)
                used += (size_t)snprintf(line + used, sizeof line - used, " %llu", all[i]);
            ml_pb_say(1, "lamport clocks at MPI_Finalize:%s", line);
        }
        free(all);
    }
    free(sent.slots);
    free(received.slots);
}
