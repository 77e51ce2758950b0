/* What libmpilens-piggyback's wrappers call (wrapped.spec): the layer's implementation of each MPI
 * call it wraps, with the arguments of the call (send_blocking and send_request take the send
 * mode as well; recv_request whether the receive is persistent), and the life cycle. */
#ifndef MPILENS_PIGGYBACK_HOOKS_H
#define MPILENS_PIGGYBACK_HOOKS_H

#include "pb.h"

/* wrap_send.c: sends of every mode, blocking, non-blocking and persistent */
int ml_pb_send_blocking(int mode, const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
int ml_pb_send_request(int mode, int persistent, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                       MPI_Comm comm, MPI_Request *request);
int ml_pb_send_start(ml_req_t *r);
/* Buffered sends: Bsend, and Ibsend or Bsend_init (`persistent`) */
int ml_pb_bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
int ml_pb_buffered_request(int persistent, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm, MPI_Request *request);

/* wrap_recv.c: receives and probes; every status the program gets counts the payload only */
int ml_pb_recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status);
int ml_pb_recv_request(int persistent, void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                       MPI_Request *request);
int ml_pb_sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status);
int ml_pb_sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                           MPI_Comm comm, MPI_Status *status);
int ml_pb_probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
int ml_pb_iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);
int ml_pb_mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status);
int ml_pb_improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status);
int ml_pb_mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status);
int ml_pb_imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request);

/* isendrecv.c: MPI-4's non-blocking Sendrecv, a pair of requests behind a generalized one */
/* Drives the two requests of pair `r` (a REQ_PAIR record): blocks until both are done when
 * wait, else tests them; completes the program's request once both are done. */
void ml_pb_pair_drive(ml_req_t *r, int wait) ML_RARE;
/* The requests of pair `r` not yet complete, as pointers into the pair (at most 2): a blocking
 * call among pairs waits for them in MPI beside the program's own (complete.c). */
int ml_pb_pair_pending(ml_req_t *r, MPI_Request *pending[2]) ML_RARE;
/* MPI completed the pair's request `*request` (one ml_pb_pair_pending gave) with `status` and
 * left `handle` in its place: the pair takes it, and the request's record does its part. */
void ml_pb_pair_completed(ml_req_t *r, MPI_Request *request, MPI_Request handle, MPI_Status *status) ML_RARE;
#if MPI_VERSION >= 4
int ml_pb_isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request);
int ml_pb_isendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                            MPI_Comm comm, MPI_Request *request);
#endif

/* complete.c: completion, starting and freeing requests */
int ml_pb_wait(MPI_Request *request, MPI_Status *status);
int ml_pb_test(MPI_Request *request, int *flag, MPI_Status *status);
int ml_pb_request_get_status(MPI_Request request, int *flag, MPI_Status *status);
int ml_pb_waitall(int n, MPI_Request requests[], MPI_Status statuses[]);
int ml_pb_testall(int n, MPI_Request requests[], int *flag, MPI_Status statuses[]);
int ml_pb_waitany(int n, MPI_Request requests[], int *index, MPI_Status *status);
int ml_pb_testany(int n, MPI_Request requests[], int *index, int *flag, MPI_Status *status);
int ml_pb_waitsome(int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]);
int ml_pb_testsome(int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]);
int ml_pb_start(MPI_Request *request);
int ml_pb_startall(int n, MPI_Request requests[]);
int ml_pb_request_free(MPI_Request *request);

/* init.c: the life cycle */
void ml_pb_start_layer(int provided);
int ml_pb_provided_level(int provided);
void ml_pb_stop_layer(void);

#endif
