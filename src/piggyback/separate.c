/* The separate method (seed 001, §2.3): the pb travels as a message of its own, on a shadow
 * communicator so that no user receive, probe or wildcard ever sees it, sent before the payload
 * ("separate") or after it ("separate-after").
 *
 * Pairing. Messages from one sender with one tag on one communicator form a stream; MPI
 * matches a stream's payloads in send order (non-overtaking), and the stream's pb messages on
 * the shadow communicator are matched in send order too. So the k-th payload of a stream to be
 * matched owns the stream's k-th pb, and the layer must take pbs in matching order, not in the
 * order the user completes receives. Among receives that could match the same stream, matching
 * order is post order. So, when a receive completes with (source s, tag t), every receive posted
 * before it on the communicator that could have matched (s, t) is paired first. Such a receive has
 * already been matched (else it would have taken this message), so its completion is certain
 * and near: the layer waits for it with MPI_Request_get_status, which leaves the request to the
 * user. This is what the anchors got wrong (../shared/anchors/piggyback.md §8).
 *
 * Posting the pb receive early. As the seed does, a receive that names its source and its tag
 * posts the receive of its pb on the shadow communicator at once, with the payload's; a wildcard
 * receive cannot (it learns its stream when it completes), and its pb is received then. The
 * seed's scheme as it stands, each receive completing the pb receive it posted, breaks where
 * the two kinds meet: with Irecv(ANY_SOURCE, t) then Irecv(s, t) pending, the first payload of
 * stream (s, t) goes to the wildcard receive, but its pb to the only pb receive posted, the
 * specific one's. It breaks too when a specific receive is cancelled after its pb receive took a
 * pb, which belongs to the payload that a later receive will match. So an early pb receive here
 * is a prefetch for its stream, not for its receive: the stream's prefetches are received by the
 * shadow communicator in post order, hence hold the stream's next pbs in order, and each pairing
 * of the stream, made in matching order as above, takes the oldest prefetch, or, when there is
 * none, receives the next pb then (no shadow receive of that stream is then pending, so it gets
 * the next one in order). The k-th pairing thus takes the k-th pb whoever posted its receive, with
 * wildcard receives pending or not. A cancelled receive withdraws one prefetch of its stream,
 * the youngest: cancelled if it took nothing yet, else kept, since the pb it holds is that of a
 * payload a later receive will match (a younger prefetch cannot hold a pb while an older one
 * waits). Prefetches left at MPI_Finalize or when a communicator is freed are cancelled.
 *
 * A message matched by MPI_Mprobe or MPI_Improbe is the next of its stream in matching order,
 * so it owns the stream's next pb. Under "separate" that pb was sent before the payload and is
 * taken at the probe. Under "separate-after" it is sent once the payload's send completed, which
 * a synchronous or rendezvous send does only when the payload is received, after MPI_Mrecv: the
 * probe claims the stream's oldest prefetch (posting one if there is none), which later pairings
 * of the stream pass over, and the receive of the message takes it (MPICH's pt2pt/mprobe: a
 * wait at the probe hung; pairing at the receive alone gave a later receive of the stream the
 * probed message's pb).
 *
 * A wait for a pb is bounded: its sender sends it before the payload, or, for "separate-after",
 * right after handing the payload to MPI (a blocking send: once it returned, which needs nothing
 * more of the receiver, who already has the payload). */
#include <stdlib.h>

#include "pb.h"

/* A pb receive posted early for stream (source, tag), with the pb buffer it receives into. */
typedef struct prefetch prefetch_t;
struct prefetch {
    int source, tag;
    int claimed; /* by a matched message (separate-after), for its receive: others pass it over */
    MPI_Request request;
    unsigned char *pb;
    prefetch_t *prev, *next;
};

typedef struct {
    MPI_Comm shadow;
    ml_req_t *head, *tail;       /* receives not yet paired, in post order */
    prefetch_t *oldest, *newest; /* pb receives posted early, in post order */
    int orphaned;                /* the program freed the communicator; receives may be pending */
} shadow_t;

static void prefetches_cancel(shadow_t *s);

static int keyval = MPI_KEYVAL_INVALID;

static void release(shadow_t *s)
{
    prefetches_cancel(s);
    PMPI_Comm_free(&s->shadow);
    free(s);
}

/* MPI_Comm_free deletes a communicator's attributes at once, while receives posted on it may
 * still be pending (MPI completes them; MPICH's comm/cmfree frees the communicator of a pending
 * receive): their pbs still come on the shadow, so it lives on until the last of them is paired. */
static int delete_shadow(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm, (void)key, (void)extra;
    shadow_t *s = value;
    s->orphaned = 1;
    if (!s->head)
        release(s);
    return MPI_SUCCESS;
}

/* After a receive of s was paired or forgotten: the shadow of a freed communicator goes with its
 * last pending receive. */
static void release_if_done(shadow_t *s)
{
    if (s->orphaned && !s->head)
        release(s);
}

static int in_use(void) { return ml_pb.method->mechanism == PB_SEPARATE && ml_pb.size > 0; }

/* Gives `comm` its shadow: collective over comm, so called where comm is created. */
static void attach_shadow(MPI_Comm comm)
{
    if (!in_use() || comm == MPI_COMM_NULL)
        return;
    shadow_t *s = calloc(1, sizeof *s);
    if (!s)
        ml_pb_fail("out of memory for a shadow communicator");
    PMPI_Comm_dup(comm, &s->shadow);
    PMPI_Comm_set_attr(comm, keyval, s);
}

/* comm's shadow, or NULL where the layer gave it none */
static shadow_t *find_shadow(MPI_Comm comm)
{
    shadow_t *s = NULL;
    int found = 0;
    PMPI_Comm_get_attr(comm, keyval, &s, &found);
    return found ? s : NULL;
}

static shadow_t *shadow_of(MPI_Comm comm)
{
    shadow_t *s = find_shadow(comm);
    if (!s)
        ml_pb_fail("a message on a communicator the layer has no shadow for (made by a call it does not "
                   "wrap, or by an MPI_Comm_idup not completed yet); the separate method cannot carry its "
                   "piggyback");
    return s;
}

MPI_Comm ml_pb_shadow(MPI_Comm comm) { return shadow_of(comm)->shadow; }

void ml_pb_separate_init(void)
{
    if (!in_use())
        return;
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_shadow, &keyval, NULL);
    attach_shadow(MPI_COMM_WORLD);
    attach_shadow(MPI_COMM_SELF);
}

/* ---- prefetches: pb receives posted with a receive that names its source and tag -------------- */

static int specific(int source, int tag) { return source != MPI_ANY_SOURCE && tag != MPI_ANY_TAG; }

static void prefetch_post(shadow_t *s, int source, int tag)
{
    prefetch_t *p = malloc(sizeof *p);
    if (!p)
        ml_pb_fail("out of memory for a piggyback receive");
    p->source = source;
    p->tag = tag;
    p->claimed = 0;
    p->pb = ml_pb_buffer_get(ml_pb.size);
    PMPI_Irecv(p->pb, (int)ml_pb.size, MPI_BYTE, source, tag, s->shadow, &p->request);
    p->next = NULL;
    p->prev = s->newest;
    if (s->newest)
        s->newest->next = p;
    else
        s->oldest = p;
    s->newest = p;
}

static void prefetch_unlink(shadow_t *s, prefetch_t *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        s->oldest = p->next;
    if (p->next)
        p->next->prev = p->prev;
    else
        s->newest = p->prev;
}

static void prefetch_free(prefetch_t *p)
{
    ml_pb_buffer_put(p->pb);
    free(p);
}

/* Withdraws the youngest prefetch of stream (source, tag): cancelled, unless it took a pb
 * already, which a later pairing of the stream will take. */
static void prefetch_withdraw(shadow_t *s, int source, int tag)
{
    for (prefetch_t *p = s->newest; p; p = p->prev)
        if (p->source == source && p->tag == tag) {
            MPI_Status status;
            int cancelled = 0;
            PMPI_Cancel(&p->request);
            PMPI_Wait(&p->request, &status);
            PMPI_Test_cancelled(&status, &cancelled);
            if (cancelled) {
                prefetch_unlink(s, p);
                prefetch_free(p);
            }
            return;
        }
}

static void prefetches_cancel(shadow_t *s)
{
    while (s->oldest) {
        prefetch_t *p = s->oldest;
        PMPI_Cancel(&p->request);
        PMPI_Wait(&p->request, MPI_STATUS_IGNORE);
        prefetch_unlink(s, p);
        prefetch_free(p);
    }
}

/* The next pb of stream (source, tag), in a pooled buffer: the oldest prefetch's, else received
 * now. */
static unsigned char *next_pb(shadow_t *s, int source, int tag)
{
    for (prefetch_t *p = s->oldest; p; p = p->next)
        if (p->source == source && p->tag == tag && !p->claimed) {
            PMPI_Wait(&p->request, MPI_STATUS_IGNORE);
            prefetch_unlink(s, p);
            unsigned char *pb = p->pb;
            free(p);
            return pb;
        }
    unsigned char *pb = ml_pb_buffer_get(ml_pb.size);
    PMPI_Recv(pb, (int)ml_pb.size, MPI_BYTE, source, tag, s->shadow, MPI_STATUS_IGNORE);
    return pb;
}

void ml_pb_separate_expect(MPI_Comm comm, int source, int tag)
{
    if (in_use() && source != MPI_PROC_NULL && specific(source, tag))
        prefetch_post(shadow_of(comm), source, tag);
}

void ml_pb_separate_unexpect(MPI_Comm comm, int source, int tag)
{
    if (in_use() && source != MPI_PROC_NULL && specific(source, tag))
        prefetch_withdraw(shadow_of(comm), source, tag);
}

/* ---- pairing ------------------------------------------------------------------------------------ */

void ml_pb_separate_posted(ml_req_t *r)
{
    if (!in_use() || r->peer == MPI_PROC_NULL)
        return;
    shadow_t *s = shadow_of(r->comm);
    r->shadow = s;
    r->pending_prev = s->tail;
    r->pending_next = NULL;
    if (s->tail)
        s->tail->pending_next = r;
    else
        s->head = r;
    s->tail = r;
    r->pending = 1;
    if (specific(r->peer, r->tag))
        prefetch_post(s, r->peer, r->tag);
}

static void unlink_pending(shadow_t *s, ml_req_t *r)
{
    if (!r || !r->pending)
        return;
    if (r->pending_prev)
        r->pending_prev->pending_next = r->pending_next;
    else
        s->head = r->pending_next;
    if (r->pending_next)
        r->pending_next->pending_prev = r->pending_prev;
    else
        s->tail = r->pending_prev;
    r->pending = 0;
}

/* A receive that ended without a message (cancelled): off the list, its prefetch withdrawn. */
static void forget(shadow_t *s, ml_req_t *r)
{
    if (!r || !r->pending)
        return;
    unlink_pending(s, r);
    if (specific(r->peer, r->tag))
        prefetch_withdraw(s, r->peer, r->tag);
}

static int could_match(const ml_req_t *q, int source, int tag)
{
    return (q->peer == MPI_ANY_SOURCE || q->peer == source) && (q->tag == MPI_ANY_TAG || q->tag == tag);
}

static void pair(shadow_t *s, ml_req_t *r, MPI_Comm comm, const MPI_Status *status);

/* An earlier receive that must have been matched already: waits for its completion without
 * taking it from the user, then pairs it. One that MPI completed in the call being finished has
 * its status from that call: its handle is freed, and may be another request's by now (MPICH's
 * coll/nonblocking3, whose nonblocking collectives make requests while the layer pairs). */
static void settle(shadow_t *s, ml_req_t *q)
{
    int done = 0;
    MPI_Status status;
    if (q->completing)
        status = *q->completing;
    else
        while (!done)
            PMPI_Request_get_status(q->handle, &done, &status);
    int cancelled = 0;
    PMPI_Test_cancelled(&status, &cancelled);
    if (cancelled)
        forget(s, q);
    else
        pair(s, q, q->comm, &status);
}

/* Pairs receive r (NULL: a receive never posted before, such as a blocking one), which matched
 * `status`, after every earlier receive that could have matched the same stream. */
static void pair(shadow_t *s, ml_req_t *r, MPI_Comm comm, const MPI_Status *status)
{
    int source = status->MPI_SOURCE, tag = status->MPI_TAG;
    for (ml_req_t *q = s->head; q && q != r;) {
        if (could_match(q, source, tag)) {
            settle(s, q);
            q = s->head; /* the list changed: start again, every earlier one is now paired */
        } else {
            q = q->pending_next;
        }
    }
    unlink_pending(s, r);
    unsigned char *pb = next_pb(s, source, tag);
    MPI_Count bytes = 0;
    PMPI_Get_elements_x(status, MPI_BYTE, &bytes);
    ml_pb_consume(pb, source, tag, comm, (size_t)bytes);
    ml_pb_buffer_put(pb);
}

void ml_pb_separate_completed(ml_req_t *r, MPI_Comm comm, MPI_Status *status)
{
    if (r && r->claim) { /* an MPI_Imrecv under separate-after: its probe claimed its pb */
        ml_pb_separate_take_claimed(r->claim, comm, status);
        r->claim = NULL;
        return;
    }
    if (!in_use() || (r && !r->pending) || status->MPI_SOURCE == MPI_PROC_NULL)
        return;
    shadow_t *s = r ? r->shadow : shadow_of(comm);
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);
    if (cancelled)
        forget(s, r);
    else
        pair(s, r, comm, status);
    release_if_done(s);
}

void ml_pb_separate_matched(MPI_Comm comm, MPI_Status *status)
{
    if (in_use() && status->MPI_SOURCE != MPI_PROC_NULL)
        pair(shadow_of(comm), NULL, comm, status);
}

void *ml_pb_separate_claim(MPI_Comm comm, int source, int tag)
{
    if (!in_use() || source == MPI_PROC_NULL)
        return NULL;
    shadow_t *s = shadow_of(comm);
    prefetch_t *p = s->oldest;
    while (p && !(p->source == source && p->tag == tag && !p->claimed))
        p = p->next;
    if (!p) {
        prefetch_post(s, source, tag);
        p = s->newest;
    }
    p->claimed = 1;
    return p;
}

void ml_pb_separate_take_claimed(void *claim, MPI_Comm comm, const MPI_Status *status)
{
    prefetch_t *p = claim;
    PMPI_Wait(&p->request, MPI_STATUS_IGNORE);
    prefetch_unlink(shadow_of(comm), p);
    MPI_Count bytes = 0;
    PMPI_Get_elements_x(status, MPI_BYTE, &bytes);
    ml_pb_consume(p->pb, p->source, p->tag, comm, (size_t)bytes);
    prefetch_free(p);
}

/* ---- sends: the pb message goes on its own, before or after the payload ---------------------------
 * A send returns when its payload is done, as without the layer: waiting for the pb message too
 * could deadlock a correct program, since its receiver takes it only once it has the payload.
 * So pb messages are left in flight (in_flight.c). */

void ml_pb_separate_send(int dest, int tag, MPI_Comm comm, size_t payload_bytes, ml_req_t *owner)
{
    if (!in_use() || dest == MPI_PROC_NULL)
        return;
    if (ml_pb_n_in_flight)
        ml_pb_in_flight_poll(0);
    unsigned char *pb = ml_pb_buffer_get(ml_pb.size);
    ml_pb_produce(pb, dest, tag, comm, payload_bytes);
    MPI_Request request;
    PMPI_Isend(pb, (int)ml_pb.size, MPI_BYTE, dest, tag, ml_pb_shadow(comm), &request);
    if (!owner) {
        ml_pb_in_flight_add(request, pb);
        return;
    }
    ml_pb_separate_send_done(owner, 0); /* a persistent send's previous pb message, if any */
    owner->pb_request = request;
    owner->pb = pb;
}

/* A cancelled send whose pb message can still be withdrawn (MPICH cancels an unmatched send to
 * itself, MPICH's issendselfcancel) leaves both streams as they were. One that cannot (it was
 * received) would pair every later message of its stream with the wrong pb. */
void ml_pb_separate_send_done(ml_req_t *r, int cancelled)
{
    if (r->pb_request == MPI_REQUEST_NULL)
        return;
    if (cancelled) {
        MPI_Status pb_status;
        PMPI_Cancel(&r->pb_request);
        PMPI_Wait(&r->pb_request, &pb_status); /* returns, the send being marked for cancellation */
        PMPI_Test_cancelled(&pb_status, &cancelled);
        if (!cancelled)
            ml_pb_fail("a send to rank %d (tag %d) was cancelled, but its piggyback message was already received: "
                       "the separate method cannot take it back (cancelling sends is deprecated since MPI 4.0)",
                       r->peer, r->tag);
        ml_pb_drivers_withdrawn(r->pb, r->peer, r->tag, r->comm);
        ml_pb_buffer_put(r->pb);
    } else {
        ml_pb_in_flight_add(r->pb_request, r->pb);
    }
    r->pb = NULL;
    r->pb_request = MPI_REQUEST_NULL;
}

void ml_pb_separate_finalize(void)
{
    if (!in_use())
        return;
    PMPI_Comm_delete_attr(MPI_COMM_WORLD, keyval);
    PMPI_Comm_delete_attr(MPI_COMM_SELF, keyval);
    PMPI_Comm_free_keyval(&keyval);
}

/* ---- communicators: each new one gets its shadow where it is made ------------------------------- */

#define WRAP_CREATION(name, params, args, out)                                                                         \
    int name params                                                                                                    \
    {                                                                                                                  \
        int rc = ML_NEXT(name) args;                                                                                   \
        if (rc == MPI_SUCCESS)                                                                                         \
            attach_shadow(*(out));                                                                                     \
        return rc;                                                                                                     \
    }

WRAP_CREATION(MPI_Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm), (comm, newcomm), newcomm)
WRAP_CREATION(MPI_Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm), (comm, info, newcomm), newcomm)
WRAP_CREATION(MPI_Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm), (comm, color, key, newcomm),
              newcomm)
WRAP_CREATION(MPI_Comm_split_type, (MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm),
              (comm, type, key, info, newcomm), newcomm)
WRAP_CREATION(MPI_Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm), (comm, group, newcomm), newcomm)
WRAP_CREATION(MPI_Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm),
              (comm, group, tag, newcomm), newcomm)
WRAP_CREATION(MPI_Cart_create,
              (MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *newcomm),
              (comm, ndims, dims, periods, reorder, newcomm), newcomm)
WRAP_CREATION(MPI_Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm), (comm, remain_dims, newcomm),
              newcomm)
WRAP_CREATION(MPI_Graph_create,
              (MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm *newcomm),
              (comm, nnodes, index, edges, reorder, newcomm), newcomm)
WRAP_CREATION(MPI_Dist_graph_create,
              (MPI_Comm comm, int n, const int sources[], const int degrees[], const int destinations[],
               const int weights[], MPI_Info info, int reorder, MPI_Comm *newcomm),
              (comm, n, sources, degrees, destinations, weights, info, reorder, newcomm), newcomm)
WRAP_CREATION(MPI_Dist_graph_create_adjacent,
              (MPI_Comm comm, int indegree, const int sources[], const int sourceweights[], int outdegree,
               const int destinations[], const int destweights[], MPI_Info info, int reorder, MPI_Comm *newcomm),
              (comm, indegree, sources, sourceweights, outdegree, destinations, destweights, info, reorder, newcomm),
              newcomm)
WRAP_CREATION(MPI_Intercomm_create,
              (MPI_Comm local, int local_leader, MPI_Comm peer, int remote_leader, int tag, MPI_Comm *newcomm),
              (local, local_leader, peer, remote_leader, tag, newcomm), newcomm)
WRAP_CREATION(MPI_Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newcomm), (intercomm, high, newcomm),
              newcomm)
/* MPI_Comm_idup: the new communicator exists once the request completes. Its shadow is
 * duplicated at once, nonblocking too (every rank starts both in the same collective order), and
 * attached when the program completes the request (a REQ_COMM record under it,
 * ml_pb_separate_comm_done). MPICH's comm/comm_idup_iallreduce sent on one.
 * From which communicator: Open MPI 4.1 and 5.0 agree on a context id with collectives of the
 * parent, and two agreements in flight on one intercommunicator exchange their leaders' values
 * under one fixed tag, so they can pair crosswise and never end (tests/conformance/idup_twice.c
 * hangs so without any layer). An intercommunicator's shadow is therefore duplicated from the
 * parent's shadow. An intracommunicator's is not: Open MPI lets an agreement begin only while
 * none of a lower communicator id is under way, and a pending one on the parent's shadow held
 * back the shadow duplication of a communicator made meanwhile (tests/conformance/
 * idup_lowest_cid.c is that rule without any layer; MPICH's comm/comm_create_group_idup 4 hung in
 * every run), and two on one intracommunicator, which run libnbc's allreduce and no fixed-tag
 * exchange, never hung (idup_twice.c on MPI_COMM_WORLD). docs/conformance.md has the runs. */
static MPI_Comm shadow_parent(MPI_Comm comm)
{
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    shadow_t *parent = inter ? find_shadow(comm) : NULL;
    return parent ? parent->shadow : comm;
}

static int idup_recorded(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request, int rc)
{
    if (rc != MPI_SUCCESS || !in_use())
        return rc;
    shadow_t *s = calloc(1, sizeof *s);
    if (!s)
        ml_pb_fail("out of memory for a shadow communicator");
    ml_req_t *r = ml_req_new(REQ_COMM);
    r->buf = newcomm;
    r->shadow = s;
    PMPI_Comm_idup(shadow_parent(comm), &s->shadow, &r->pb_request);
    return ml_req_record(r, rc, *request, 1);
}

void ml_pb_separate_comm_done(ml_req_t *r)
{
    PMPI_Wait(&r->pb_request, MPI_STATUS_IGNORE);
    PMPI_Comm_set_attr(*(MPI_Comm *)r->buf, keyval, r->shadow);
    r->shadow = NULL;
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup_recorded(comm, newcomm, request, ML_NEXT(MPI_Comm_idup)(comm, newcomm, request));
}

#if MPI_VERSION >= 4
int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup_recorded(comm, newcomm, request, ML_NEXT(MPI_Comm_idup_with_info)(comm, info, newcomm, request));
}

/* MPI 4's constructors from groups (MPICH's test comm/ic1 makes an intercommunicator so). */
WRAP_CREATION(MPI_Comm_create_from_group,
              (MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler, MPI_Comm *newcomm),
              (group, stringtag, info, errhandler, newcomm), newcomm)
WRAP_CREATION(MPI_Intercomm_create_from_groups,
              (MPI_Group local_group, int local_leader, MPI_Group remote_group, int remote_leader,
               const char *stringtag, MPI_Info info, MPI_Errhandler errhandler, MPI_Comm *newintercomm),
              (local_group, local_leader, remote_group, remote_leader, stringtag, info, errhandler, newintercomm),
              newintercomm)
#endif
