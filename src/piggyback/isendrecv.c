/* MPI-4's Isendrecv and Isendrecv_replace: one request for a send and a receive. The layer makes
 * them its own MPI_Irecv and MPI_Isend (each carrying its pb by the method in force, recorded and
 * completed like any other) and gives the program a generalized request (MPI_Grequest_start) that
 * stands for both: a pair. Every completion call drives a pair's two requests before it goes to
 * MPI (complete.c), without blocking unless the call blocks, and completes the generalized
 * request once both are done; its status is the receive's, corrected by the layer like any
 * receive's. (MPI_Isendrecv itself would not do: MPICH 4.0's leaves its status empty, and the
 * in-band methods need the received size.) The replace form sends a packed copy of the buffer,
 * taken before the receive may land in it. */
#include <stdlib.h>

#include "hooks.h"

struct ml_pair {
    MPI_Request recv, send;              /* the layer's own; MPI_REQUEST_NULL once done */
    ml_req_t *recv_record, *send_record; /* their records, kept out of the table (see hold) */
    MPI_Status status;                   /* the receive's, as the program sees it */
    void *packed;                        /* the replace form's copy of the outgoing data */
};

void ml_pb_pair_free(ml_pair_t *pair)
{
    if (!pair)
        return;
    ml_req_free(pair->recv_record);
    ml_req_free(pair->send_record);
    free(pair->packed);
    free(pair);
}

/* One of the pair's requests, completed by MPI with `status`: its record does the layer's part
 * (the receive's status becomes the pair's). */
static void finish_one(ml_pair_t *pair, const MPI_Request *request, MPI_Status *status)
{
    int receive = request == &pair->recv;
    ml_req_t **record = receive ? &pair->recv_record : &pair->send_record;
    if (receive && status != &pair->status)
        pair->status = *status;
    if (*record)
        ml_pb_complete(*record, receive ? &pair->status : status, 1);
    *record = NULL;
}

int ml_pb_pair_pending(ml_req_t *r, MPI_Request *pending[2])
{
    ml_pair_t *pair = r->pair;
    int n = 0;
    if (pair && !r->finished) {
        if (pair->recv != MPI_REQUEST_NULL)
            pending[n++] = &pair->recv;
        if (pair->send != MPI_REQUEST_NULL)
            pending[n++] = &pair->send;
    }
    return n;
}

ml_req_t *ml_pb_pair_record(ml_req_t *r, const MPI_Request *request)
{
    ml_pair_t *pair = r->pair;
    return request == &pair->recv ? pair->recv_record : pair->send_record;
}

void ml_pb_pair_completed(ml_req_t *r, MPI_Request *request, MPI_Request handle, MPI_Status *status)
{
    *request = handle;
    finish_one(r->pair, request, status);
}

/* Moves one of the pair's requests on (waits for it when `wait`); its record does the layer's
 * part once it is complete. Clears *done when it is not. */
static void drive_one(ml_pair_t *pair, MPI_Request *request, MPI_Status *status, int wait, int *done)
{
    if (*request == MPI_REQUEST_NULL)
        return;
    int flag = 1;
    if (wait)
        PMPI_Wait(request, status);
    else
        PMPI_Test(request, &flag, status);
    if (!flag) {
        *done = 0;
        return;
    }
    finish_one(pair, request, status);
}

void ml_pb_pair_drive(ml_req_t *r, int wait)
{
    ml_pair_t *pair = r->pair;
    if (!pair || r->finished)
        return;
    int done = 1;
    MPI_Status send_status;
    drive_one(pair, &pair->recv, &pair->status, wait, &done);
    if (done)
        drive_one(pair, &pair->send, &send_status, wait, &done);
    if (pair->recv == MPI_REQUEST_NULL && pair->send == MPI_REQUEST_NULL) {
        r->finished = 1;
        PMPI_Grequest_complete(r->handle);
    }
}

#if MPI_VERSION >= 4
/* The record of one of the pair's requests, taken out of the table of the program's requests:
 * MPICH gives every send it completed at once the same handle, so the program's next MPI_Isend
 * would find (and drop) the pair's send under it, or the pair's completion would complete the
 * program's send in its place and leave the program's MPI_Waitall a freed record (MPICH's
 * sendrecv3 -isendrecv hung so). NULL where the layer kept no record (MPI_PROC_NULL). */
static ml_req_t *hold(MPI_Request handle)
{
    ml_req_t *r = ml_req_find(handle);
    if (r)
        ml_req_remove(r);
    return r;
}

static int query(void *extra, MPI_Status *status)
{
    *status = ((ml_pair_t *)extra)->status;
    return MPI_SUCCESS;
}

/* The layer frees the pair with its record (ml_pb_complete). */
static int free_nothing(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

/* MPI_Cancel of the program's request: both operations cancelled; the next completion call's
 * drive sees them complete, and the status says whether the receive was cancelled. */
static int cancel_both(void *extra, int complete)
{
    ml_pair_t *pair = extra;
    if (!complete) {
        if (pair->recv != MPI_REQUEST_NULL)
            PMPI_Cancel(&pair->recv);
        if (pair->send != MPI_REQUEST_NULL)
            PMPI_Cancel(&pair->send);
    }
    return MPI_SUCCESS;
}

/* The two operations posted through the layer, and the request that stands for them. */
static int post_pair(ml_pair_t *pair, const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                     void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                     MPI_Request *request)
{
    pair->recv = pair->send = MPI_REQUEST_NULL;
    int rc = ml_pb_recv_request(0, recvbuf, recvcount, recvtype, source, recvtag, comm, &pair->recv);
    if (rc == MPI_SUCCESS) {
        pair->recv_record = hold(pair->recv);
        rc = ml_pb_send_request(MODE_STANDARD, 0, sendbuf, sendcount, sendtype, dest, sendtag, comm, &pair->send);
    }
    if (rc == MPI_SUCCESS) {
        pair->send_record = hold(pair->send);
        rc = PMPI_Grequest_start(query, free_nothing, cancel_both, pair, request);
    }
    if (rc != MPI_SUCCESS) {
        ml_pb_pair_free(pair);
        return rc;
    }
    ml_req_t *r = ml_req_new(REQ_PAIR);
    r->pair = pair;
    r->comm = comm;
    return ml_req_record(r, rc, *request, 1);
}

int ml_pb_isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    if (!ml_pb.active)
        return ML_NEXT(MPI_Isendrecv)(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                                      recvtag, comm, request);
    ml_pair_t *pair = calloc(1, sizeof *pair);
    if (!pair)
        ml_pb_fail("out of memory for an MPI_Isendrecv");
    return post_pair(pair, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                     comm, request);
}

int ml_pb_isendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                            MPI_Comm comm, MPI_Request *request)
{
    if (!ml_pb.active)
        return ML_NEXT(MPI_Isendrecv_replace)(buf, count, type, dest, sendtag, source, recvtag, comm, request);
    ml_pair_t *pair = calloc(1, sizeof *pair);
    int size = 0, position = 0;
    if (!pair || PMPI_Pack_size(count, type, comm, &size) != MPI_SUCCESS || !(pair->packed = malloc(size ? size : 1)))
        ml_pb_fail("out of memory for an MPI_Isendrecv_replace");
    int rc = PMPI_Pack(buf, count, type, pair->packed, size, &position, comm);
    if (rc != MPI_SUCCESS) {
        ml_pb_pair_free(pair);
        return rc;
    }
    return post_pair(pair, pair->packed, position, MPI_PACKED, dest, sendtag, buf, count, type, source, recvtag, comm,
                     request);
}
#endif
