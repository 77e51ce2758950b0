/* Sends: Send, Bsend, Ssend, Rsend, their I-forms and their persistent *_init forms. Each carries
 * its pb by the method in force; the mode (standard, buffered, synchronous, ready) is that of
 * the user's payload. Under the separate method the pb message is a standard-mode one of the
 * layer's own, left in flight (in_flight.c), sent before or after the payload as the method
 * says; the payload keeps its mode, so a buffered one takes from the attached buffer exactly
 * what it would without the layer.
 *
 * Buffered sends of the in-band methods. The program attached what the standard says its
 * messages need (MPI_Pack_size of each plus MPI_BSEND_OVERHEAD), with no room for P more bytes a
 * message, and MPI allows one attached buffer per process. So the layer makes them buffered
 * sends of its own: it copies pb and payload into a pooled buffer (the staging of the pack
 * methods) and sends that with a standard-mode MPI_Isend, left in flight until done. The call
 * returns at once and the program's buffer is free again, as MPI_Bsend promises; the message
 * keeps its place in its stream, since it is sent when the program's call is made. The program's
 * MPI_Ibsend gets a request that is complete at once (an MPI_Isend to MPI_PROC_NULL), its
 * MPI_Bsend_init one that is at each start (an MPI_Send_init to MPI_PROC_NULL): the layer makes
 * its copy at each MPI_Start. The program's attached buffer is not used; one too small for its
 * messages is then not refused. */
#include "hooks.h"

static int next_send(int mode, const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    switch (mode) {
    case MODE_BUFFERED: return ML_NEXT(MPI_Bsend)(buf, count, type, dest, tag, comm);
    case MODE_SYNCHRONOUS: return ML_NEXT(MPI_Ssend)(buf, count, type, dest, tag, comm);
    case MODE_READY: return ML_NEXT(MPI_Rsend)(buf, count, type, dest, tag, comm);
    default: return ML_NEXT(MPI_Send)(buf, count, type, dest, tag, comm);
    }
}

static int next_isend(int mode, const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                      MPI_Request *request)
{
    switch (mode) {
    case MODE_BUFFERED: return ML_NEXT(MPI_Ibsend)(buf, count, type, dest, tag, comm, request);
    case MODE_SYNCHRONOUS: return ML_NEXT(MPI_Issend)(buf, count, type, dest, tag, comm, request);
    case MODE_READY: return ML_NEXT(MPI_Irsend)(buf, count, type, dest, tag, comm, request);
    default: return ML_NEXT(MPI_Isend)(buf, count, type, dest, tag, comm, request);
    }
}

static int next_send_init(int mode, const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                          MPI_Request *request)
{
    switch (mode) {
    case MODE_BUFFERED: return ML_NEXT(MPI_Bsend_init)(buf, count, type, dest, tag, comm, request);
    case MODE_SYNCHRONOUS: return ML_NEXT(MPI_Ssend_init)(buf, count, type, dest, tag, comm, request);
    case MODE_READY: return ML_NEXT(MPI_Rsend_init)(buf, count, type, dest, tag, comm, request);
    default: return ML_NEXT(MPI_Send_init)(buf, count, type, dest, tag, comm, request);
    }
}

static int passes_through(int dest) { return !ml_pb.active || dest == MPI_PROC_NULL; }

int ml_pb_send_blocking(int mode, const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    if (passes_through(dest))
        return next_send(mode, buf, count, type, dest, tag, comm);
    ml_pb_drivers_comm_named(comm);
    int rc;
    if (ml_pb.method->mechanism != PB_SEPARATE &&
        ml_pb_small_send(next_send, mode, buf, count, type, dest, tag, comm, &rc))
        return rc;
    ml_req_t r = {.kind = REQ_SEND, .blocking = 1};
    ml_req_describe(&r, buf, count, type, dest, tag, comm);
    MPI_Datatype wire_type = MPI_DATATYPE_NULL;
    if (ml_pb.method->mechanism == PB_SEPARATE) {
        int after = ml_pb_separate_after();
        if (!after)
            ml_pb_separate_send(dest, tag, comm, ml_pb_payload_bytes(count, type), NULL);
        rc = next_send(mode, buf, count, type, dest, tag, comm);
        if (after && rc == MPI_SUCCESS)
            ml_pb_separate_send(dest, tag, comm, ml_pb_payload_bytes(count, type), NULL);
    } else {
        const void *wire_buf;
        int wire_count;
        rc = ml_pb_send_prepare(&r, &wire_buf, &wire_count, &wire_type);
        if (rc == MPI_SUCCESS)
            rc = next_send(mode, wire_buf, wire_count, wire_type, dest, tag, comm);
    }
    ml_pb_release(&r, &wire_type);
    return rc;
}

/* An in-band method's buffered send, made the layer's own: a copy of pb and payload sent in
 * standard mode and left in flight. */
static int buffered_copy(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    if (ml_pb_n_in_flight)
        ml_pb_in_flight_poll(0);
    ml_pb_drivers_comm_named(comm);
    ml_req_t r = {.kind = REQ_SEND, .blocking = 1, .staged = 1};
    ml_req_describe(&r, buf, count, type, dest, tag, comm);
    const void *wire_buf;
    int wire_count;
    MPI_Datatype wire_type = MPI_DATATYPE_NULL;
    MPI_Request request;
    int rc = ml_pb_send_prepare(&r, &wire_buf, &wire_count, &wire_type);
    if (rc == MPI_SUCCESS)
        rc = ML_NEXT(MPI_Isend)(wire_buf, wire_count, wire_type, dest, tag, comm, &request);
    if (rc == MPI_SUCCESS) {
        ml_pb_in_flight_add(request, r.staging);
        r.staging = NULL;
    }
    ml_pb_release(&r, &wire_type);
    return rc;
}

static int buffered_by_layer(int dest) { return !passes_through(dest) && ml_pb.method->mechanism != PB_SEPARATE; }

int ml_pb_bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    if (!buffered_by_layer(dest))
        return ml_pb_send_blocking(MODE_BUFFERED, buf, count, type, dest, tag, comm);
    return buffered_copy(buf, count, type, dest, tag, comm);
}

int ml_pb_buffered_request(int persistent, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm, MPI_Request *request)
{
    if (!buffered_by_layer(dest))
        return ml_pb_send_request(MODE_BUFFERED, persistent, buf, count, type, dest, tag, comm, request);
    if (!persistent) {
        int rc = buffered_copy(buf, count, type, dest, tag, comm);
        return rc == MPI_SUCCESS ? PMPI_Isend(NULL, 0, MPI_BYTE, MPI_PROC_NULL, tag, comm, request) : rc;
    }
    ml_pb_drivers_comm_named(comm);
    ml_req_t *r = ml_req_new(REQ_SEND);
    ml_req_describe(r, buf, count, type, dest, tag, comm);
    r->persistent = 1;
    r->send_mode = MODE_BUFFERED;
    int rc = PMPI_Send_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, tag, comm, request);
    return ml_req_record(r, rc, *request, 0);
}

/* A nonblocking send by the lean path (ml_pb_kept_record): r, its kept pair's record, describes
 * the message but for its destination; the pb produced, the pair's struct type sent. */
static int lean_send(ml_req_t *r, MPI_Datatype wire_type, int mode, int dest, int tag, MPI_Comm comm,
                     MPI_Request *request)
{
    r->peer = dest;
    r->tag = tag;
    r->comm = comm;
    r->send_mode = mode;
    ml_pb_produce(r->pb, dest, tag, comm, r->payload_bytes);
    int rc = next_isend(mode, MPI_BOTTOM, 1, wire_type, dest, tag, comm, request);
    return ml_req_record(r, rc, *request, 1);
}

/* A nonblocking send (`persistent`: its *_init form), recorded under the user's handle. */
int ml_pb_send_request(int mode, int persistent, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                       MPI_Comm comm, MPI_Request *request)
{
    if (passes_through(dest))
        return persistent ? next_send_init(mode, buf, count, type, dest, tag, comm, request)
                          : next_isend(mode, buf, count, type, dest, tag, comm, request);
    ml_pb_drivers_comm_named(comm);
    if (!persistent && ml_pb.method->mechanism != PB_SEPARATE) {
        MPI_Datatype wire_type;
        ml_req_t *lean = ml_pb_kept_record(REQ_SEND, buf, count, type, &wire_type);
        if (lean)
            return lean_send(lean, wire_type, mode, dest, tag, comm, request);
    }
    ml_req_t *r = ml_req_new(REQ_SEND);
    ml_req_describe(r, buf, count, type, dest, tag, comm);
    r->persistent = persistent;
    r->send_mode = mode;
    int rc;
    if (ml_pb.method->mechanism == PB_SEPARATE) {
        if (persistent) { /* its pb message goes at each start */
            rc = next_send_init(mode, buf, count, type, dest, tag, comm, request);
        } else {
            int after = ml_pb_separate_after();
            if (!after)
                ml_pb_separate_send(dest, tag, comm, ml_pb_payload_bytes(count, type), r);
            rc = next_isend(mode, buf, count, type, dest, tag, comm, request);
            if (after && rc == MPI_SUCCESS)
                ml_pb_separate_send(dest, tag, comm, ml_pb_payload_bytes(count, type), r);
        }
    } else {
        const void *wire_buf;
        int wire_count;
        MPI_Datatype wire_type = MPI_DATATYPE_NULL;
        rc = ml_pb_send_prepare(r, &wire_buf, &wire_count, &wire_type);
        if (rc == MPI_SUCCESS)
            rc = persistent ? next_send_init(mode, wire_buf, wire_count, wire_type, dest, tag, comm, request)
                            : next_isend(mode, wire_buf, wire_count, wire_type, dest, tag, comm, request);
        ml_pb_wire_type_done(r, &wire_type);
    }
    return ml_req_record(r, rc, *request, !persistent);
}

/* A persistent send being started: its pb produced now, and packed again with the payload; a
 * buffered one of an in-band method copied and sent by the layer. */
int ml_pb_send_start(ml_req_t *r)
{
    if (ml_pb.method->mechanism != PB_SEPARATE)
        return r->send_mode == MODE_BUFFERED ? buffered_copy(r->buf, r->count, r->type, r->peer, r->tag, r->comm)
                                             : ml_pb_send_restart(r);
    ml_pb_separate_send(r->peer, r->tag, r->comm, ml_pb_payload_bytes(r->count, r->type), r);
    return MPI_SUCCESS;
}
