/* The separate method (seed 001, §2.3): the pb travels as a message of its own, on a shadow
 * communicator so that no user receive, probe or wildcard ever sees it.
 *
 * Pairing. Messages from one sender with one tag on one communicator form a stream; MPI
 * matches a stream's payloads in send order (non-overtaking), and the pb messages of the stream
 * on the shadow communicator arrive in the same order. So the k-th payload of a stream to be
 * matched owns the stream's k-th pb, and the layer must take pbs in matching order, not in the
 * order the user completes receives. Among receives that could match the same stream, matching
 * order is post order. So, when a receive completes with (source s, tag t), every receive posted
 * before it on the communicator that could have matched (s, t) is paired first. Such a receive has
 * already been matched (else it would have taken this message), so its completion is certain
 * and near: the layer waits for it with MPI_Request_get_status, which leaves the request to the
 * user. A blocking wait on the pb message is bounded too: its sender started it before the
 * payload. This is what the anchors got wrong (../shared/anchors/piggyback.md §8). */
#include <stdlib.h>

#include "pb.h"

typedef struct {
    MPI_Comm shadow;
    ml_req_t *head, *tail; /* receives not yet paired, in post order */
} shadow_t;

static int keyval = MPI_KEYVAL_INVALID;

static int delete_shadow(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm, (void)key, (void)extra;
    shadow_t *s = value;
    PMPI_Comm_free(&s->shadow);
    free(s);
    return MPI_SUCCESS;
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

static shadow_t *shadow_of(MPI_Comm comm)
{
    shadow_t *s = NULL;
    int found = 0;
    PMPI_Comm_get_attr(comm, keyval, &s, &found);
    if (!found)
        ml_pb_fail("a message on a communicator the layer has no shadow for (made by a call it does not "
                   "wrap, such as MPI_Comm_idup); the separate method cannot carry its piggyback");
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

/* ---- pairing ------------------------------------------------------------------------------------ */

void ml_pb_separate_posted(ml_req_t *r)
{
    if (!in_use() || r->peer == MPI_PROC_NULL)
        return;
    shadow_t *s = shadow_of(r->comm);
    r->pending_prev = s->tail;
    r->pending_next = NULL;
    if (s->tail)
        s->tail->pending_next = r;
    else
        s->head = r;
    s->tail = r;
    r->pending = 1;
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

static int could_match(const ml_req_t *q, int source, int tag)
{
    return (q->peer == MPI_ANY_SOURCE || q->peer == source) && (q->tag == MPI_ANY_TAG || q->tag == tag);
}

static void pair(shadow_t *s, ml_req_t *r, MPI_Comm comm, const MPI_Status *status);

/* An earlier receive that must have been matched already: waits for its completion without
 * taking it from the user, then pairs it. */
static void settle(shadow_t *s, ml_req_t *q)
{
    int done = 0;
    MPI_Status status;
    while (!done)
        PMPI_Request_get_status(q->handle, &done, &status);
    int cancelled = 0;
    PMPI_Test_cancelled(&status, &cancelled);
    if (cancelled)
        unlink_pending(s, q);
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
    unsigned char *pb = ml_pb_buffer_get(ml_pb.size);
    PMPI_Recv(pb, (int)ml_pb.size, MPI_BYTE, source, tag, s->shadow, MPI_STATUS_IGNORE);
    MPI_Count bytes = 0;
    PMPI_Get_elements_x(status, MPI_BYTE, &bytes);
    ml_pb_consume(pb, source, tag, comm, (size_t)bytes);
    ml_pb_buffer_put(pb);
}

void ml_pb_separate_completed(ml_req_t *r, MPI_Comm comm, MPI_Status *status)
{
    if (!in_use() || (r && !r->pending) || status->MPI_SOURCE == MPI_PROC_NULL)
        return;
    shadow_t *s = shadow_of(comm);
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);
    if (cancelled)
        unlink_pending(s, r);
    else
        pair(s, r, comm, status);
}

void ml_pb_separate_matched(MPI_Comm comm, MPI_Status *status)
{
    if (in_use() && status->MPI_SOURCE != MPI_PROC_NULL)
        pair(shadow_of(comm), NULL, comm, status);
}

/* ---- sends: the pb message goes on its own ---------------------------------------------------
 * A send returns when its payload is done, as without the layer: waiting for the pb message too
 * could deadlock a correct program, since its receiver takes it only once it has the payload.
 * So pb messages are left in flight, tested at each completion call, and waited for at
 * MPI_Finalize. */

typedef struct {
    MPI_Request request;
    unsigned char *pb;
} in_flight_t;

static in_flight_t *in_flight;
static size_t n_in_flight, in_flight_room;

static void in_flight_add(MPI_Request request, unsigned char *pb)
{
    if (n_in_flight == in_flight_room) {
        in_flight_room = in_flight_room ? 2 * in_flight_room : 64;
        in_flight = realloc(in_flight, in_flight_room * sizeof *in_flight);
        if (!in_flight)
            ml_pb_fail("out of memory for piggyback messages in flight");
    }
    in_flight[n_in_flight++] = (in_flight_t){request, pb};
}

void ml_pb_separate_poll(int wait)
{
    for (size_t i = 0; i < n_in_flight;) {
        int done = 1;
        if (wait)
            PMPI_Wait(&in_flight[i].request, MPI_STATUS_IGNORE);
        else
            PMPI_Test(&in_flight[i].request, &done, MPI_STATUS_IGNORE);
        if (done) {
            ml_pb_buffer_put(in_flight[i].pb);
            in_flight[i] = in_flight[--n_in_flight];
        } else {
            i++;
        }
    }
}

void ml_pb_separate_send(int dest, int tag, MPI_Comm comm, size_t payload_bytes)
{
    if (!in_use() || dest == MPI_PROC_NULL)
        return;
    if (n_in_flight)
        ml_pb_separate_poll(0);
    unsigned char *pb = ml_pb_buffer_get(ml_pb.size);
    ml_pb_produce(pb, dest, tag, comm, payload_bytes);
    MPI_Request request;
    PMPI_Isend(pb, (int)ml_pb.size, MPI_BYTE, dest, tag, ml_pb_shadow(comm), &request);
    in_flight_add(request, pb);
}

void ml_pb_separate_finalize(void)
{
    if (!in_use())
        return;
    ml_pb_separate_poll(1);
    free(in_flight);
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
