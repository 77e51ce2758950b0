/* Inside libmpilens-piggyback (docs/piggyback.md is the contract, docs/methods/piggyback.md the
 * design).
 *
 * Wire format. The in-band methods (pack, datatype) send one message holding the pb bytes and the
 * payload, pb first ("before") or last ("after"); on a homogeneous machine the bytes on the wire
 * are the same whichever of the two built them, so a receiver may take either apart: a struct
 * datatype (zero copy) where the pb comes first, a staging buffer received as MPI_PACKED (which
 * may receive any message) and unpacked where it comes last, since a message shorter than the
 * receive would otherwise drop its pb into the user's buffer. The separate method sends the pb
 * as a message of its own on a shadow communicator, paired with its payload in matching order
 * (separate.c).
 *
 * Requests. Every request the layer makes for a user's call is recorded under the handle the
 * user holds (requests.c); completion wrappers look the records up before the MPI library
 * completes (and nulls) the handles, then finish what the method needs: unpack, hand the pb to
 * the consumer, correct the status so that it counts the payload only. */
#ifndef MPILENS_PB_INTERNAL_H
#define MPILENS_PB_INTERNAL_H

#include <mpi.h>
#include <stddef.h>

#include "mpilens/piggyback.h"
#include "next.h"

/* Out of line. Each wrapper that replaces an MPI call is flattened (src/wrap/generate_wrappers.py):
 * what it calls is inlined into it, so that the common path makes no call. Left alone, that copied
 * the whole layer into each of its 37 entry points: a 3.9 MB library whose link-time optimisation
 * took 24 of the 42 s of a build. Functions of paths a message takes only under the separate
 * method, or rarely (MPI_Isendrecv's pairs, requests freed while active, a cancelled send, the
 * layer's own buffered copies), stay calls: a few instructions where they run, none elsewhere. */
#define ML_OUT_OF_LINE __attribute__((noinline))
#define ML_RARE __attribute__((noinline, cold))

typedef enum { PB_PACK, PB_DATATYPE, PB_SEPARATE } ml_pb_mechanism_t;
typedef enum { PB_BEFORE, PB_AFTER } ml_pb_place_t;

typedef struct {
    const char *name;
    ml_pb_mechanism_t mechanism; /* for auto: the one used below the thresholds */
    ml_pb_place_t place;
    int automatic;
} ml_pb_method_t;

typedef struct {
    const ml_pb_method_t *method;
    size_t size;
    int frozen; /* MPI_Init fixed size and method */
    int active; /* between MPI_Init and MPI_Finalize: messages carry pb */
    mpilens_pb_producer_t producer;
    mpilens_pb_consumer_t consumer;
    void *context;
    /* auto: payloads of at least this many bytes are sent with a struct datatype, smaller ones
     * packed; received with a struct datatype from this posted size on (docs/piggyback.md) */
    size_t auto_send_datatype_from, auto_recv_datatype_from;
} ml_pb_t;

extern ml_pb_t ml_pb;

/* ---- configuration (config.c) ---------------------------------------------------------------- */

/* Reads the environment and checks that every rank agrees; aborts with the reason otherwise. */
void ml_pb_configure(MPI_Comm world);
/* Prints one line on stderr, prefixed with the library's name (rank 0 only if `once`). */
void ml_pb_say(int once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the reason and aborts the job: the defined outcome of an unusable configuration. */
void ml_pb_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* ---- built-in drivers (drivers.c) ------------------------------------------------------------- */

/* Installs the driver named by MPILENS_PB_DRIVER unless a tool installed handlers. */
void ml_pb_drivers_init(MPI_Comm world);
/* The check driver's report (errors counted at every rank), printed by rank 0. */
void ml_pb_drivers_finalize(MPI_Comm world);
/* A send to (dest, tag, comm) whose pb was `pb` was cancelled, pb and all: the check driver
 * gives its sequence number to the stream's next message, so that the receiver sees no gap. */
void ml_pb_drivers_withdrawn(const void *pb, int dest, int tag, MPI_Comm comm) ML_RARE;
/* Whether withdrawn has anything to do: the check driver numbers each stream's messages. */
int ml_pb_drivers_number_streams(void);
/* An operation names `comm` (a valid handle): the check driver learns which communicator the
 * handle stands for now, since MPI may give a freed communicator's handle to a new one. Every
 * send, receive and matching probe the layer carries a pb for calls it before anything else. */
void ml_pb_drivers_comm_named(MPI_Comm comm);

/* ---- requests (requests.c) -------------------------------------------------------------------- */

/* REQ_PAIR: an MPI_Isendrecv's request, standing for a send and a receive (isendrecv.c);
 * REQ_COMM: an MPI_Comm_idup's, whose communicator gets its shadow when it completes (separate.c) */
typedef enum { REQ_SEND, REQ_RECV, REQ_PAIR, REQ_COMM } ml_req_kind_t;
typedef struct ml_pair ml_pair_t;

typedef struct ml_req ml_req_t;
typedef struct ml_pb_kept ml_pb_kept_t;
struct ml_req {
    MPI_Request handle; /* what the user holds */
    size_t slot;        /* where in the table of records (requests.c) it was put last */
    size_t home;        /* ... and the slot its handle hashes to */
    ml_req_kind_t kind;
    int persistent, active;
    int finished;           /* the layer's part is done (MPI_Request_get_status saw it complete) */
    MPI_Count seen_bytes;   /* ... and the payload's bytes the program's status said then (in-band) */
    int type_held;          /* `type` is the layer's duplicate of the program's, freed with the record */
    int in_snapshot;        /* already in the array being completed (MPICH's shared handles) */
    MPI_Status *completing; /* MPI completed it, with this status, in the call being finished: its
                             * handle is freed, and pairing an earlier receive reads this instead */
    /* the user's view of the operation */
    void *buf;
    int count;
    MPI_Datatype type;
    int peer, tag; /* receive: the pattern (may be wildcards) */
    MPI_Comm comm;
    int send_mode; /* persistent send: which *_init made it */
    /* in-band */
    int blocking;         /* a blocking call: its pb and struct type may be the reused ones */
    int pb_fixed;         /* pb is the layer's buffer for blocking calls (else kept or pooled) */
    int type_cached;      /* wire struct type from the cache: not the caller's to free */
    int staged;           /* the message went through `staging` (packed) */
    int contiguous;       /* ... copied by memcpy, as bytes, rather than packed */
    int predefined;       /* `type` is predefined (a derived type's handle may be given to another) */
    size_t payload_bytes; /* count × the type's size (a receive: at most) */
    void *staging;
    size_t staging_size;
    unsigned char *pb;      /* the pb bytes of this message */
    ml_pb_kept_t *kept;     /* the kept pair pb and the struct type belong to (inband.c), or NULL */
    int lean;               /* the record is its kept pair's own (ml_pb_kept_record): it goes back
                             * with the pair, filled for the next message, and is never freed */
    MPI_Datatype wire_type; /* persistent struct types, freed with the request */
    ml_pair_t *pair;        /* REQ_PAIR: its two requests, freed with it */
    /* separate */
    MPI_Request pb_request; /* a send's pb message (in `pb`) until the send completes */
    ml_req_t *pending_prev, *pending_next;
    int pending;  /* on its communicator's list of receives not yet paired */
    void *shadow; /* while pending: that communicator's shadow, which outlives MPI_Comm_free for it;
                   * REQ_COMM: the shadow of the communicator at buf, until attached */
    void *claim;  /* an MPI_Imrecv under separate-after: the pb receive its probe claimed */
};

ml_req_t *ml_req_new(ml_req_kind_t kind);
/* Fills the user's view of the operation (peer: destination or source pattern). */
void ml_req_describe(ml_req_t *r, const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm);
/* Records `r` under r->handle (set by the caller after the MPI call). */
void ml_req_insert(ml_req_t *r);
ml_req_t *ml_req_find(MPI_Request handle);
/* After the MPI call that made r's request returned rc: records r under `handle` (active, or an
 * inactive persistent request), or frees it when the call failed. Returns rc. */
int ml_req_record(ml_req_t *r, int rc, MPI_Request handle, int active);
void ml_req_remove(ml_req_t *r);
/* Frees the record and what it owns (buffers, types). */
void ml_req_free(ml_req_t *r);
/* Frees a pair's memory (isendrecv.c); NULL does nothing. */
void ml_pb_pair_free(ml_pair_t *pair) ML_RARE;
/* The record of the request at `request` inside pair `r` (isendrecv.c), or NULL. */
ml_req_t *ml_pb_pair_record(ml_req_t *r, const MPI_Request *request) ML_RARE;

/* Pooled byte buffers: staging for packed messages, pb bytes. */
void *ml_pb_buffer_get(size_t bytes);
void ml_pb_buffer_put(void *buffer);

/* ---- in-band methods (inband.c) --------------------------------------------------------------- */

enum { MODE_STANDARD, MODE_BUFFERED, MODE_SYNCHRONOUS, MODE_READY };

/* Size of the payload in bytes. */
size_t ml_pb_payload_bytes(int count, MPI_Datatype type);
/* Calls the producer (or zero-fills) for a message to `dest`. */
void ml_pb_produce(unsigned char *pb, int dest, int tag, MPI_Comm comm, size_t payload_bytes);
/* Calls the consumer for a received message. */
void ml_pb_consume(const unsigned char *pb, int source, int tag, MPI_Comm comm, size_t payload_bytes);

/* Whether this send (recv) goes through a packed staging buffer rather than a struct type. */
int ml_pb_send_staged(size_t payload_bytes);
int ml_pb_recv_staged(size_t payload_bytes);

/* Sends: fills r (pb, staging or wire_type) for buf/count/type and, unless r is persistent (its pb
 * is produced at each start), produces the pb. A caller may set r->staged first to force a
 * staging buffer. The message to hand to MPI is then (*wire_buf, *wire_count, *wire_type); a
 * struct type is the caller's to free. */
int ml_pb_send_prepare(ml_req_t *r, const void **wire_buf, int *wire_count, MPI_Datatype *wire_type);
/* Persistent sends: at each start, the pb produced again and the staging packed again. */
int ml_pb_send_restart(ml_req_t *r);
/* Receives: the buffer and type to receive into (r->staged set first forces staging). */
int ml_pb_recv_prepare(ml_req_t *r, void **wire_buf, int *wire_count, MPI_Datatype *wire_type);
/* After an in-band receive completed with `status` (a real one): unpack, consume, correct the
 * status so that it counts the payload only. Flags: the user will see the status (else it needs
 * no correction); the receive may have been cancelled (a blocking one cannot). */
enum { ML_FINISH_STATUS_SEEN = 1, ML_FINISH_CANCELLABLE = 2 };
int ml_pb_recv_finish(ml_req_t *r, MPI_Status *status, int flags);
/* A probe's status: the payload only. */
void ml_pb_probe_fix(MPI_Status *status);
/* A blocking send or receive of a small message of a contiguous predefined type that the method
 * stages, done whole through a buffer on the stack (`next` sends in the given mode). Returns 0,
 * having done nothing, for any other message; else 1, with MPI's return code in *rc. */
int ml_pb_small_send(int (*next)(int, const void *, int, MPI_Datatype, int, int, MPI_Comm), int mode, const void *buf,
                     int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, int *rc);
int ml_pb_small_recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status,
                     int *rc);
/* After a blocking call: its buffers back to the pool, its struct type freed unless cached. */
void ml_pb_release(ml_req_t *r, MPI_Datatype *wire_type);
/* After the MPI call of a nonblocking or persistent message a prepare made (*wire_type
 * MPI_DATATYPE_NULL if it made none): a struct type made for this message alone is freed, MPI
 * holding what the pending operation needs, or kept in r by a persistent request for every
 * start; a staging type, or a cached or kept struct type, is not the caller's. */
void ml_pb_wire_type_done(ml_req_t *r, MPI_Datatype *wire_type);
/* The lean path of a nonblocking, non-persistent message of a predefined type that the method
 * sends (kind REQ_SEND) or receives (REQ_RECV) with a struct type: when (buf, count, type) has an
 * idle kept pair, the pair's own record, which already holds what the general path learns of
 * each message (its pb, its payload's bytes, the pair), with *wire_type the pair's struct type;
 * the caller sets the peer, tag and communicator and records it. NULL when there is none: the
 * general path then makes the pair, and its record for the next message. A key exists only for
 * messages that take a kept pair (the method's thresholds are fixed at MPI_Init), so finding
 * one is the whole decision. */
ml_req_t *ml_pb_kept_record(ml_req_kind_t kind, const void *buf, int count, MPI_Datatype type, MPI_Datatype *wire_type);
/* A lean record done with: its pair back to the idle list. */
void ml_pb_kept_record_done(ml_req_t *r);
/* r's pb buffer back where it came from: a kept pair (with its struct type) to its idle list, a
 * pooled buffer to the pool; the blocking calls' own buffer stays. r then holds none. */
void ml_pb_give_back(ml_req_t *r);
/* At MPI_Finalize: the cached struct types freed. */
void ml_pb_inband_finalize(void);

/* ---- separate method (separate.c) ------------------------------------------------------------- */

void ml_pb_separate_init(void);
void ml_pb_separate_finalize(void);
/* The shadow communicator of `comm`, where pb messages travel (aborts if there is none). */
MPI_Comm ml_pb_shadow(MPI_Comm comm);
/* A receive is posted (or started): it joins its communicator's list in post order, and one
 * naming its source and tag posts a receive of its stream's next pb at once. */
void ml_pb_separate_posted(ml_req_t *r) ML_OUT_OF_LINE;
/* A blocking receive from (source, tag) is about to be posted: the same early pb receive, if it
 * names both; withdrawn with unexpect when the receive failed. */
void ml_pb_separate_expect(MPI_Comm comm, int source, int tag) ML_OUT_OF_LINE;
void ml_pb_separate_unexpect(MPI_Comm comm, int source, int tag) ML_OUT_OF_LINE;
/* Whether pb messages go after their payload ("separate-after"). */
static inline int ml_pb_separate_after(void)
{
    return ml_pb.method->mechanism == PB_SEPARATE && ml_pb.method->place == PB_AFTER;
}
/* A receive completed with `status`: pairs it (and every earlier receive that could have taken
 * a message of the same stream) with its pb, then consumes it. Also for a receive that was not
 * recorded (blocking MPI_Recv): pass r = NULL and the communicator. */
void ml_pb_separate_completed(ml_req_t *r, MPI_Comm comm, MPI_Status *status) ML_OUT_OF_LINE;
/* A message matched by MPI_(I)mprobe: paired (and its pb consumed) at once, since matching is
 * what orders a stream. */
void ml_pb_separate_matched(MPI_Comm comm, MPI_Status *status) ML_OUT_OF_LINE;
/* separate-after: a probe matched the next message of stream (source, tag), whose pb comes only
 * once the message is received: claims the stream's next pb receive for it (separate.c says
 * why); NULL when the method carries no pb. take_claimed waits for that pb and consumes it, once
 * the message was received with `status`. */
void *ml_pb_separate_claim(MPI_Comm comm, int source, int tag) ML_OUT_OF_LINE;
void ml_pb_separate_take_claimed(void *claim, MPI_Comm comm, const MPI_Status *status) ML_OUT_OF_LINE;
/* Sends the pb message of a send to `dest`: held by the send's record `owner` until the send
 * completes (the program may cancel it, and its pb message must then go too), or, with no owner
 * (a blocking send), left in flight at once. */
void ml_pb_separate_send(int dest, int tag, MPI_Comm comm, size_t payload_bytes, ml_req_t *owner) ML_OUT_OF_LINE;
/* The send of record `r` completed (`cancelled`: the program cancelled it): its pb message is
 * left in flight, or cancelled too. */
void ml_pb_separate_send_done(ml_req_t *r, int cancelled) ML_OUT_OF_LINE;
/* A REQ_COMM request completed: its communicator (at r->buf) gets the shadow started with it. */
void ml_pb_separate_comm_done(ml_req_t *r) ML_OUT_OF_LINE;

/* ---- the layer's own sends in flight (in_flight.c) -------------------------------------------- */

/* How many: completion calls poll only when there are some. */
extern size_t ml_pb_n_in_flight;
/* A send of the layer's own, whose pooled `buffer` is released once it is done. */
void ml_pb_in_flight_add(MPI_Request request, void *buffer) ML_OUT_OF_LINE;
/* Those done released (`wait`: all, waited for). */
void ml_pb_in_flight_poll(int wait) ML_OUT_OF_LINE;
/* At MPI_Finalize: every one waited for. */
void ml_pb_in_flight_finalize(void);

/* ---- completion (complete.c) ------------------------------------------------------------------ */

/* Finishes the layer's part of a completed request `r` (in-band unpack, separate pairing, pb
 * of a send) and drops or deactivates its record. `status` is real; `status_seen`: the program
 * will see it (else it is the layer's own, and counts need no correcting). */
void ml_pb_complete(ml_req_t *r, MPI_Status *status, int status_seen);
/* Several requests MPI completed in one call (`Waitall`, `Testsome`...): each record is told its
 * status before the layer finishes any (NULL does nothing), since finishing one may pair an
 * earlier receive among them, whose handle MPI has freed (separate.c). */
void ml_pb_completing(ml_req_t *r, MPI_Status *status);
/* Requests the user freed while active: finished when they complete (tested at each completion
 * call), and waited for at MPI_Finalize. */
void ml_pb_zombie_add(ml_req_t *r) ML_RARE;
void ml_pb_zombies_poll(int wait) ML_RARE;

/* ---- the message a matched probe returned, until its receive (wrap_recv.c) -------------------- */

/* What the probe knew of the message, which MPI cannot tell from the message handle: its
 * communicator, and under separate-after the pb receive it owns. */
typedef struct remembered {
    MPI_Message message;
    MPI_Comm comm;
    void *claim; /* separate-after: the pb receive the probe claimed for it */
    struct remembered *next;
} remembered_t;

void ml_pb_message_remember(MPI_Message message, MPI_Comm comm, void *claim);
/* Its record, taken off the list; a message the layer never saw ends the job. */
remembered_t ml_pb_message_take(MPI_Message message);

#endif
