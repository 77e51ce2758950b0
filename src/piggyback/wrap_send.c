/* Sends: Send, Bsend, Ssend, Rsend, their I-forms and their persistent *_init forms. Each carries
 * its pb by the method in force; the mode (standard, buffered, synchronous, ready) is that of
 * the user's payload. Under the separate method the pb message is a standard-mode one of the
 * layer's own, left in flight (separate.c says why). Buffered sends of an in-band method need room for the pb in the attached buffer
 * (docs/piggyback.md, "Limits"). */
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
    int rc;
    if (ml_pb.method->mechanism != PB_SEPARATE &&
        ml_pb_small_send(next_send, mode, buf, count, type, dest, tag, comm, &rc))
        return rc;
    ml_req_t r = {.kind = REQ_SEND, .blocking = 1};
    ml_req_describe(&r, buf, count, type, dest, tag, comm);
    MPI_Datatype wire_type = MPI_DATATYPE_NULL;
    if (ml_pb.method->mechanism == PB_SEPARATE) {
        ml_pb_separate_send(dest, tag, comm, ml_pb_payload_bytes(count, type));
        rc = next_send(mode, buf, count, type, dest, tag, comm);
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

/* A nonblocking send (`persistent`: its *_init form), recorded under the user's handle. */
int ml_pb_send_request(int mode, int persistent, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                       MPI_Comm comm, MPI_Request *request)
{
    if (passes_through(dest))
        return persistent ? next_send_init(mode, buf, count, type, dest, tag, comm, request)
                          : next_isend(mode, buf, count, type, dest, tag, comm, request);
    ml_req_t *r = ml_req_new(REQ_SEND);
    ml_req_describe(r, buf, count, type, dest, tag, comm);
    r->persistent = persistent;
    r->send_mode = mode;
    int rc;
    if (ml_pb.method->mechanism == PB_SEPARATE) {
        if (persistent) { /* its pb message goes at each start */
            rc = next_send_init(mode, buf, count, type, dest, tag, comm, request);
        } else {
            ml_pb_separate_send(dest, tag, comm, ml_pb_payload_bytes(count, type));
            rc = next_isend(mode, buf, count, type, dest, tag, comm, request);
        }
    } else {
        const void *wire_buf;
        int wire_count;
        MPI_Datatype wire_type;
        rc = ml_pb_send_prepare(r, &wire_buf, &wire_count, &wire_type);
        if (rc == MPI_SUCCESS)
            rc = persistent ? next_send_init(mode, wire_buf, wire_count, wire_type, dest, tag, comm, request)
                            : next_isend(mode, wire_buf, wire_count, wire_type, dest, tag, comm, request);
        if (!r->staged) {
            if (persistent)
                r->wire_type = wire_type; /* MPI may still need it at each start */
            else
                PMPI_Type_free(&wire_type);
        }
    }
    return ml_req_record(r, rc, *request, !persistent);
}

/* A persistent send being started: its pb produced now, and packed again with the payload. */
int ml_pb_send_start(ml_req_t *r)
{
    if (ml_pb.method->mechanism != PB_SEPARATE)
        return ml_pb_send_restart(r);
    ml_pb_separate_send(r->peer, r->tag, r->comm, ml_pb_payload_bytes(r->count, r->type));
    return MPI_SUCCESS;
}
