/* Receives and probes: Recv, Irecv, Recv_init, Sendrecv, Sendrecv_replace, Probe, Iprobe,
 * Mprobe, Improbe, Mrecv, Imrecv. Every status the user gets counts the payload only. */
#include <stdlib.h>

#include "hooks.h"

static int passes_through(int source) { return !ml_pb.active || source == MPI_PROC_NULL; }

static int separate(void) { return ml_pb.method->mechanism == PB_SEPARATE; }

int ml_pb_recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    if (passes_through(source))
        return ML_NEXT(MPI_Recv)(buf, count, type, source, tag, comm, status);
    ml_pb_drivers_comm_named(comm);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    if (separate()) {
        ml_pb_separate_expect(comm, source, tag);
        int rc = ML_NEXT(MPI_Recv)(buf, count, type, source, tag, comm, st);
        if (rc == MPI_SUCCESS)
            ml_pb_separate_completed(NULL, comm, st);
        else
            ml_pb_separate_unexpect(comm, source, tag);
        return rc;
    }
    int rc;
    if (ml_pb_small_recv(buf, count, type, source, tag, comm, status, &rc))
        return rc;
    ml_req_t r = {.kind = REQ_RECV, .blocking = 1};
    ml_req_describe(&r, buf, count, type, source, tag, comm);
    void *wire_buf;
    int wire_count;
    MPI_Datatype wire_type = MPI_DATATYPE_NULL;
    rc = ml_pb_recv_prepare(&r, &wire_buf, &wire_count, &wire_type);
    if (rc == MPI_SUCCESS)
        rc = ML_NEXT(MPI_Recv)(wire_buf, wire_count, wire_type, source, tag, comm, st);
    if (rc == MPI_SUCCESS)
        ml_pb_recv_finish(&r, st, status == MPI_STATUS_IGNORE ? 0 : ML_FINISH_STATUS_SEEN);
    ml_pb_release(&r, &wire_type);
    return rc;
}

/* A nonblocking receive by the lean path (ml_pb_kept_record): r, its kept pair's record,
 * describes the receive but for its pattern; the pair's struct type posted. */
static int lean_recv(ml_req_t *r, MPI_Datatype wire_type, int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    r->peer = source;
    r->tag = tag;
    r->comm = comm;
    int rc = ML_NEXT(MPI_Irecv)(MPI_BOTTOM, 1, wire_type, source, tag, comm, request);
    return ml_req_record(r, rc, *request, 1);
}

/* A nonblocking receive (`persistent`: MPI_Recv_init), recorded under the user's handle. */
int ml_pb_recv_request(int persistent, void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                       MPI_Request *request)
{
    if (passes_through(source))
        return persistent ? ML_NEXT(MPI_Recv_init)(buf, count, type, source, tag, comm, request)
                          : ML_NEXT(MPI_Irecv)(buf, count, type, source, tag, comm, request);
    ml_pb_drivers_comm_named(comm);
    if (!persistent && !separate()) {
        MPI_Datatype wire_type;
        ml_req_t *lean = ml_pb_kept_record(REQ_RECV, buf, count, type, &wire_type);
        if (lean)
            return lean_recv(lean, wire_type, source, tag, comm, request);
    }
    ml_req_t *r = ml_req_new(REQ_RECV);
    ml_req_describe(r, buf, count, type, source, tag, comm);
    r->persistent = persistent;
    void *wire_buf = buf;
    int wire_count = count, rc = MPI_SUCCESS;
    MPI_Datatype wire_type = type;
    if (!separate()) {
        wire_type = MPI_DATATYPE_NULL; /* the program's type is never the layer's to free */
        rc = ml_pb_recv_prepare(r, &wire_buf, &wire_count, &wire_type);
    }
    if (rc == MPI_SUCCESS)
        rc = persistent ? ML_NEXT(MPI_Recv_init)(wire_buf, wire_count, wire_type, source, tag, comm, request)
                        : ML_NEXT(MPI_Irecv)(wire_buf, wire_count, wire_type, source, tag, comm, request);
    if (!separate())
        ml_pb_wire_type_done(r, &wire_type);
    if (ml_req_record(r, rc, *request, !persistent) == MPI_SUCCESS && !persistent && separate())
        ml_pb_separate_posted(r);
    return rc;
}

/* ---- Sendrecv and Sendrecv_replace -------------------------------------------------------------- */

/* The separate method around a Sendrecv: before it, the pb message ("separate" only) and the
 * early pb receive; after it, the pb message ("separate-after") and then the pairing, whose wait
 * for the peer's pb is bounded because every rank sends its own first. */
static void separate_before(int dest, int sendtag, MPI_Comm comm, size_t bytes, int source, int recvtag)
{
    if (!ml_pb_separate_after())
        ml_pb_separate_send(dest, sendtag, comm, bytes, NULL);
    ml_pb_separate_expect(comm, source, recvtag);
}

static void separate_after(int rc, int dest, int sendtag, MPI_Comm comm, size_t bytes, int source, int recvtag,
                           MPI_Status *status)
{
    if (rc != MPI_SUCCESS) {
        ml_pb_separate_unexpect(comm, source, recvtag);
        return;
    }
    if (ml_pb_separate_after())
        ml_pb_separate_send(dest, sendtag, comm, bytes, NULL);
    if (source != MPI_PROC_NULL)
        ml_pb_separate_completed(NULL, comm, status);
}

int ml_pb_sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    if (!ml_pb.active)
        return ML_NEXT(MPI_Sendrecv)(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                                     recvtag, comm, status);
    ml_pb_drivers_comm_named(comm);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    if (separate()) {
        size_t bytes = ml_pb_payload_bytes(sendcount, sendtype);
        separate_before(dest, sendtag, comm, bytes, source, recvtag);
        int rc = ML_NEXT(MPI_Sendrecv)(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                                       source, recvtag, comm, st);
        separate_after(rc, dest, sendtag, comm, bytes, source, recvtag, st);
        return rc;
    }
    ml_req_t out = {.kind = REQ_SEND, .blocking = 1}, in = {.kind = REQ_RECV, .blocking = 1};
    ml_req_describe(&out, sendbuf, sendcount, sendtype, dest, sendtag, comm);
    ml_req_describe(&in, recvbuf, recvcount, recvtype, source, recvtag, comm);
    const void *send_wire = sendbuf;
    void *recv_wire = recvbuf;
    int send_count = sendcount, recv_count = recvcount, rc = MPI_SUCCESS;
    MPI_Datatype send_type = MPI_DATATYPE_NULL, recv_type = MPI_DATATYPE_NULL;
    if (dest != MPI_PROC_NULL)
        rc = ml_pb_send_prepare(&out, &send_wire, &send_count, &send_type);
    else
        send_type = sendtype, out.staged = 1; /* nothing of the layer's to free */
    if (rc == MPI_SUCCESS && source != MPI_PROC_NULL)
        rc = ml_pb_recv_prepare(&in, &recv_wire, &recv_count, &recv_type);
    else
        recv_type = recvtype, in.staged = 1;
    if (rc == MPI_SUCCESS)
        rc = ML_NEXT(MPI_Sendrecv)(send_wire, send_count, send_type, dest, sendtag, recv_wire, recv_count, recv_type,
                                   source, recvtag, comm, st);
    if (rc == MPI_SUCCESS && source != MPI_PROC_NULL)
        ml_pb_recv_finish(&in, st, status == MPI_STATUS_IGNORE ? 0 : ML_FINISH_STATUS_SEEN);
    ml_pb_release(&out, &send_type);
    ml_pb_release(&in, &recv_type);
    return rc;
}

/* The in-band methods go through two staging buffers, so that the outgoing message is taken
 * whole before the incoming one lands in the same buffer. */
int ml_pb_sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                           MPI_Comm comm, MPI_Status *status)
{
    if (!ml_pb.active)
        return ML_NEXT(MPI_Sendrecv_replace)(buf, count, type, dest, sendtag, source, recvtag, comm, status);
    ml_pb_drivers_comm_named(comm);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    if (separate()) {
        size_t bytes = ml_pb_payload_bytes(count, type);
        separate_before(dest, sendtag, comm, bytes, source, recvtag);
        int rc = ML_NEXT(MPI_Sendrecv_replace)(buf, count, type, dest, sendtag, source, recvtag, comm, st);
        separate_after(rc, dest, sendtag, comm, bytes, source, recvtag, st);
        return rc;
    }
    ml_req_t out = {.kind = REQ_SEND, .blocking = 1, .staged = 1};
    ml_req_t in = {.kind = REQ_RECV, .blocking = 1, .staged = 1};
    ml_req_describe(&out, buf, count, type, dest, sendtag, comm);
    ml_req_describe(&in, buf, count, type, source, recvtag, comm);
    const void *send_wire = buf;
    void *recv_wire = buf;
    int send_count = count, recv_count = count, rc = MPI_SUCCESS;
    MPI_Datatype send_type = type, recv_type = type;
    if (dest != MPI_PROC_NULL)
        rc = ml_pb_send_prepare(&out, &send_wire, &send_count, &send_type);
    if (rc == MPI_SUCCESS && source != MPI_PROC_NULL)
        rc = ml_pb_recv_prepare(&in, &recv_wire, &recv_count, &recv_type);
    if (rc == MPI_SUCCESS) {
        if (dest != MPI_PROC_NULL && source != MPI_PROC_NULL)
            rc = ML_NEXT(MPI_Sendrecv)(send_wire, send_count, send_type, dest, sendtag, recv_wire, recv_count,
                                       recv_type, source, recvtag, comm, st);
        else /* one side is MPI_PROC_NULL: only the other side's staging buffer goes to MPI */
            rc = ML_NEXT(MPI_Sendrecv_replace)(
                dest != MPI_PROC_NULL ? (void *)send_wire : recv_wire, dest != MPI_PROC_NULL ? send_count : recv_count,
                dest != MPI_PROC_NULL ? send_type : recv_type, dest, sendtag, source, recvtag, comm, st);
    }
    if (rc == MPI_SUCCESS && source != MPI_PROC_NULL)
        ml_pb_recv_finish(&in, st, status == MPI_STATUS_IGNORE ? 0 : ML_FINISH_STATUS_SEEN);
    ml_pb_release(&out, &send_type);
    ml_pb_release(&in, &recv_type);
    return rc;
}

/* ---- probes ------------------------------------------------------------------------------------- */

int ml_pb_probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int rc = ML_NEXT(MPI_Probe)(source, tag, comm, status);
    if (rc == MPI_SUCCESS && ml_pb.active && status != MPI_STATUS_IGNORE)
        ml_pb_probe_fix(status);
    return rc;
}

int ml_pb_iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    int rc = ML_NEXT(MPI_Iprobe)(source, tag, comm, flag, status);
    if (rc == MPI_SUCCESS && *flag && ml_pb.active && status != MPI_STATUS_IGNORE)
        ml_pb_probe_fix(status);
    return rc;
}

/* A matched message: its communicator kept for its receive (MPI cannot tell it from the message),
 * its size corrected, and under `separate` its pb paired now: it was sent before the payload.
 * Under `separate-after` it claims its pb receive now, and its receive takes it (separate.c). */
static void matched(MPI_Message message, MPI_Comm comm, MPI_Status *status)
{
    if (message == MPI_MESSAGE_NO_PROC)
        return;
    ml_pb_drivers_comm_named(comm);
    void *claim = NULL;
    if (!separate())
        ml_pb_probe_fix(status);
    else if (!ml_pb_separate_after())
        ml_pb_separate_matched(comm, status);
    else
        claim = ml_pb_separate_claim(comm, status->MPI_SOURCE, status->MPI_TAG);
    ml_pb_message_remember(message, comm, claim);
}

int ml_pb_mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    if (!ml_pb.active)
        return ML_NEXT(MPI_Mprobe)(source, tag, comm, message, status);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = ML_NEXT(MPI_Mprobe)(source, tag, comm, message, st);
    if (rc == MPI_SUCCESS)
        matched(*message, comm, st);
    return rc;
}

int ml_pb_improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    if (!ml_pb.active)
        return ML_NEXT(MPI_Improbe)(source, tag, comm, flag, message, status);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = ML_NEXT(MPI_Improbe)(source, tag, comm, flag, message, st);
    if (rc == MPI_SUCCESS && *flag)
        matched(*message, comm, st);
    return rc;
}

int ml_pb_mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    if (!ml_pb.active || *message == MPI_MESSAGE_NO_PROC)
        return ML_NEXT(MPI_Mrecv)(buf, count, type, message, status);
    remembered_t m = ml_pb_message_take(*message);
    MPI_Comm comm = m.comm;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    if (separate()) { /* separate-after: the pb its probe claimed, now the payload is in */
        int rc = ML_NEXT(MPI_Mrecv)(buf, count, type, message, st);
        if (rc == MPI_SUCCESS && m.claim)
            ml_pb_separate_take_claimed(m.claim, comm, st);
        return rc;
    }
    ml_req_t r = {.kind = REQ_RECV, .blocking = 1};
    ml_req_describe(&r, buf, count, type, MPI_ANY_SOURCE, MPI_ANY_TAG, comm);
    void *wire_buf;
    int wire_count;
    MPI_Datatype wire_type = MPI_DATATYPE_NULL;
    int rc = ml_pb_recv_prepare(&r, &wire_buf, &wire_count, &wire_type);
    if (rc == MPI_SUCCESS)
        rc = ML_NEXT(MPI_Mrecv)(wire_buf, wire_count, wire_type, message, st);
    if (rc == MPI_SUCCESS)
        ml_pb_recv_finish(&r, st, status == MPI_STATUS_IGNORE ? 0 : ML_FINISH_STATUS_SEEN);
    ml_pb_release(&r, &wire_type);
    return rc;
}

int ml_pb_imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request)
{
    if (!ml_pb.active || *message == MPI_MESSAGE_NO_PROC)
        return ML_NEXT(MPI_Imrecv)(buf, count, type, message, request);
    remembered_t m = ml_pb_message_take(*message);
    MPI_Comm comm = m.comm;
    if (separate() && !m.claim)
        return ML_NEXT(MPI_Imrecv)(buf, count, type, message, request);
    ml_req_t *r = ml_req_new(REQ_RECV);
    if (separate()) { /* separate-after: its completion takes the pb its probe claimed */
        ml_req_describe(r, buf, count, type, MPI_ANY_SOURCE, MPI_ANY_TAG, comm);
        r->claim = m.claim;
        int rc = ML_NEXT(MPI_Imrecv)(buf, count, type, message, request);
        return ml_req_record(r, rc, *request, 1);
    }
    ml_req_describe(r, buf, count, type, MPI_ANY_SOURCE, MPI_ANY_TAG, comm);
    void *wire_buf;
    int wire_count;
    MPI_Datatype wire_type = MPI_DATATYPE_NULL;
    int rc = ml_pb_recv_prepare(r, &wire_buf, &wire_count, &wire_type);
    if (rc == MPI_SUCCESS)
        rc = ML_NEXT(MPI_Imrecv)(wire_buf, wire_count, wire_type, message, request);
    ml_pb_wire_type_done(r, &wire_type);
    return ml_req_record(r, rc, *request, 1);
}

/* ---- matched messages: a short list, since few are outstanding at once -------------------------- */

static remembered_t *messages;

void ml_pb_message_remember(MPI_Message message, MPI_Comm comm, void *claim)
{
    remembered_t *m = malloc(sizeof *m);
    if (!m)
        ml_pb_fail("out of memory for a matched message");
    *m = (remembered_t){message, comm, claim, messages};
    messages = m;
}

remembered_t ml_pb_message_take(MPI_Message message)
{
    for (remembered_t **p = &messages; *p; p = &(*p)->next)
        if ((*p)->message == message) {
            remembered_t m = **p;
            free(*p);
            *p = m.next;
            return m;
        }
    ml_pb_fail("MPI_Mrecv or MPI_Imrecv of a message no MPI_Mprobe or MPI_Improbe of the layer returned");
}
