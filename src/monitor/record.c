/* Counting messages: the process-wide counters, rank translation, persistent requests. */
#include "monitor.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mpit.h"
#include "next.h"

ml_monitor_t ml_mon;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int users;
static int comm_keyval = MPI_KEYVAL_INVALID, win_keyval = MPI_KEYVAL_INVALID;

/* ---- rank translation ------------------------------------------------------------------------ */

/* World ranks of a group, indexed by rank in the group; cached as an attribute. */
typedef struct {
    int size;
    int world[];
} translation_t;

static int free_translation(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    free(value);
    return MPI_SUCCESS;
}

static int free_win_translation(MPI_Win win, int keyval, void *value, void *extra)
{
    (void)win, (void)keyval, (void)extra;
    free(value);
    return MPI_SUCCESS;
}

static translation_t *translate_group(MPI_Group group)
{
    MPI_Group world;
    int size;
    PMPI_Group_size(group, &size);
    translation_t *t = malloc(sizeof *t + (size_t)size * 2 * sizeof(int));
    if (!t)
        return NULL;
    int *ranks = t->world + size; /* scratch: 0..size-1 */
    for (int i = 0; i < size; i++)
        ranks[i] = i;
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_translate_ranks(group, size, ranks, world, t->world);
    PMPI_Group_free(&world);
    t->size = size;
    for (int i = 0; i < size; i++)
        if (t->world[i] == MPI_UNDEFINED)
            t->world[i] = -1; /* a process of another job (spawned, connected) */
    return t;
}

static translation_t *comm_translation(MPI_Comm comm)
{
    translation_t *t;
    int found;
    PMPI_Comm_get_attr(comm, comm_keyval, &t, &found);
    if (found)
        return t;
    /* Built once per communicator; the lock keeps two threads from building it at once. */
    pthread_mutex_lock(&lock);
    PMPI_Comm_get_attr(comm, comm_keyval, &t, &found);
    if (!found) {
        MPI_Group group;
        int inter;
        PMPI_Comm_test_inter(comm, &inter);
        if (inter)
            PMPI_Comm_remote_group(comm, &group);
        else
            PMPI_Comm_group(comm, &group);
        t = translate_group(group);
        PMPI_Group_free(&group);
        if (t)
            PMPI_Comm_set_attr(comm, comm_keyval, t);
    }
    pthread_mutex_unlock(&lock);
    return t;
}

int ml_world_rank(MPI_Comm comm, int rank)
{
    if (rank < 0 || comm == MPI_COMM_NULL || !ml_recording())
        return -1; /* MPI_PROC_NULL, MPI_ANY_SOURCE, MPI_ROOT; or nothing set up yet */
    if (comm == MPI_COMM_WORLD)
        return rank < ml_mon.world_size ? rank : -1;
    translation_t *t = comm_translation(comm);
    return t && rank < t->size ? t->world[rank] : -1;
}

int ml_win_world_rank(MPI_Win win, int rank)
{
    translation_t *t;
    int found;
    if (rank < 0 || !ml_recording())
        return -1;
    PMPI_Win_get_attr(win, win_keyval, &t, &found);
    if (!found) {
        pthread_mutex_lock(&lock);
        PMPI_Win_get_attr(win, win_keyval, &t, &found);
        if (!found) {
            MPI_Group group;
            PMPI_Win_get_group(win, &group);
            t = translate_group(group);
            PMPI_Group_free(&group);
            if (t)
                PMPI_Win_set_attr(win, win_keyval, t);
        }
        pthread_mutex_unlock(&lock);
    }
    return t && rank < t->size ? t->world[rank] : -1;
}

/* ---- recording ------------------------------------------------------------------------------- */

uint64_t ml_bytes(MPI_Count count, MPI_Datatype type)
{
    int size;
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

void ml_record(int kind, MPI_Comm comm, int rank, uint64_t bytes)
{
    int world = ml_world_rank(comm, rank);
    if (world >= 0)
        ml_count_world(kind, world, bytes);
}

void ml_record_win(MPI_Win win, int target, uint64_t bytes)
{
    int world = ml_win_world_rank(win, target);
    if (world >= 0)
        ml_count_world(ML_OSC, world, bytes);
}

/* ---- persistent requests ----------------------------------------------------------------------- */

/* A persistent operation's messages, found by its request. A linked list: programs have few
 * persistent requests at a time, and MPI_Start already costs far more than a short walk. */
typedef struct persistent {
    struct persistent *next;
    MPI_Request request;
    int kind, n;
    ml_message_t messages[];
} persistent_t;

static persistent_t *persistents;

int ml_persistent_add(MPI_Request request, int kind, const ml_message_t *messages, int n)
{
    persistent_t *p = malloc(sizeof *p + (size_t)n * sizeof *messages);
    if (!p)
        return -1;
    p->request = request;
    p->kind = kind;
    p->n = n;
    memcpy(p->messages, messages, (size_t)n * sizeof *messages);
    pthread_mutex_lock(&lock);
    p->next = persistents;
    persistents = p;
    pthread_mutex_unlock(&lock);
    return 0;
}

void ml_persistent_start(MPI_Request request)
{
    if (!ml_recording())
        return;
    pthread_mutex_lock(&lock);
    for (persistent_t *p = persistents; p; p = p->next) {
        if (p->request != request)
            continue;
        for (int i = 0; i < p->n; i++)
            if (p->messages[i].world_rank >= 0)
                ml_count_world(p->kind, p->messages[i].world_rank, p->messages[i].bytes);
        break;
    }
    pthread_mutex_unlock(&lock);
}

void ml_persistent_free(MPI_Request request)
{
    pthread_mutex_lock(&lock);
    for (persistent_t **p = &persistents; *p; p = &(*p)->next) {
        if ((*p)->request == request) {
            persistent_t *gone = *p;
            *p = gone->next;
            free(gone);
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

/* ---- engine ---------------------------------------------------------------------------------- */

int ml_engine_up(void)
{
    int rc = 0;
    pthread_mutex_lock(&lock);
    if (users == 0) {
        PMPI_Comm_size(MPI_COMM_WORLD, &ml_mon.world_size);
        PMPI_Comm_rank(MPI_COMM_WORLD, &ml_mon.world_rank);
        /* Allocated once and kept (see ml_engine_down); keyvals too, so cached translations stay
         * valid across a down and an up. */
        for (int k = 0; k < ML_KINDS && rc == 0; k++)
            if (!ml_mon.cells[k] && !(ml_mon.cells[k] = calloc((size_t)ml_mon.world_size, sizeof(ml_cell_t))))
                rc = -1;
        if (rc == 0 && comm_keyval == MPI_KEYVAL_INVALID &&
            PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_translation, &comm_keyval, NULL) != MPI_SUCCESS)
            rc = -1;
        if (rc == 0 && win_keyval == MPI_KEYVAL_INVALID &&
            PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, free_win_translation, &win_keyval, NULL) != MPI_SUCCESS)
            rc = -1;
        if (rc == 0) {
            __atomic_store_n(&ml_mon.recording, 1, __ATOMIC_RELEASE);
            ml_mpit_open();
        }
    }
    if (rc == 0)
        users++;
    pthread_mutex_unlock(&lock);
    return rc;
}

void ml_engine_down(void)
{
    pthread_mutex_lock(&lock);
    if (users > 0 && --users == 0) {
        __atomic_store_n(&ml_mon.recording, 0, __ATOMIC_RELEASE);
        ml_mpit_close();
        /* The counters stay allocated: a wrapper on another thread may still be adding to them.
         * They are reused if the engine comes up again. */
        for (int k = 0; k < ML_KINDS; k++)
            memset(ml_mon.cells[k], 0, (size_t)ml_mon.world_size * sizeof(ml_cell_t));
    }
    pthread_mutex_unlock(&lock);
}
