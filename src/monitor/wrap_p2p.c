/* Point-to-point sends (docs/monitor.md, "Point-to-point"): one message of count x type size from
 * this process to the destination, counted when the send is posted (as Open MPI's monitoring
 * counts it), whatever the send mode. Persistent sends are counted at each MPI_Start. Receives are
 * never counted: the sender counts every message. */
#include "monitor.h"
#include "next.h"

static void sent(MPI_Comm comm, int dest, int count, MPI_Datatype type)
{
    if (ml_recording())
        ml_record(ML_P2P, comm, dest, ml_bytes(count, type));
}

/* After a successful MPI_*send_init: the message each MPI_Start of *request will send. Only
 * requests created while counting is on are known (translating dest needs the engine up). */
static int persistent_send(int rc, MPI_Comm comm, int dest, int count, MPI_Datatype type, const MPI_Request *request)
{
    if (rc != MPI_SUCCESS || !ml_recording())
        return rc;
    ml_message_t message = {ml_world_rank(comm, dest), ml_bytes(count, type)};
    if (message.world_rank >= 0) /* MPI_PROC_NULL: nothing to count at any start */
        ml_persistent_add(*request, ML_P2P, &message, 1);
    return rc;
}

/* ---- blocking -------------------------------------------------------------------------------- */

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    sent(comm, dest, count, datatype);
    ML_FORWARD(MPI_Send, buf, count, datatype, dest, tag, comm);
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    sent(comm, dest, count, datatype);
    ML_FORWARD(MPI_Bsend, buf, count, datatype, dest, tag, comm);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    sent(comm, dest, count, datatype);
    ML_FORWARD(MPI_Ssend, buf, count, datatype, dest, tag, comm);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    sent(comm, dest, count, datatype);
    ML_FORWARD(MPI_Rsend, buf, count, datatype, dest, tag, comm);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    sent(comm, dest, sendcount, sendtype);
    ML_FORWARD(MPI_Sendrecv, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
               recvtag, comm, status);
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status *status)
{
    sent(comm, dest, count, datatype);
    ML_FORWARD(MPI_Sendrecv_replace, buf, count, datatype, dest, sendtag, source, recvtag, comm, status);
}

/* ---- non-blocking ---------------------------------------------------------------------------- */

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    sent(comm, dest, count, datatype);
    ML_FORWARD(MPI_Isend, buf, count, datatype, dest, tag, comm, request);
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    sent(comm, dest, count, datatype);
    ML_FORWARD(MPI_Ibsend, buf, count, datatype, dest, tag, comm, request);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    sent(comm, dest, count, datatype);
    ML_FORWARD(MPI_Issend, buf, count, datatype, dest, tag, comm, request);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    sent(comm, dest, count, datatype);
    ML_FORWARD(MPI_Irsend, buf, count, datatype, dest, tag, comm, request);
}

#if MPI_VERSION >= 4
/* MPI-4's non-blocking Sendrecv: the send part, like the blocking forms. */
int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    sent(comm, dest, sendcount, sendtype);
    ML_FORWARD(MPI_Isendrecv, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
               recvtag, comm, request);
}

int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                          int recvtag, MPI_Comm comm, MPI_Request *request)
{
    sent(comm, dest, count, datatype);
    ML_FORWARD(MPI_Isendrecv_replace, buf, count, datatype, dest, sendtag, source, recvtag, comm, request);
}
#endif

/* ---- persistent ------------------------------------------------------------------------------ */

int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  MPI_Request *request)
{
    return persistent_send(ML_NEXT(MPI_Send_init)(buf, count, datatype, dest, tag, comm, request), comm, dest, count,
                           datatype, request);
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    return persistent_send(ML_NEXT(MPI_Bsend_init)(buf, count, datatype, dest, tag, comm, request), comm, dest,
                           count, datatype, request);
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    return persistent_send(ML_NEXT(MPI_Ssend_init)(buf, count, datatype, dest, tag, comm, request), comm, dest,
                           count, datatype, request);
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    return persistent_send(ML_NEXT(MPI_Rsend_init)(buf, count, datatype, dest, tag, comm, request), comm, dest,
                           count, datatype, request);
}

/* Every persistent operation starts here, sends and (MPI-4) collectives alike; requests the
 * engine does not know (receives, requests made while counting was off) count nothing. */
int MPI_Start(MPI_Request *request)
{
    if (ml_recording())
        ml_persistent_start(*request);
    ML_FORWARD(MPI_Start, request);
}

int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    if (ml_recording())
        for (int i = 0; i < count; i++)
            ml_persistent_start(array_of_requests[i]);
    ML_FORWARD(MPI_Startall, count, array_of_requests);
}

/* Forgotten before the call, which sets *request to MPI_REQUEST_NULL; whether or not counting
 * is on, so that a handle MPI reuses later is never taken for the freed request. */
int MPI_Request_free(MPI_Request *request)
{
    if (request)
        ml_persistent_free(*request);
    ML_FORWARD(MPI_Request_free, request);
}
