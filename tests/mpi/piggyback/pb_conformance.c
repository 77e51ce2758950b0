/* What MPICH's own test suite (test/mpi/pt2pt, tests/conformance/run) found the piggyback layer
 * doing wrong, each as a case of its own, in a ring (every rank sends to its right neighbour):
 * - rqstatus: MPI_Request_get_status saw a receive complete, and the MPI_Wait after it showed
 *   the bytes on the wire (8 ints for 2) instead of the payload's;
 * - dtype_send, multi_psend_derived: the program frees a derived datatype while operations that
 *   use it are pending (MPI keeps it alive for them): the layer unpacked with the freed handle,
 *   and started persistent requests with it;
 * - sendrecv3 -isendrecv: an MPI_Isendrecv of nothing, then Isends and blocking receives, then
 *   one MPI_Waitall of them all: the layer hung (in-band methods) or aborted (separate);
 * - issendselfcancel: an MPI_Issend to itself, cancelled and freed: the separate method refused
 *   it, since its pb message was already on its way;
 * - probe_unexp: communicators created and freed one after the other, a message on each: MPI
 *   gives a new communicator the handle of a freed one, on some ranks and not others, and the
 *   check driver, which numbered each stream by handle, went on with the freed communicator's
 *   numbers at one end and started again at the other;
 * - mprobe: a blocking synchronous and rendezvous-size send matched by MPI_Mprobe
 *   (MPI_Improbe) and received by MPI_Mrecv (MPI_Imrecv): separate-after paired the pb at the
 *   probe, waiting for a pb its sender sends only once the payload is received (a hang); and a
 *   message matched by MPI_Mprobe then received after a later one of its stream;
 * - comm/ic1: an intercommunicator made by MPI 4's MPI_Intercomm_create_from_groups, which the
 *   separate methods did not give a shadow communicator (the job ended);
 * - comm/cmfree: a communicator freed while a receive on it is pending (MPI completes the
 *   receive): the separate methods freed its shadow at once, and the receive's pb with it (a
 *   hang).
 * - comm/comm_idup_iallreduce: messages on communicators made by MPI_Comm_idup (and MPI 4's
 *   MPI_Comm_idup_with_info), which the separate methods did not give a shadow (the job ended);
 *   and an intercommunicator duplicated so beside an MPI_Iallreduce on it: the separate methods
 *   duplicated its shadow from it too, and Open MPI, whose two agreements on one
 *   intercommunicator can pair crosswise, now and then hung (tests/conformance/idup_twice.c).
 * - datatype/getpartelm, lots_of_types, hindexed_zeros: a message that ends inside an element of
 *   the receive's derived type (legal): the methods that pack ended the job, unable to unpack part
 *   of an element;
 * - datatype/hindexed_zeros: a message of a type with no bytes, from and to a null buffer: the
 *   datatype methods put the wire type's lower bound at address 0, and MPICH refused it as a null
 *   buffer (a hang under datatype-after).
 * - coll/nonblocking3: receives of one stream completed by one MPI_Waitall in another order than
 *   they were posted, beside a receive of another stream: pairing the later-posted one first
 *   settles the earlier one with the status MPI gave it in that call, and the separate methods
 *   read the entry before's status instead (the receive of another stream's: its pb taken, then
 *   a hang).
 * Each message's contents say which message and element it is (pbtest.h). Rank 0 prints
 * "expected N messages with piggyback" for the check driver's count, as test_pb_calls does. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define PBTEST_STRIDE 1000000
#include "pbtest.h"

enum { LOOPS = 16 };

static int rank, size, right, left;
static long received_messages;

/* Whether `st` says `n` ints came, and `in` holds message `message`; says what differs. */
static void expect(const char *what, const MPI_Status *st, const int *in, int n, int message)
{
    int got = -1;
    MPI_Get_count(st, MPI_INT, &got);
    if (got != n || (in && !holds(in, n, message))) {
        fprintf(stderr, "rank %d: %s: message %d: %d ints%s, expected %d\n", rank, what, message, got,
                got == n ? ", other contents" : "", n);
        check_failures++;
    }
}

/* rqstatus: the count of a receive whose completion MPI_Request_get_status saw first. */
static void status_seen_before_wait(void)
{
    int out[2], in[2] = {0, 0}, flag = 0;
    fill(out, 2, 10);
    MPI_Request request;
    MPI_Irecv(in, 2, MPI_INT, left, 10, MPI_COMM_WORLD, &request);
    MPI_Ssend(out, 2, MPI_INT, right, 10, MPI_COMM_WORLD);
    MPI_Status st;
    while (!flag)
        MPI_Request_get_status(request, &flag, &st);
    expect("MPI_Request_get_status", &st, in, 2, 10);
    MPI_Request_get_status(request, &flag, &st);
    expect("MPI_Request_get_status again", &st, in, 2, 10);
    MPI_Wait(&request, &st);
    expect("MPI_Wait after MPI_Request_get_status", &st, in, 2, 10);
    received_messages++;
}

/* Every other int of a buffer: a type the in-band methods pack and unpack. */
static MPI_Datatype every_other(int n)
{
    MPI_Datatype type;
    MPI_Type_vector(n, 1, 2, MPI_INT, &type);
    MPI_Type_commit(&type);
    return type;
}

/* dtype_send: nonblocking sends and receives of a derived type the program frees at once. */
static void types_freed_while_pending(void)
{
    static int out[LOOPS][8], in[LOOPS][8];
    MPI_Request requests[2 * LOOPS];
    for (int m = 0; m < LOOPS; m++) {
        MPI_Datatype type = every_other(4);
        for (int i = 0; i < 8; i++) {
            out[m][i] = pbtest_value(20 + m, i / 2);
            in[m][i] = -1;
        }
        MPI_Irecv(in[m], 1, type, left, 20, MPI_COMM_WORLD, &requests[2 * m]);
        MPI_Isend(out[m], 1, type, right, 20, MPI_COMM_WORLD, &requests[2 * m + 1]);
        MPI_Type_free(&type);
    }
    MPI_Status statuses[2 * LOOPS];
    MPI_Waitall(2 * LOOPS, requests, statuses);
    for (int m = 0; m < LOOPS; m++) {
        int got[4] = {in[m][0], in[m][2], in[m][4], in[m][6]};
        expect("a freed derived type", &statuses[2 * m], got, 4, 20 + m);
        if (in[m][1] != -1 || in[m][7] != -1) {
            fprintf(stderr, "rank %d: a freed derived type: message %d wrote between its elements\n", rank, 20 + m);
            check_failures++;
        }
        received_messages++;
    }
}

/* multi_psend_derived: persistent requests whose derived type the program freed after *_init. */
static void persistent_types_freed(void)
{
    int out[2], in[2];
    MPI_Datatype send_type, recv_type;
    MPI_Type_dup(MPI_INT, &send_type);
    MPI_Type_dup(MPI_INT, &recv_type);
    MPI_Request requests[2];
    MPI_Recv_init(in, 2, recv_type, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &requests[0]);
    MPI_Send_init(out, 2, send_type, right, 30, MPI_COMM_WORLD, &requests[1]);
    MPI_Type_free(&send_type);
    MPI_Type_free(&recv_type);
    for (int m = 0; m < LOOPS; m++) {
        fill(out, 2, 30 + m);
        MPI_Status statuses[2];
        MPI_Startall(2, requests);
        MPI_Waitall(2, requests, statuses);
        expect("a persistent request of a freed type", &statuses[0], in, 2, 30 + m);
        received_messages++;
    }
    MPI_Request_free(&requests[0]);
    MPI_Request_free(&requests[1]);
}

/* sendrecv3 -isendrecv: a pair of nothing left pending while `n` messages of `count` ints go each
 * way, then one MPI_Waitall of them all. Many small ones matter: MPICH gives every send it
 * completed at once the same handle, the pair's own send's too. */
static void isendrecv_beside_isends(int n, int count, int first)
{
#if MPI_VERSION >= 4
    int *out = malloc((size_t)n * (size_t)count * sizeof *out), *in = malloc((size_t)count * sizeof *in);
    MPI_Request *requests = malloc((size_t)(n + 1) * sizeof *requests);
    MPI_Status *statuses = malloc((size_t)(n + 1) * sizeof *statuses);
    REQUIRE(out && in && requests && statuses);
    MPI_Isendrecv(MPI_BOTTOM, 0, MPI_INT, right, 40, MPI_BOTTOM, 0, MPI_INT, left, 40, MPI_COMM_WORLD, &requests[n]);
    for (int m = 0; m < n; m++) {
        fill(out + (size_t)m * count, count, first + m);
        MPI_Isend(out + (size_t)m * count, count, MPI_INT, right, 41, MPI_COMM_WORLD, &requests[m]);
    }
    for (int m = 0; m < n; m++) {
        MPI_Status st;
        MPI_Recv(in, count, MPI_INT, left, 41, MPI_COMM_WORLD, &st);
        expect("a receive beside a pending MPI_Isendrecv", &st, in, count, first + m);
        received_messages++;
    }
    MPI_Waitall(n + 1, requests, statuses); /* the pair's status unread: MPICH 4.0's leaves it unset */
    received_messages++;
    free(out);
    free(in);
    free(requests);
    free(statuses);
#else
    (void)n, (void)count, (void)first;
#endif
}

/* issendselfcancel: a synchronous send to itself on MPI_COMM_SELF, probed, cancelled and freed;
 * then a receive posted and cancelled. Whether MPI cancelled the send or not (the program cannot
 * know, having freed it), the next message to itself arrives whole, with its own pb. */
static void cancelled_send_to_self(void)
{
    int out[3], in[3];
    fill(out, 3, 50);
    MPI_Request request;
    MPI_Status st;
    MPI_Issend(out, 3, MPI_INT, 0, 50, MPI_COMM_SELF, &request);
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &st);
    MPI_Cancel(&request);
    MPI_Request_free(&request);
    MPI_Irecv(in, 3, MPI_INT, 0, 51, MPI_COMM_SELF, &request);
    MPI_Cancel(&request);
    MPI_Wait(&request, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    if (!cancelled) {
        fprintf(stderr, "rank %d: a receive nothing could match was not cancelled\n", rank);
        check_failures++;
    }
    int flag = 1;
    MPI_Iprobe(0, 50, MPI_COMM_SELF, &flag, &st);
    if (flag) { /* MPI could not cancel the send: it is received */
        MPI_Recv(in, 3, MPI_INT, 0, 50, MPI_COMM_SELF, &st);
        expect("an MPI_Issend to itself MPI could not cancel", &st, in, 3, 50);
        received_messages++;
    }
    fill(out, 3, 52);
    MPI_Sendrecv(out, 3, MPI_INT, 0, 50, in, 3, MPI_INT, 0, 50, MPI_COMM_SELF, &st);
    expect("a message to itself after a cancelled one", &st, in, 3, 52);
    received_messages++;
}

/* probe_unexp: a message to the right on each of several communicators, each freed before the
 * next is made; on rank 0 a communicator of its own (a local call) takes the freed handle in
 * between, so that the next common one has, under MPI libraries that reuse handles, a freed
 * communicator's handle on the other ranks and a new one on rank 0. */
static void communicators_reused(void)
{
    for (int round = 0; round < 3; round++) {
        MPI_Comm comm, own = MPI_COMM_NULL;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        int out[2], in[2];
        fill(out, 2, 60);
        MPI_Status st;
        MPI_Sendrecv(out, 2, MPI_INT, right, 60, in, 2, MPI_INT, left, 60, comm, &st);
        expect("a message on a communicator made after others were freed", &st, in, 2, 60);
        received_messages++;
        MPI_Comm_free(&comm);
        if (rank == 0)
            MPI_Comm_dup(MPI_COMM_SELF, &own);
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Sendrecv(out, 2, MPI_INT, right, 60, in, 2, MPI_INT, left, 60, comm, &st);
        expect("a message on the next communicator", &st, in, 2, 60);
        received_messages++;
        MPI_Comm_free(&comm);
        if (own != MPI_COMM_NULL)
            MPI_Comm_free(&own);
    }
}

/* mprobe: even ranks send to the odd rank after them (an odd last rank sits out): a synchronous
 * small message and a rendezvous-size one, each blocking, whose pb separate-after sends only once
 * the payload is received; the odd rank matches each with MPI_Mprobe (MPI_Improbe), then
 * receives it with MPI_Mrecv (MPI_Imrecv). Then two messages of one stream, the first matched by
 * MPI_Mprobe and received after the second: each must get its own pb. */
static void matched_then_received(void)
{
    enum { LARGE = 1 << 18 }; /* 1 MiB of ints: rendezvous under both libraries */
    int partner = rank ^ 1;
    if (partner >= size)
        return;
    int *buf = malloc(LARGE * sizeof *buf);
    const int counts[2] = {3, LARGE};
    for (int k = 0; k < 2; k++)
        for (int nonblocking = 0; nonblocking < 2; nonblocking++) {
            int n = counts[k], tag = 70 + 2 * k + nonblocking;
            if (rank % 2 == 0) {
                fill(buf, n, tag);
                (k ? MPI_Send : MPI_Ssend)(buf, n, MPI_INT, partner, tag, MPI_COMM_WORLD);
                continue;
            }
            MPI_Message message;
            MPI_Status st;
            int flag = 0;
            if (nonblocking)
                while (!flag)
                    MPI_Improbe(partner, tag, MPI_COMM_WORLD, &flag, &message, &st);
            else
                MPI_Mprobe(partner, tag, MPI_COMM_WORLD, &message, &st);
            expect(nonblocking ? "MPI_Improbe" : "MPI_Mprobe", &st, NULL, n, tag);
            if (nonblocking) {
                MPI_Request receive;
                MPI_Imrecv(buf, n, MPI_INT, &message, &receive);
                MPI_Wait(&receive, &st);
            } else {
                MPI_Mrecv(buf, n, MPI_INT, &message, &st);
            }
            expect(nonblocking ? "MPI_Imrecv" : "MPI_Mrecv", &st, buf, n, tag);
            received_messages++;
        }
    int first[4], second[2];
    if (rank % 2 == 0) {
        fill(first, 4, 80);
        fill(second, 2, 81);
        MPI_Request sends[2];
        MPI_Status statuses[2]; /* not MPI_STATUSES_IGNORE, which GCC takes for an array of none */
        MPI_Isend(first, 4, MPI_INT, partner, 80, MPI_COMM_WORLD, &sends[0]);
        MPI_Isend(second, 2, MPI_INT, partner, 80, MPI_COMM_WORLD, &sends[1]);
        MPI_Waitall(2, sends, statuses);
    } else {
        MPI_Message message;
        MPI_Status st;
        MPI_Mprobe(partner, 80, MPI_COMM_WORLD, &message, &st);
        MPI_Recv(second, 2, MPI_INT, partner, 80, MPI_COMM_WORLD, &st);
        expect("a message received before an earlier one matched by MPI_Mprobe", &st, second, 2, 81);
        MPI_Mrecv(first, 4, MPI_INT, &message, &st);
        expect("the message MPI_Mprobe matched, received after a later one", &st, first, 4, 80);
        received_messages += 2;
    }
    free(buf);
}

/* comm/ic1: pairs of ranks (an odd last rank sits out) exchange a message over an
 * intercommunicator made from groups (MPI 4; MPI 3 libraries have no such call) and over one
 * made by MPI_Intercomm_create. */
static void intercommunicators(void)
{
    int partner = rank ^ 1;
    if (partner >= size)
        return;
    MPI_Comm inter[2];
    MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, partner, 90, &inter[0]);
    int made = 1;
#if MPI_VERSION >= 4
    MPI_Group world, local, remote;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &rank, &local);
    MPI_Group_incl(world, 1, &partner, &remote);
    MPI_Intercomm_create_from_groups(local, 0, remote, 0, "pb-intercomm", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL,
                                     &inter[made++]);
    MPI_Group_free(&world);
    MPI_Group_free(&local);
    MPI_Group_free(&remote);
#endif
    for (int k = 0; k < made; k++) {
        int out[3], in[3];
        fill(out, 3, 90 + k);
        MPI_Status st;
        MPI_Sendrecv(out, 3, MPI_INT, 0, 90 + k, in, 3, MPI_INT, 0, 90 + k, inter[k], &st);
        expect("a message on an intercommunicator", &st, in, 3, 90 + k);
        received_messages++;
        MPI_Comm_free(&inter[k]);
    }
}

/* comm/cmfree: in pairs of ranks (an odd last rank sits out), the even rank posts a receive on
 * a communicator, frees it, and only then (after a barrier) does the odd rank send on it. */
static void freed_with_a_pending_receive(void)
{
    int partner = rank ^ 1, receiving = rank % 2 == 0;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int buf[2];
    MPI_Request receive = MPI_REQUEST_NULL;
    if (partner < size && receiving) {
        MPI_Irecv(buf, 2, MPI_INT, partner, 95, comm, &receive);
        MPI_Comm_free(&comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (partner < size && !receiving) {
        fill(buf, 2, 95);
        MPI_Send(buf, 2, MPI_INT, partner, 95, comm);
    }
    if (receive != MPI_REQUEST_NULL) {
        MPI_Status st;
        MPI_Wait(&receive, &st);
        expect("a receive whose communicator was freed while it was pending", &st, buf, 2, 95);
        received_messages++;
    }
    if (comm != MPI_COMM_NULL)
        MPI_Comm_free(&comm);
}

/* comm/comm_idup_iallreduce: a message around the ring on each of two communicators made by
 * nonblocking duplication, one completed by MPI_Wait, the other seen complete by
 * MPI_Request_get_status first (the layer attaches its shadow at either). */
static void idup_communicators(void)
{
    MPI_Comm comm[2];
    MPI_Request request[2];
    MPI_Comm_idup(MPI_COMM_WORLD, &comm[0], &request[0]);
#if MPI_VERSION >= 4
    MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &comm[1], &request[1]);
#else
    MPI_Comm_idup(MPI_COMM_WORLD, &comm[1], &request[1]);
#endif
    MPI_Wait(&request[0], MPI_STATUS_IGNORE);
    int flag = 0;
    while (!flag)
        MPI_Request_get_status(request[1], &flag, MPI_STATUS_IGNORE);
    MPI_Wait(&request[1], MPI_STATUS_IGNORE);
    for (int k = 0; k < 2; k++) {
        int out[3], in[3];
        fill(out, 3, 96 + k);
        MPI_Status st;
        MPI_Sendrecv(out, 3, MPI_INT, right, 96 + k, in, 3, MPI_INT, left, 96 + k, comm[k], &st);
        expect("a message on a communicator made by MPI_Comm_idup", &st, in, 3, 96 + k);
        received_messages++;
        MPI_Comm_free(&comm[k]);
    }
}

/* comm/comm_idup_iallreduce 6: even and odd ranks joined by an intercommunicator, duplicated
 * by MPI_Comm_idup beside an MPI_Iallreduce on it, ROUNDS times (with the old shadow duplication,
 * 3 runs of this program in 6 hung at 4 ranks under Open MPI 4.1.4 and separate); then a message
 * between the two groups' first ranks on the last duplicate. */
static void idup_intercommunicator(void)
{
    enum { ROUNDS = 20 };
    MPI_Comm half, inter, copy = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank == 0 ? 1 : 0, 97, &inter);
    int remote, local_rank;
    MPI_Comm_remote_size(inter, &remote);
    MPI_Comm_rank(half, &local_rank);
    for (int round = 0; round < ROUNDS; round++) {
        if (copy != MPI_COMM_NULL)
            MPI_Comm_free(&copy);
        MPI_Request request[2];
        MPI_Status status[2];
        int one = 1, sum = 0;
        MPI_Comm_idup(inter, &copy, &request[0]);
        MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter, &request[1]);
        MPI_Waitall(2, request, status);
        if (sum != remote) {
            fprintf(stderr, "rank %d: an MPI_Iallreduce beside an MPI_Comm_idup summed %d, expected %d\n", rank, sum,
                    remote);
            check_failures++;
        }
    }
    if (local_rank == 0) {
        int out[3], in[3];
        fill(out, 3, 97);
        MPI_Status st;
        MPI_Sendrecv(out, 3, MPI_INT, 0, 97, in, 3, MPI_INT, 0, 97, copy, &st);
        expect("a message on an intercommunicator made by MPI_Comm_idup", &st, in, 3, 97);
        received_messages++;
    }
    MPI_Comm_free(&copy);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

/* getpartelm, lots_of_types, hindexed_zeros: 6 ints into a receive of 2 elements of 4 ints with
 * holes (every_other: extent 7 ints), blocking and nonblocking. MPI fills the first element and
 * half the second, at in[0, 2, 4, 6] and in[7, 9]; MPI_Get_count is MPI_UNDEFINED,
 * MPI_Get_elements 6. */
static void partial_elements(void)
{
    MPI_Datatype type = every_other(4);
    for (int k = 0; k < 2; k++) {
        int out[6], in[14];
        fill(out, 6, 110 + k);
        for (int i = 0; i < 14; i++)
            in[i] = -1;
        MPI_Status st;
        if (k == 0) {
            MPI_Sendrecv(out, 6, MPI_INT, right, 110, in, 2, type, left, 110, MPI_COMM_WORLD, &st);
        } else {
            MPI_Request request;
            MPI_Irecv(in, 2, type, left, 111, MPI_COMM_WORLD, &request);
            MPI_Send(out, 6, MPI_INT, right, 111, MPI_COMM_WORLD);
            MPI_Wait(&request, &st);
        }
        int got[6] = {in[0], in[2], in[4], in[6], in[7], in[9]}, count = 0, elements = 0;
        MPI_Get_count(&st, type, &count);
        MPI_Get_elements(&st, type, &elements);
        int holes_kept = in[1] == -1 && in[3] == -1 && in[5] == -1 && in[8] == -1 && in[10] == -1;
        if (!holds(got, 6, 110 + k) || !holes_kept || count != MPI_UNDEFINED || elements != 6) {
            fprintf(stderr, "rank %d: part of an element (%s): count %d, elements %d, contents %s\n", rank,
                    k ? "MPI_Irecv" : "MPI_Sendrecv", count, elements,
                    holds(got, 6, 110 + k) && holes_kept ? "right" : "wrong");
            check_failures++;
        }
        received_messages++;
    }
    MPI_Type_free(&type);
}

/* hindexed_zeros: a type of three empty blocks, sent from and received into NULL. */
static void empty_type_at_null(void)
{
    int blocks[3] = {0, 0, 0};
    MPI_Aint displacements[3] = {0, 4, 16};
    MPI_Datatype empty;
    MPI_Type_create_hindexed(3, blocks, displacements, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    MPI_Request request;
    MPI_Status st;
    MPI_Irecv(NULL, 2, empty, left, 120, MPI_COMM_WORLD, &request);
    MPI_Send(NULL, 1, empty, right, 120, MPI_COMM_WORLD);
    MPI_Wait(&request, &st);
    int count = -1, elements = -1;
    MPI_Get_count(&st, empty, &count);
    MPI_Get_elements(&st, empty, &elements);
    if (count != 0 || elements != 0) {
        fprintf(stderr, "rank %d: an empty type at NULL: count %d, elements %d, expected 0 and 0\n", rank, count,
                elements);
        check_failures++;
    }
    received_messages++;
    MPI_Type_free(&empty);
}

/* nonblocking3: the array holds, in this order, the second receive of stream (left, 130), a
 * receive of stream (left, 131), and the first receive of (left, 130); the three messages'
 * lengths differ, so that a status read from the wrong entry shows. */
static void completed_out_of_post_order(void)
{
    enum { FIRST = 2, SECOND = 0, OTHER = 1 };
    static const int ints[3] = {3, 5, 4}; /* first, second, other */
    int out[3][5], in[3][5];
    MPI_Request requests[6];
    MPI_Status statuses[6];
    MPI_Irecv(in[0], 5, MPI_INT, left, 130, MPI_COMM_WORLD, &requests[FIRST]);
    MPI_Irecv(in[1], 5, MPI_INT, left, 130, MPI_COMM_WORLD, &requests[SECOND]);
    MPI_Irecv(in[2], 5, MPI_INT, left, 131, MPI_COMM_WORLD, &requests[OTHER]);
    for (int k = 0; k < 3; k++) {
        fill(out[k], ints[k], 130 + k);
        MPI_Isend(out[k], ints[k], MPI_INT, right, k < 2 ? 130 : 131, MPI_COMM_WORLD, &requests[3 + k]);
    }
    MPI_Waitall(6, requests, statuses);
    expect("first of a stream, completed after the second", &statuses[FIRST], in[0], ints[0], 130);
    expect("second of a stream, completed before the first", &statuses[SECOND], in[1], ints[1], 131);
    expect("another stream's, between them", &statuses[OTHER], in[2], ints[2], 132);
    received_messages += 3;
}

int main(int argc, char **argv)
{
    mpitest_init(&argc, &argv, &rank, &size);
    REQUIRE(size >= 2);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    status_seen_before_wait();
    types_freed_while_pending();
    persistent_types_freed();
    isendrecv_beside_isends(100, 100, 100);
    isendrecv_beside_isends(4, 40000, 200);
    cancelled_send_to_self();
    communicators_reused();
    matched_then_received();
    intercommunicators();
    freed_with_a_pending_receive();
    idup_communicators();
    idup_intercommunicator();
    partial_elements();
    empty_type_at_null();
    completed_out_of_post_order();
    return pbtest_finish(received_messages);
}
