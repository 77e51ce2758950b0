/* Completion: Wait, Test and their any/some/all forms, Request_get_status, Start, Startall,
 * Cancel, Request_free. The layer's records are looked up before MPI completes the requests
 * (it then nulls the handles), and the layer's part is done after: unpack, pair, consume, and
 * the status corrected to count the payload only. The user's statuses may be
 * MPI_STATUS(ES)_IGNORE: the layer then passes real ones down. */
#include <stdlib.h>
#include <string.h>

#include "hooks.h"

/* A receive MPI_Request_get_status saw complete: the statuses MPI gives for it later count the
 * in-band pb again; the program is shown the payload's bytes it was shown then. */
static void restore_seen_count(const ml_req_t *r, MPI_Status *status)
{
    if (r->finished && r->kind == REQ_RECV && ml_pb.method->mechanism != PB_SEPARATE)
        PMPI_Status_set_elements_x(status, MPI_BYTE, r->seen_bytes);
}

/* A send cancelled by the program takes its pb with it: the separate method's pb message is
 * cancelled too, an in-band pb went nowhere; the check driver is told either way. An in-band
 * send with no driver to tell has nothing to do (whether it was cancelled is not asked: a
 * call per message). */
static void send_completed(ml_req_t *r, const MPI_Status *status)
{
    if (ml_pb.method->mechanism != PB_SEPARATE && !(r->pb && ml_pb_drivers_number_streams()))
        return;
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);
    if (ml_pb.method->mechanism == PB_SEPARATE)
        ml_pb_separate_send_done(r, cancelled);
    else if (cancelled && r->pb)
        ml_pb_drivers_withdrawn(r->pb, r->peer, r->tag, r->comm);
}

void ml_pb_complete(ml_req_t *r, MPI_Status *status, int status_seen)
{
    if (!r->finished && r->kind != REQ_PAIR) { /* a pair: its two requests did their part */
        if (r->kind == REQ_COMM) {
            ml_pb_separate_comm_done(r);
        } else if (r->kind == REQ_SEND) {
            send_completed(r, status);
        } else if (ml_pb.method->mechanism == PB_SEPARATE) {
            ml_pb_separate_completed(r, r->comm, status);
        } else {
            ml_pb_recv_finish(r, status, (status_seen ? ML_FINISH_STATUS_SEEN : 0) | ML_FINISH_CANCELLABLE);
        }
    } else if (status_seen) {
        restore_seen_count(r, status);
    }
    r->finished = 0;
    r->completing = NULL;
    if (r->persistent) {
        r->active = 0;
        return;
    }
    ml_req_remove(r);
    ml_req_free(r);
}

void ml_pb_completing(ml_req_t *r, MPI_Status *status)
{
    if (r)
        r->completing = status;
}

/* Whether the layer has work when `r`'s MPI request completes. */
static int has_work(const ml_req_t *r) { return r && r->active; }

/* ---- requests the user freed while active -------------------------------------------------------- */

static ml_req_t **zombies;
static size_t n_zombies, zombies_room;

void ml_pb_zombie_add(ml_req_t *r)
{
    if (n_zombies == zombies_room) {
        zombies_room = zombies_room ? 2 * zombies_room : 16;
        zombies = realloc(zombies, zombies_room * sizeof *zombies);
        if (!zombies)
            ml_pb_fail("out of memory for freed requests");
    }
    ml_req_remove(r); /* MPI may give its handle to a new request */
    zombies[n_zombies++] = r;
}

void ml_pb_zombies_poll(int wait)
{
    for (size_t i = 0; i < n_zombies;) {
        ml_req_t *r = zombies[i];
        MPI_Status status;
        int done = 1, persistent = r->persistent;
        if (r->kind == REQ_PAIR)
            ml_pb_pair_drive(r, wait);
        if (wait)
            PMPI_Wait(&r->handle, &status);
        else
            PMPI_Test(&r->handle, &done, &status);
        if (!done) {
            i++;
            continue;
        }
        if (persistent) /* completing left it inactive: the user's free takes effect now */
            PMPI_Request_free(&r->handle);
        r->persistent = 0;
        ml_pb_complete(r, &status, 0);
        zombies[i] = zombies[--n_zombies];
    }
}

/* What completion calls also look after: freed requests, the layer's own sends in flight. */
static void poll_zombies(void)
{
    if (n_zombies)
        ml_pb_zombies_poll(0);
    if (ml_pb_n_in_flight)
        ml_pb_in_flight_poll(0);
}

/* ---- single requests ----------------------------------------------------------------------------- */

int ml_pb_wait(MPI_Request *request, MPI_Status *status)
{
    poll_zombies();
    ml_req_t *r = ml_req_find(*request);
    if (!has_work(r))
        return ML_NEXT(MPI_Wait)(request, status);
    if (r->kind == REQ_PAIR)
        ml_pb_pair_drive(r, 1);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = ML_NEXT(MPI_Wait)(request, st);
    if (rc == MPI_SUCCESS)
        ml_pb_complete(r, st, st == status);
    return rc;
}

int ml_pb_test(MPI_Request *request, int *flag, MPI_Status *status)
{
    poll_zombies();
    ml_req_t *r = ml_req_find(*request);
    if (!has_work(r))
        return ML_NEXT(MPI_Test)(request, flag, status);
    if (r->kind == REQ_PAIR)
        ml_pb_pair_drive(r, 0);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = ML_NEXT(MPI_Test)(request, flag, st);
    if (rc == MPI_SUCCESS && *flag)
        ml_pb_complete(r, st, st == status);
    return rc;
}

/* The request stays the user's: the layer does its part now (the data must be in the user's
 * buffer when the user sees the flag), and not again at the Wait or Test that frees it. */
int ml_pb_request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    ml_req_t *r = ml_req_find(request);
    if (has_work(r) && r->kind == REQ_PAIR)
        ml_pb_pair_drive(r, 0); /* sets finished once both are done */
    if (!has_work(r))
        return ML_NEXT(MPI_Request_get_status)(request, flag, status);
    if (r->finished) {
        int rc = ML_NEXT(MPI_Request_get_status)(request, flag, status);
        if (rc == MPI_SUCCESS && status != MPI_STATUS_IGNORE)
            restore_seen_count(r, status);
        return rc;
    }
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = ML_NEXT(MPI_Request_get_status)(request, flag, st);
    if (rc == MPI_SUCCESS && *flag && r->kind == REQ_COMM) {
        ml_pb_separate_comm_done(r);
        r->finished = 1;
    } else if (rc == MPI_SUCCESS && *flag && r->kind == REQ_RECV) {
        if (ml_pb.method->mechanism == PB_SEPARATE)
            ml_pb_separate_completed(r, r->comm, st);
        else
            ml_pb_recv_finish(r, st, ML_FINISH_STATUS_SEEN | ML_FINISH_CANCELLABLE);
        PMPI_Get_elements_x(st, MPI_BYTE, &r->seen_bytes);
        r->finished = 1;
    }
    return rc;
}

/* ---- arrays ---------------------------------------------------------------------------------------
 * The records of an array of requests, found before MPI completes them; NULL when none has work.
 * Arrays of up to SNAPSHOT_SMALL requests (a window of messages) keep them on the stack rather
 * than in two mallocs made and freed per call. */
enum { SNAPSHOT_SMALL = 128 };

typedef struct {
    ml_req_t **records;
    MPI_Status *statuses; /* the user's, or the layer's own */
    int statuses_seen;    /* ... the user's */
    int pairs;            /* how many records are pairs (MPI_Isendrecv) */
    ml_req_t *records_small[SNAPSHOT_SMALL];
    MPI_Status statuses_small[SNAPSHOT_SMALL];
} snapshot_t;

/* Finds the records of requests[0..n-1]; drives the pairs among them first (blocking when wait,
 * for a call that completes them all). Returns whether any request has work for the layer. */
static int snapshot(snapshot_t *s, int n, const MPI_Request *requests, MPI_Status *user_statuses, int wait)
{
    poll_zombies();
    s->pairs = 0;
    s->records = (size_t)n <= SNAPSHOT_SMALL ? s->records_small : malloc((size_t)n * sizeof *s->records);
    int any = 0;
    for (int i = 0; i < n; i++) {
        ml_req_t *r = ml_req_find(requests[i]);
        /* MPICH gives sends it completed at once one shared handle: one record, completed once */
        s->records[i] = has_work(r) && !r->in_snapshot ? r : NULL;
        if (s->records[i]) {
            r->in_snapshot = any = 1;
            if (r->kind == REQ_PAIR) {
                ml_pb_pair_drive(r, wait);
                s->pairs++;
            }
        }
    }
    for (int i = 0; i < n; i++)
        if (s->records[i])
            s->records[i]->in_snapshot = 0;
    if (!any) {
        if (s->records != s->records_small)
            free(s->records);
        return 0;
    }
    s->statuses_seen = user_statuses != MPI_STATUSES_IGNORE;
    s->statuses = s->statuses_seen              ? user_statuses
                  : (size_t)n <= SNAPSHOT_SMALL ? s->statuses_small
                                                : malloc((size_t)n * sizeof *s->statuses);
    return 1;
}

static void snapshot_free(snapshot_t *s, const MPI_Status *user_statuses)
{
    if (s->records != s->records_small)
        free(s->records);
    if (s->statuses != user_statuses && s->statuses != s->statuses_small)
        free(s->statuses);
}

/* Entry k of `done` (count n, or every entry when done is NULL): its record, if MPI completed it,
 * else NULL; *status set to its status. */
static ml_req_t *completed_entry(snapshot_t *s, int rc, int k, const int *done, MPI_Status **status)
{
    int i = done ? done[k] : k;
    *status = &s->statuses[done ? k : i];
    return rc == MPI_SUCCESS || (*status)->MPI_ERROR == MPI_SUCCESS ? s->records[i] : NULL;
}

/* Completes the layer's part of the entries of `done`, every status known before any is used. */
static void complete_entries(snapshot_t *s, int rc, int n, const int *done)
{
    MPI_Status *st;
    for (int k = 0; ml_pb.method->mechanism == PB_SEPARATE && k < n; k++) { /* only pairing reads it */
        /* two statements: the order in which a call's arguments are evaluated is unspecified,
         * and `st` read before completed_entry set it was the previous entry's status */
        ml_req_t *r = completed_entry(s, rc, k, done, &st);
        ml_pb_completing(r, st);
    }
    for (int k = 0; k < n; k++) {
        ml_req_t *r = completed_entry(s, rc, k, done, &st);
        if (r)
            ml_pb_complete(r, st, s->statuses_seen);
    }
}

int ml_pb_waitall(int n, MPI_Request requests[], MPI_Status statuses[])
{
    snapshot_t s;
    if (!snapshot(&s, n, requests, statuses, 1))
        return ML_NEXT(MPI_Waitall)(n, requests, statuses);
    int rc = ML_NEXT(MPI_Waitall)(n, requests, s.statuses);
    complete_entries(&s, rc, n, NULL);
    snapshot_free(&s, statuses);
    return rc;
}

int ml_pb_testall(int n, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    snapshot_t s;
    if (!snapshot(&s, n, requests, statuses, 0))
        return ML_NEXT(MPI_Testall)(n, requests, flag, statuses);
    int rc = ML_NEXT(MPI_Testall)(n, requests, flag, s.statuses);
    if (*flag)
        complete_entries(&s, rc, n, NULL);
    snapshot_free(&s, statuses);
    return rc;
}

/* ---- blocking among pairs ------------------------------------------------------------------------
 * MPI cannot wait for a pair (MPI_Isendrecv): its generalized request completes only when the
 * layer completes it. A Waitany or Waitsome holding pairs waits in MPI instead on an extended
 * array: the program's requests, each pair replaced by its pending requests. A program's request
 * that completes there is an answer; a pair's moves its pair on, and the Testany or Testsome
 * that starts the next round reports the pair once both of its requests are done. */

typedef struct {
    MPI_Request *handles;
    int *owner;            /* the index in the program's array */
    MPI_Request **in_pair; /* a pair's request: where the pair keeps it; NULL: the program's */
    ml_req_t **records;    /* the pair, or the program's request's record (NULL: none) */
    int n;
} extended_t;

static void add(extended_t *x, MPI_Request handle, int owner, MPI_Request *in_pair, ml_req_t *record)
{
    x->handles[x->n] = handle;
    x->owner[x->n] = owner;
    x->in_pair[x->n] = in_pair;
    x->records[x->n++] = record;
}

static void extend(extended_t *x, int n, const MPI_Request requests[])
{
    size_t room = 2 * (size_t)(n > 0 ? n : 1); /* a pair gives two entries, any other one */
    x->handles = malloc(room * sizeof *x->handles);
    x->owner = malloc(room * sizeof *x->owner);
    x->in_pair = malloc(room * sizeof *x->in_pair);
    x->records = malloc(room * sizeof *x->records);
    if (!x->handles || !x->owner || !x->in_pair || !x->records)
        ml_pb_fail("out of memory for a wait among MPI_Isendrecv requests");
    x->n = 0;
    for (int i = 0; i < n; i++) {
        ml_req_t *r = ml_req_find(requests[i]);
        MPI_Request *pending[2];
        int k = has_work(r) && r->kind == REQ_PAIR ? ml_pb_pair_pending(r, pending) : 0;
        for (int j = 0; j < k; j++)
            add(x, *pending[j], i, pending[j], r);
        if (k == 0)
            add(x, requests[i], i, NULL, has_work(r) ? r : NULL);
    }
}

static void extended_free(extended_t *x)
{
    free(x->handles);
    free(x->owner);
    free(x->in_pair);
    free(x->records);
}

/* Entry k of the extended array, completed by MPI with `status`: a pair's request goes back to
 * its pair (returns 0); the program's request goes back to its array, the layer's part done
 * (returns 1: an answer). */
static int extended_done(extended_t *x, int k, MPI_Request requests[], MPI_Status *status)
{
    if (x->in_pair[k]) {
        ml_pb_pair_completed(x->records[k], x->in_pair[k], x->handles[k], status);
        return 0;
    }
    requests[x->owner[k]] = x->handles[k];
    if (x->records[k])
        ml_pb_complete(x->records[k], status, 1);
    return 1;
}

static int complete_any(int n, MPI_Request requests[], int *index, int *flag, MPI_Status *status, int wait);

static int wait_any_among_pairs(int n, MPI_Request requests[], int *index, MPI_Status *status)
{
    for (;;) {
        int flag, rc = complete_any(n, requests, index, &flag, status, 0);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        extended_t x;
        extend(&x, n, requests);
        int k;
        MPI_Status st;
        rc = ML_NEXT(MPI_Waitany)(x.n, x.handles, &k, &st);
        /* MPI_UNDEFINED (nothing active) cannot be, the test before said otherwise; an error ends
         * the call as MPI's would */
        int answer = rc != MPI_SUCCESS || k == MPI_UNDEFINED || extended_done(&x, k, requests, &st);
        if (answer) {
            *index = k == MPI_UNDEFINED ? MPI_UNDEFINED : x.owner[k];
            if (k != MPI_UNDEFINED && status != MPI_STATUS_IGNORE)
                *status = st;
        }
        extended_free(&x);
        if (answer)
            return rc;
    }
}

/* Waitany (wait) and Testany. */
static int complete_any(int n, MPI_Request requests[], int *index, int *flag, MPI_Status *status, int wait)
{
    snapshot_t s;
    *flag = 1;
    if (!snapshot(&s, n, requests, MPI_STATUSES_IGNORE, 0))
        return wait ? ML_NEXT(MPI_Waitany)(n, requests, index, status)
                    : ML_NEXT(MPI_Testany)(n, requests, index, flag, status);
    if (wait && s.pairs) {
        snapshot_free(&s, MPI_STATUSES_IGNORE);
        return wait_any_among_pairs(n, requests, index, status);
    }
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = wait ? ML_NEXT(MPI_Waitany)(n, requests, index, st) : ML_NEXT(MPI_Testany)(n, requests, index, flag, st);
    if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED && s.records[*index])
        ml_pb_complete(s.records[*index], st, st == status);
    snapshot_free(&s, MPI_STATUSES_IGNORE);
    return rc;
}

int ml_pb_waitany(int n, MPI_Request requests[], int *index, MPI_Status *status)
{
    int flag;
    return complete_any(n, requests, index, &flag, status, 1);
}

int ml_pb_testany(int n, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    return complete_any(n, requests, index, flag, status, 0);
}

static int complete_some(int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[], int wait);

static int wait_some_among_pairs(int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    for (;;) {
        int rc = complete_some(n, requests, outcount, indices, statuses, 0);
        if (rc != MPI_SUCCESS || *outcount != 0)
            return rc;
        extended_t x;
        extend(&x, n, requests);
        int m = 0, *done = malloc((size_t)x.n * sizeof *done);
        MPI_Status *done_statuses = malloc((size_t)x.n * sizeof *done_statuses);
        if (!done || !done_statuses)
            ml_pb_fail("out of memory for a wait among MPI_Isendrecv requests");
        rc = ML_NEXT(MPI_Waitsome)(x.n, x.handles, &m, done, done_statuses);
        if (rc == MPI_SUCCESS && m == MPI_UNDEFINED) /* nothing active: see wait_any_among_pairs */
            *outcount = MPI_UNDEFINED;
        for (int j = 0; rc == MPI_SUCCESS && m != MPI_UNDEFINED && j < m; j++) {
            int k = done[j];
            ml_pb_completing(x.in_pair[k] ? ml_pb_pair_record(x.records[k], x.in_pair[k]) : x.records[k],
                             &done_statuses[j]);
        }
        for (int j = 0; rc == MPI_SUCCESS && m != MPI_UNDEFINED && j < m; j++) {
            if (!extended_done(&x, done[j], requests, &done_statuses[j]))
                continue;
            if (statuses != MPI_STATUSES_IGNORE)
                statuses[*outcount] = done_statuses[j];
            indices[(*outcount)++] = x.owner[done[j]];
        }
        free(done);
        free(done_statuses);
        extended_free(&x);
        if (rc != MPI_SUCCESS || *outcount != 0)
            return rc;
    }
}

/* Waitsome (wait) and Testsome. */
static int complete_some(int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[], int wait)
{
    snapshot_t s;
    if (!snapshot(&s, n, requests, statuses, 0))
        return wait ? ML_NEXT(MPI_Waitsome)(n, requests, outcount, indices, statuses)
                    : ML_NEXT(MPI_Testsome)(n, requests, outcount, indices, statuses);
    if (wait && s.pairs) {
        snapshot_free(&s, statuses);
        return wait_some_among_pairs(n, requests, outcount, indices, statuses);
    }
    int rc = wait ? ML_NEXT(MPI_Waitsome)(n, requests, outcount, indices, s.statuses)
                  : ML_NEXT(MPI_Testsome)(n, requests, outcount, indices, s.statuses);
    if (*outcount != MPI_UNDEFINED)
        complete_entries(&s, rc, *outcount, indices);
    snapshot_free(&s, statuses);
    return rc;
}

int ml_pb_waitsome(int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    return complete_some(n, requests, outcount, indices, statuses, 1);
}

int ml_pb_testsome(int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    return complete_some(n, requests, outcount, indices, statuses, 0);
}

/* ---- persistent requests, cancel, free ------------------------------------------------------------ */

/* The layer's part of starting a persistent request, before MPI starts it: the pb taken now
 * (seed's anchors took it at *_init, a stale value), a receive joins the pairing order now. */
static int before_start(ml_req_t *r)
{
    if (!r)
        return MPI_SUCCESS;
    int rc = r->kind == REQ_SEND && !ml_pb_separate_after() ? ml_pb_send_start(r) : MPI_SUCCESS;
    if (r->kind == REQ_RECV)
        ml_pb_separate_posted(r);
    r->active = 1;
    return rc;
}

/* After MPI started it: the record follows the handle, which Open MPI replaces when the request
 * it started last is still busy underneath (a buffered send still being transmitted); a pb
 * message of "separate-after" goes now, after its payload. */
static int after_start(ml_req_t *r, MPI_Request handle)
{
    if (!r)
        return MPI_SUCCESS;
    if (handle != r->handle) {
        ml_req_remove(r);
        r->handle = handle;
        ml_req_insert(r);
    }
    return r->kind == REQ_SEND && ml_pb_separate_after() ? ml_pb_send_start(r) : MPI_SUCCESS;
}

int ml_pb_start(MPI_Request *request)
{
    ml_req_t *r = ml_req_find(*request);
    int rc = before_start(r);
    if (rc == MPI_SUCCESS)
        rc = ML_NEXT(MPI_Start)(request);
    return rc == MPI_SUCCESS ? after_start(r, *request) : rc;
}

int ml_pb_startall(int n, MPI_Request requests[])
{
    ml_req_t *small[32], **records = n <= 32 ? small : malloc((size_t)n * sizeof *records);
    if (!records)
        ml_pb_fail("out of memory for MPI_Startall");
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = before_start(records[i] = ml_req_find(requests[i]));
    if (rc == MPI_SUCCESS)
        rc = ML_NEXT(MPI_Startall)(n, requests);
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = after_start(records[i], requests[i]);
    if (records != small)
        free(records);
    return rc;
}

int ml_pb_request_free(MPI_Request *request)
{
    ml_req_t *r = ml_req_find(*request);
    if (!r)
        return ML_NEXT(MPI_Request_free)(request);
    if (r->active) { /* MPI would free it when complete; the layer still has its part to do */
        ml_pb_zombie_add(r);
        *request = MPI_REQUEST_NULL;
        /* now, not at the next completion call: a send cancelled and freed (MPICH's
         * issendselfcancel) withdraws its pb message before a receive posted next can take it */
        ml_pb_zombies_poll(0);
        return MPI_SUCCESS;
    }
    ml_req_remove(r);
    ml_req_free(r);
    return ML_NEXT(MPI_Request_free)(request);
}
