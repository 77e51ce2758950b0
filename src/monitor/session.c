/* Monitoring sessions and the MPI_M_ API (seed 004, 4.3; docs/monitor.md).
 *
 * A session is snapshots of the process-wide counters (monitor.h): totals noted at start and at
 * each continue, and what changed since added up at each suspend. The global lock protects the
 * session table only; it is never held across a collective operation, so that two threads
 * using sessions on different communicators cannot block each other across processes. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor.h"
#include "mpi_monitoring.h"
#include "mpit.h"
#include "session.h"

/* Rows of a session's snapshot arrays: messages and bytes of each kind. */
enum { ROWS = 2 * ML_KINDS };

typedef struct {
    int in_use, active, internal;
    int starting;  /* reserved by a start still running: invisible to every other call */
    MPI_Comm comm; /* a duplicate: the session's own collective operations go there */
    int size, rank;
    int *world_of; /* rank in MPI_COMM_WORLD of each rank of comm */
    int64_t *base; /* [ROWS][size]: totals at the last start or continue */
    int64_t *acc;  /* [ROWS][size]: counted while active */
} session_t;

static session_t sessions[MPI_M_MAX_SESSIONS];
static int api_up;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- totals ---------------------------------------------------------------------------------- */

/* Cumulative totals by world rank: totals[row * world_size + w]. COLL comes from Open MPI's
 * point-to-point monitoring when that backend is up (ml_mpit_coll_totals), else from the logical
 * counters the wrappers fill. */
static int read_totals(int64_t *totals)
{
    int n = ml_mon.world_size;
    for (int k = 0; k < ML_KINDS; k++) {
        int64_t *messages = totals + (2 * k) * n, *bytes = totals + (2 * k + 1) * n;
        if (k == ML_COLL && ml_mpit_active()) {
            if (ml_mpit_coll_totals(messages, bytes) != 0)
                return -1;
            continue;
        }
        for (int w = 0; w < n; w++) {
            uint64_t m, b;
            ml_cell_read(k, w, &m, &b);
            messages[w] = (int64_t)m;
            bytes[w] = (int64_t)b;
        }
    }
    return 0;
}

static int64_t *new_totals(void) { return malloc(sizeof(int64_t) * ROWS * (size_t)ml_mon.world_size); }

/* The session's members' entries of a totals array, into dest[ROWS][size]. */
static void members_of(const session_t *s, const int64_t *totals, int64_t *dest)
{
    for (int row = 0; row < ROWS; row++)
        for (int r = 0; r < s->size; r++)
            dest[row * s->size + r] = s->world_of[r] >= 0 ? totals[row * ml_mon.world_size + s->world_of[r]] : 0;
}

/* ---- one session ----------------------------------------------------------------------------- */

/* A session the call may act on: the program's own (internal: the library's), fully started. */
static int usable(int id, int internal)
{
    return id >= 0 && id < MPI_M_MAX_SESSIONS && sessions[id].in_use && !sessions[id].starting &&
           sessions[id].internal == internal;
}

static int valid(int id) { return usable(id, 0); }

static void suspend_one(session_t *s, const int64_t *totals)
{
    for (int row = 0; row < ROWS; row++)
        for (int r = 0; r < s->size; r++) {
            int w = s->world_of[r];
            if (w >= 0)
                s->acc[row * s->size + r] += totals[row * ml_mon.world_size + w] - s->base[row * s->size + r];
        }
    s->active = 0;
}

static void continue_one(session_t *s, const int64_t *totals)
{
    members_of(s, totals, s->base);
    s->active = 1;
}

static void release(session_t *s)
{
    free(s->world_of);
    free(s->base);
    free(s->acc);
    memset(s, 0, sizeof *s);
}

/* The rank in MPI_COMM_WORLD of each rank of comm. */
static int *world_ranks(MPI_Comm comm, int size)
{
    MPI_Group group, world;
    int *ranks = malloc(sizeof(int) * (size_t)size), *out = malloc(sizeof(int) * (size_t)size);
    if (!ranks || !out) {
        free(ranks);
        free(out);
        return NULL;
    }
    for (int i = 0; i < size; i++)
        ranks[i] = i;
    PMPI_Comm_group(comm, &group);
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_translate_ranks(group, size, ranks, world, out);
    PMPI_Group_free(&group);
    PMPI_Group_free(&world);
    free(ranks);
    for (int i = 0; i < size; i++)
        if (out[i] == MPI_UNDEFINED)
            out[i] = -1;
    return out;
}

int ml_session_start(MPI_Comm comm, int internal, int *id)
{
    int inter;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return MPI_M_INVALID_ARG;

    pthread_mutex_lock(&lock);
    int slot = -1;
    for (int i = 0; i < MPI_M_MAX_SESSIONS && slot < 0; i++)
        if (!sessions[i].in_use)
            slot = i;
    if (slot >= 0) {
        sessions[slot].in_use = 1; /* reserved while the collective part runs unlocked */
        sessions[slot].starting = 1;
    }
    pthread_mutex_unlock(&lock);
    if (slot < 0)
        return MPI_M_SESSION_OVERFLOW;

    session_t s = {.in_use = 1, .internal = internal};
    ml_tool_traffic_t tool;
    ml_tool_traffic_begin(&tool);
    int rc = PMPI_Comm_dup(comm, &s.comm);
    ml_tool_traffic_end(&tool);
    int64_t *totals = new_totals();
    if (rc == MPI_SUCCESS) {
        PMPI_Comm_size(s.comm, &s.size);
        PMPI_Comm_rank(s.comm, &s.rank);
        s.world_of = world_ranks(s.comm, s.size);
        s.base = calloc((size_t)ROWS * (size_t)s.size, sizeof(int64_t));
        s.acc = calloc((size_t)ROWS * (size_t)s.size, sizeof(int64_t));
    }
    int status = rc != MPI_SUCCESS                             ? MPI_M_MPIT_FAIL
                 : !totals || !s.world_of || !s.base || !s.acc ? MPI_M_INTERNAL_FAIL
                 : read_totals(totals) != 0                    ? MPI_M_MPIT_FAIL
                                                               : MPI_SUCCESS;
    pthread_mutex_lock(&lock);
    if (status == MPI_SUCCESS) {
        continue_one(&s, totals);
        sessions[slot] = s;
        *id = slot;
    } else {
        release(&sessions[slot]);
    }
    pthread_mutex_unlock(&lock);
    if (status != MPI_SUCCESS) {
        if (s.comm != MPI_COMM_NULL)
            PMPI_Comm_free(&s.comm);
        release(&s);
    }
    free(totals);
    return status;
}

/* Applies `what` (suspend or continue) to one session, or with MPI_M_ALL_MSID to every API
 * session it applies to. Internal sessions (the whole-run mode's) are reached only by id. */
static int change_state(int id, int internal, int to_active)
{
    int64_t *totals = new_totals();
    if (!totals)
        return MPI_M_INTERNAL_FAIL;
    pthread_mutex_lock(&lock);
    int status = MPI_SUCCESS;
    if (id != MPI_M_ALL_MSID && !usable(id, internal))
        status = MPI_M_INVALID_MSID;
    else if (id != MPI_M_ALL_MSID && sessions[id].active == to_active)
        status = MPI_M_MULTIPLE_CALL;
    else if (read_totals(totals) != 0)
        status = MPI_M_MPIT_FAIL;
    for (int i = 0; status == MPI_SUCCESS && i < MPI_M_MAX_SESSIONS; i++) {
        session_t *s = &sessions[i];
        if ((id == MPI_M_ALL_MSID ? valid(i) : i == id) && s->active != to_active)
            (to_active ? continue_one : suspend_one)(s, totals);
    }
    pthread_mutex_unlock(&lock);
    free(totals);
    return status;
}

int ml_session_suspend(int id, int internal) { return change_state(id, internal, 0); }
int ml_session_continue(int id, int internal) { return change_state(id, internal, 1); }

/* Under the lock: releases the program's session id (or all of them) and returns their
 * communicators (ending with MPI_COMM_NULL) to free once the lock is released. */
static MPI_Comm *take_sessions(int id)
{
    MPI_Comm *comms = calloc(MPI_M_MAX_SESSIONS + 1, sizeof *comms);
    int n = 0;
    for (int i = 0; i < MPI_M_MAX_SESSIONS; i++)
        if (id == MPI_M_ALL_MSID ? valid(i) : i == id) {
            if (comms)
                comms[n++] = sessions[i].comm;
            release(&sessions[i]);
        }
    if (comms)
        comms[n] = MPI_COMM_NULL;
    return comms;
}

/* Freeing a communicator is collective: never under the lock. */
static void free_comms(MPI_Comm *comms)
{
    for (MPI_Comm *c = comms; c && *c != MPI_COMM_NULL; c++)
        PMPI_Comm_free(c);
    free(comms);
}

/* ---- the API --------------------------------------------------------------------------------- */

/* Whether the API may be used now: MPI_SUCCESS between MPI_M_init and MPI_M_finalize while MPI
 * runs; MPI_M_MISSING_INIT outside them; MPI_M_MPIT_FAIL once MPI_Finalize has run (every call
 * would need MPI; without this check MPICH aborts the process). */
static int api_state(void)
{
    pthread_mutex_lock(&lock);
    int is_up = api_up;
    pthread_mutex_unlock(&lock);
    if (!is_up)
        return MPI_M_MISSING_INIT;
    int finalized = 0;
    PMPI_Finalized(&finalized);
    return finalized ? MPI_M_MPIT_FAIL : MPI_SUCCESS;
}

int MPI_M_init(void)
{
    int initialized, finalized;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized)
        return MPI_M_MPIT_FAIL;
    pthread_mutex_lock(&lock);
    int status = api_up ? MPI_M_MULTIPLE_CALL : MPI_SUCCESS;
    if (status == MPI_SUCCESS && ml_engine_up() != 0)
        status = MPI_M_INTERNAL_FAIL;
    if (status == MPI_SUCCESS)
        api_up = 1;
    pthread_mutex_unlock(&lock);
    return status;
}

int MPI_M_finalize(void)
{
    int status = api_state();
    pthread_mutex_lock(&lock);
    for (int i = 0; status == MPI_SUCCESS && i < MPI_M_MAX_SESSIONS; i++)
        if (valid(i) && sessions[i].active)
            status = MPI_M_SESSION_STILL_ACTIVE;
    /* Suspended sessions the program did not free go now (their communicators are duplicates
     * only this library uses). */
    MPI_Comm *comms = status == MPI_SUCCESS ? take_sessions(MPI_M_ALL_MSID) : NULL;
    if (status == MPI_SUCCESS)
        api_up = 0;
    pthread_mutex_unlock(&lock);
    if (status == MPI_SUCCESS) {
        free_comms(comms);
        ml_engine_down();
    }
    return status;
}

int MPI_M_start(MPI_Comm comm, MPI_M_msid *msid)
{
    int state = api_state();
    if (state != MPI_SUCCESS)
        return state;
    if (!msid)
        return MPI_M_INVALID_ARG;
    return ml_session_start(comm, 0, msid);
}

int MPI_M_suspend(MPI_M_msid msid)
{
    int state = api_state();
    return state == MPI_SUCCESS ? ml_session_suspend(msid, 0) : state;
}

int MPI_M_continue(MPI_M_msid msid)
{
    int state = api_state();
    return state == MPI_SUCCESS ? ml_session_continue(msid, 0) : state;
}

/* Under the lock: whether msid (or, with MPI_M_ALL_MSID, every program session) exists and is
 * suspended, as reset and free require; with ALL, one active session refuses them all. */
static int all_suspended(int msid)
{
    int status = msid == MPI_M_ALL_MSID || valid(msid) ? MPI_SUCCESS : MPI_M_INVALID_MSID;
    for (int i = 0; status == MPI_SUCCESS && i < MPI_M_MAX_SESSIONS; i++)
        if ((msid == MPI_M_ALL_MSID ? valid(i) : i == msid) && sessions[i].active)
            status = MPI_M_SESSION_NOT_SUSPENDED;
    return status;
}

int MPI_M_reset(MPI_M_msid msid)
{
    int state = api_state();
    if (state != MPI_SUCCESS)
        return state;
    pthread_mutex_lock(&lock);
    int status = all_suspended(msid);
    for (int i = 0; status == MPI_SUCCESS && i < MPI_M_MAX_SESSIONS; i++)
        if (msid == MPI_M_ALL_MSID ? valid(i) : i == msid)
            memset(sessions[i].acc, 0, sizeof(int64_t) * ROWS * (size_t)sessions[i].size);
    pthread_mutex_unlock(&lock);
    return status;
}

int MPI_M_free(MPI_M_msid msid)
{
    int state = api_state();
    if (state != MPI_SUCCESS)
        return state;
    pthread_mutex_lock(&lock);
    int status = all_suspended(msid);
    MPI_Comm *comms = status == MPI_SUCCESS ? take_sessions(msid) : NULL;
    pthread_mutex_unlock(&lock);
    free_comms(comms);
    return status;
}

int ml_session_free_internal(int id)
{
    pthread_mutex_lock(&lock);
    int status = usable(id, 1) ? MPI_SUCCESS : MPI_M_INVALID_MSID;
    MPI_Comm comm = MPI_COMM_NULL;
    if (status == MPI_SUCCESS) {
        comm = sessions[id].comm;
        release(&sessions[id]);
    }
    pthread_mutex_unlock(&lock);
    if (comm != MPI_COMM_NULL)
        PMPI_Comm_free(&comm);
    return status;
}

int MPI_M_get_info(MPI_M_msid msid, int *provided, int *array_size)
{
    int state = api_state();
    if (state != MPI_SUCCESS)
        return state;
    pthread_mutex_lock(&lock);
    int status = valid(msid) ? MPI_SUCCESS : MPI_M_INVALID_MSID;
    if (status == MPI_SUCCESS) {
        if (provided != MPI_M_INT_IGNORE)
            *provided = MPI_THREAD_MULTIPLE;
        if (array_size != MPI_M_INT_IGNORE)
            *array_size = sessions[msid].size;
    }
    pthread_mutex_unlock(&lock);
    return status;
}

/* What get_data and the gathers share: checks, then the row, summed over the kinds in flags, as
 * unsigned longs (negative values, possible for a moment in the decomposed backend while another
 * thread sends, read as 0). All under the lock: the session cannot change or go meanwhile. */
int ml_session_row(int id, int internal, int flags, ml_session_row_t *row)
{
    unsigned long *values = NULL;
    pthread_mutex_lock(&lock);
    int status = MPI_SUCCESS;
    session_t *s = usable(id, internal) ? &sessions[id] : NULL;
    if (!s)
        status = MPI_M_INVALID_MSID;
    else if (s->active)
        status = MPI_M_SESSION_NOT_SUSPENDED;
    else if (flags < 1 || flags > MPI_M_ALL_COMM)
        status = MPI_M_INVALID_ARG;
    else if (!(values = malloc(sizeof *values * 2 * (size_t)s->size)))
        status = MPI_M_INTERNAL_FAIL;
    if (status == MPI_SUCCESS) {
        for (int r = 0; r < s->size; r++) {
            int64_t messages = 0, bytes = 0;
            for (int k = 0; k < ML_KINDS; k++)
                if (flags & (1 << k)) {
                    messages += s->acc[(2 * k) * s->size + r];
                    bytes += s->acc[(2 * k + 1) * s->size + r];
                }
            values[r] = messages > 0 ? (unsigned long)messages : 0;
            values[s->size + r] = bytes > 0 ? (unsigned long)bytes : 0;
        }
        *row = (ml_session_row_t){.values = values, .size = s->size, .rank = s->rank, .comm = s->comm};
    }
    pthread_mutex_unlock(&lock);
    return status;
}

int MPI_M_get_data(MPI_M_msid msid, unsigned long *msg_counts, unsigned long *msg_sizes, int flags)
{
    int state = api_state();
    if (state != MPI_SUCCESS)
        return state;
    ml_session_row_t row;
    int status = ml_session_row(msid, 0, flags, &row);
    if (status != MPI_SUCCESS)
        return status;
    size_t bytes = sizeof *row.values * (size_t)row.size;
    if (msg_counts != MPI_M_DATA_IGNORE)
        memcpy(msg_counts, row.values, bytes);
    if (msg_sizes != MPI_M_DATA_IGNORE)
        memcpy(msg_sizes, row.values + row.size, bytes);
    free(row.values);
    return MPI_SUCCESS;
}

int ml_api_state(void) { return api_state(); }

int MPI_M_get_backend(int kind, int *backend)
{
    int state = api_state();
    if (state != MPI_SUCCESS)
        return state;
    if (!backend || (kind != MPI_M_P2P_ONLY && kind != MPI_M_COLL_ONLY && kind != MPI_M_OSC_ONLY))
        return MPI_M_INVALID_ARG;
    *backend = kind == MPI_M_COLL_ONLY && ml_mpit_active() ? MPI_M_BACKEND_OMPI_MPIT : MPI_M_BACKEND_PMPI;
    return MPI_SUCCESS;
}

const char *MPI_M_error_string(int code)
{
    switch (code) {
    case MPI_SUCCESS: return "success";
    case MPI_M_INTERNAL_FAIL: return "an internal error occurred (memory or a system call failed)";
    case MPI_M_MPIT_FAIL: return "an MPI or MPI_T function failed";
    case MPI_M_MISSING_INIT: return "MPI_M_init has not been called";
    case MPI_M_SESSION_STILL_ACTIVE: return "at least one session has not been suspended";
    case MPI_M_SESSION_NOT_SUSPENDED: return "the session has not been suspended";
    case MPI_M_INVALID_MSID: return "no such monitoring session";
    case MPI_M_SESSION_OVERFLOW: return "too many monitoring sessions at once";
    case MPI_M_MULTIPLE_CALL: return "called again without its counterpart (init/finalize, suspend/continue)";
    case MPI_M_INVALID_ROOT: return "root is not a rank of the session's communicator";
    case MPI_M_INVALID_ARG: return "a null pointer where one is needed, or flags outside 1..7";
    }
    return "unknown MPI_M_ error code";
}
