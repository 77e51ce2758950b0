/* The Open MPI backend (mpit.h): Open MPI's pml/monitoring counts every message its
 * point-to-point layer sends, collectives' included, by world rank. With pml_monitoring_enable=1
 * its MPI_T variables hold all of them; the program's own point-to-point messages are known
 * exactly from the wrappers, and the library's own traffic is bracketed, so what remains is the
 * collectives' decomposition (seed 004's distinctive feature).
 *
 * With pml_monitoring_enable >= 2, Open MPI keeps messages with internal (negative) tags out of
 * the variables, so the decomposition is not readable through MPI_T; and Debian's Open MPI 4.1
 * registers the variables but cannot read them (Open MPI issue #9260). Both are detected here and
 * said in ml_mpit_reason(). */
#include "mpit.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor.h"

static struct {
    int active, mpit_up, n;
    char reason[256];
    MPI_T_pvar_session session;
    MPI_T_pvar_handle messages, bytes;
    uint64_t *tool_messages, *tool_bytes; /* the library's own traffic, excluded */
} b;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int ml_mpit_active(void) { return __atomic_load_n(&b.active, __ATOMIC_ACQUIRE); }
const char *ml_mpit_reason(void) { return b.reason; }

static int read_int_cvar(const char *name, int *value)
{
    int index, count, verbosity, bind, scope;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    MPI_T_cvar_handle handle;
    char vname[256], desc[256];
    int nlen = sizeof vname, dlen = sizeof desc;
    if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS ||
        MPI_T_cvar_get_info(index, vname, &nlen, &verbosity, &type, &enumtype, desc, &dlen, &bind, &scope) !=
            MPI_SUCCESS ||
        type != MPI_INT || MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) != MPI_SUCCESS)
        return -1;
    int rc = MPI_T_cvar_read(handle, value);
    MPI_T_cvar_handle_free(&handle);
    return rc == MPI_SUCCESS ? 0 : -1;
}

/* A per-peer counter of Open MPI's pml/monitoring, bound to MPI_COMM_WORLD. */
static int open_pvar(const char *name, MPI_T_pvar_handle *handle)
{
    int index, count, verbosity, var_class, bind, readonly, continuous, atomic;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    char vname[256], desc[256];
    int nlen = sizeof vname, dlen = sizeof desc, size;
    MPI_Comm world = MPI_COMM_WORLD;
    if (MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_SIZE, &index) != MPI_SUCCESS ||
        MPI_T_pvar_get_info(index, vname, &nlen, &verbosity, &var_class, &type, &enumtype, desc, &dlen, &bind,
                            &readonly, &continuous, &atomic) != MPI_SUCCESS)
        return -1;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size != (int)sizeof(uint64_t))
        return -1;
    if (MPI_T_pvar_handle_alloc(b.session, index, &world, handle, &count) != MPI_SUCCESS)
        return -1;
    if (count != b.n || (!continuous && MPI_T_pvar_start(b.session, *handle) != MPI_SUCCESS)) {
        MPI_T_pvar_handle_free(b.session, handle);
        return -1;
    }
    return 0;
}

static void give_up(const char *why) { snprintf(b.reason, sizeof b.reason, "%s", why); }

void ml_mpit_open(void)
{
    int provided, enable;
    const char *choice = getenv("MPILENS_MONITOR_BACKEND");
    b.n = ml_mon.world_size;
    if (choice && strcmp(choice, "pmpi") == 0) {
        give_up("MPILENS_MONITOR_BACKEND=pmpi");
        return;
    }
    if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        give_up("MPI_T cannot be initialised");
        return;
    }
    b.mpit_up = 1;
    if (read_int_cvar("pml_monitoring_enable", &enable) != 0) {
        int index;
        /* Debian's Open MPI 4.1 loads coll/ and osc/monitoring but not pml/monitoring */
        give_up(MPI_T_cvar_get_index("coll_monitoring_major_version", &index) == MPI_SUCCESS
                    ? "Open MPI's pml/monitoring component is not loaded (Open MPI issue #9260), only coll/ and "
                      "osc/monitoring"
                    : "no Open MPI pml/monitoring component (not Open MPI, or built without it)");
        return;
    }
    if (enable == 0) {
        give_up("Open MPI's monitoring is off; run with --mca pml_monitoring_enable 1 for the collectives' messages");
        return;
    }
    if (enable >= 2) {
        snprintf(b.reason, sizeof b.reason,
                 "pml_monitoring_enable=%d keeps collectives' messages out of MPI_T; use 1 to read them", enable);
        return;
    }
    b.tool_messages = calloc((size_t)b.n, sizeof(uint64_t));
    b.tool_bytes = calloc((size_t)b.n, sizeof(uint64_t));
    if (!b.tool_messages || !b.tool_bytes || MPI_T_pvar_session_create(&b.session) != MPI_SUCCESS) {
        give_up("out of memory, or no MPI_T pvar session");
        return;
    }
    if (open_pvar("pml_monitoring_messages_count", &b.messages) != 0 ||
        open_pvar("pml_monitoring_messages_size", &b.bytes) != 0) {
        give_up("Open MPI's pml_monitoring variables cannot be read (Open MPI issue #9260)");
        MPI_T_pvar_session_free(&b.session);
        return;
    }
    b.reason[0] = '\0';
    __atomic_store_n(&b.active, 1, __ATOMIC_RELEASE);
}

void ml_mpit_close(void)
{
    if (ml_mpit_active()) {
        __atomic_store_n(&b.active, 0, __ATOMIC_RELEASE);
        MPI_T_pvar_handle_free(b.session, &b.messages);
        MPI_T_pvar_handle_free(b.session, &b.bytes);
        MPI_T_pvar_session_free(&b.session);
    }
    if (b.mpit_up)
        MPI_T_finalize();
    free(b.tool_messages);
    free(b.tool_bytes);
    memset(&b, 0, sizeof b);
}

/* The layer's totals into messages[n] and bytes[n]. */
static int read_layer(uint64_t *messages, uint64_t *bytes)
{
    pthread_mutex_lock(&lock);
    int rc = MPI_T_pvar_read(b.session, b.messages, messages) == MPI_SUCCESS &&
                     MPI_T_pvar_read(b.session, b.bytes, bytes) == MPI_SUCCESS
                 ? 0
                 : -1;
    pthread_mutex_unlock(&lock);
    return rc;
}

int ml_mpit_coll_totals(int64_t *messages, int64_t *bytes)
{
    uint64_t *layer = malloc(2 * sizeof(uint64_t) * (size_t)b.n);
    if (!layer || read_layer(layer, layer + b.n) != 0) {
        free(layer);
        return -1;
    }
    for (int w = 0; w < b.n; w++) {
        uint64_t p2p_messages, p2p_bytes;
        ml_cell_read(ML_P2P, w, &p2p_messages, &p2p_bytes);
        messages[w] = (int64_t)(layer[w] - p2p_messages - __atomic_load_n(&b.tool_messages[w], __ATOMIC_RELAXED));
        bytes[w] = (int64_t)(layer[b.n + w] - p2p_bytes - __atomic_load_n(&b.tool_bytes[w], __ATOMIC_RELAXED));
    }
    free(layer);
    return 0;
}

void ml_tool_traffic_begin(ml_tool_traffic_t *t)
{
    t->messages = t->bytes = NULL;
    if (!ml_mpit_active() || !(t->messages = malloc(2 * sizeof(uint64_t) * (size_t)b.n)))
        return;
    t->bytes = t->messages + b.n;
    if (read_layer(t->messages, t->bytes) != 0) {
        free(t->messages);
        t->messages = t->bytes = NULL;
    }
}

void ml_tool_traffic_end(ml_tool_traffic_t *t)
{
    if (!t->messages)
        return;
    uint64_t *after = malloc(2 * sizeof(uint64_t) * (size_t)b.n);
    if (after && read_layer(after, after + b.n) == 0)
        for (int w = 0; w < b.n; w++) {
            __atomic_fetch_add(&b.tool_messages[w], after[w] - t->messages[w], __ATOMIC_RELAXED);
            __atomic_fetch_add(&b.tool_bytes[w], after[b.n + w] - t->bytes[w], __ATOMIC_RELAXED);
        }
    free(after);
    free(t->messages);
    t->messages = t->bytes = NULL;
}
