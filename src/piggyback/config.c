/* The layer's configuration: the tool API's setters, the environment, and the check at MPI_Init
 * that every rank runs the same method with the same pb size (a mismatch would corrupt user
 * messages silently, so it aborts with the reason instead). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "layer_say.h"
#include "pb.h"

static const ml_pb_method_t methods[] = {
    {"pack-before", PB_PACK, PB_BEFORE, 0},
    {"pack-after", PB_PACK, PB_AFTER, 0},
    {"datatype-before", PB_DATATYPE, PB_BEFORE, 0},
    {"datatype-after", PB_DATATYPE, PB_AFTER, 0},
    {"separate", PB_SEPARATE, PB_BEFORE, 0},
    {"separate-after", PB_SEPARATE, PB_AFTER, 0},
    {"auto", PB_PACK, PB_BEFORE, 1},
};
#define N_METHODS (sizeof methods / sizeof methods[0])
#define METHOD_NAMES "pack-before, pack-after, datatype-before, datatype-after, separate, separate-after, auto"

/* auto without measured thresholds: every payload packed below 4 KiB, a struct type from there
 * on (docs/piggyback.md, "auto"). */
#define AUTO_DEFAULT_FROM 4096

ml_pb_t ml_pb = {&methods[2], 4, 0, 0, NULL, NULL, NULL, AUTO_DEFAULT_FROM, AUTO_DEFAULT_FROM};

void ml_pb_say(int once, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ml_layer_vsay("libmpilens-piggyback", once, fmt, ap);
    va_end(ap);
}

void ml_pb_fail(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "libmpilens-piggyback: rank %d: %s\n", ml_layer_world_rank(), line);
    fflush(stderr);
    /* the launcher kills every rank at the first abort, sometimes before it has forwarded what
     * they wrote: a moment lets the reason reach the user */
    struct timespec moment = {0, 200000000};
    nanosleep(&moment, NULL);
    PMPI_Abort(MPI_COMM_WORLD, 2);
    abort();
}

static const ml_pb_method_t *method_named(const char *name)
{
    for (size_t i = 0; i < N_METHODS; i++)
        if (strcmp(methods[i].name, name) == 0)
            return &methods[i];
    return NULL;
}

/* ---- the tool API -------------------------------------------------------------------------- */

mpilens_pb_status_t mpilens_pb_set_handlers(mpilens_pb_producer_t producer, mpilens_pb_consumer_t consumer,
                                            void *context)
{
    ml_pb.producer = producer;
    ml_pb.consumer = consumer;
    ml_pb.context = context;
    return MPILENS_PB_OK;
}

mpilens_pb_status_t mpilens_pb_set_size(size_t bytes)
{
    if (bytes > MPILENS_PB_MAX_SIZE)
        return MPILENS_PB_ERR_ARG;
    if (ml_pb.frozen)
        return MPILENS_PB_ERR_STATE;
    ml_pb.size = bytes;
    return MPILENS_PB_OK;
}

mpilens_pb_status_t mpilens_pb_set_method(const char *name)
{
    const ml_pb_method_t *m = name ? method_named(name) : NULL;
    if (!m)
        return MPILENS_PB_ERR_ARG;
    if (ml_pb.frozen)
        return MPILENS_PB_ERR_STATE;
    ml_pb.method = m;
    return MPILENS_PB_OK;
}

mpilens_pb_status_t mpilens_pb_get_size(size_t *bytes)
{
    if (!bytes)
        return MPILENS_PB_ERR_ARG;
    *bytes = ml_pb.size;
    return MPILENS_PB_OK;
}

mpilens_pb_status_t mpilens_pb_get_method(const char **name)
{
    if (!name)
        return MPILENS_PB_ERR_ARG;
    *name = ml_pb.method->name;
    return MPILENS_PB_OK;
}

const char *mpilens_pb_status_string(mpilens_pb_status_t status)
{
    switch (status) {
    case MPILENS_PB_OK: return "success";
    case MPILENS_PB_ERR_ARG: return "invalid argument";
    case MPILENS_PB_ERR_STATE: return "too late: MPI_Init has fixed the piggyback size and method";
    }
    return "unknown status";
}

/* ---- environment and agreement ---------------------------------------------------------------- */

static size_t parse_size(const char *name, const char *text, size_t max)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < 0 || (unsigned long long)v > max)
        ml_pb_fail("invalid value \"%s\" in %s: expected a number of bytes from 0 to %zu", text, name, max);
    return (size_t)v;
}

/* ---- auto: the threshold measured on this machine ------------------------------------------------
 * `mpilens piggyback` writes it, one line per MPI library: the first line of
 * MPI_Get_library_version, a tab (the line's last), the payload size in bytes from which a struct type beats
 * packing. The file is MPILENS_PB_AUTO_FILE, else $XDG_CONFIG_HOME/mpilens/piggyback-auto (or
 * ~/.config/...). No file, or no line for this library: the default, and rank 0 says so. */
#define AUTO_FROM_MAX ((size_t)1 << 40)

static void auto_file_path(char *path, size_t room)
{
    const char *explicit = getenv("MPILENS_PB_AUTO_FILE");
    const char *config = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    if (explicit && *explicit)
        snprintf(path, room, "%s", explicit);
    else if (config && *config)
        snprintf(path, room, "%s/mpilens/piggyback-auto", config);
    else
        snprintf(path, room, "%s/.config/mpilens/piggyback-auto", home ? home : ".");
}

static void read_auto_file(void)
{
    char path[4096], library[MPI_MAX_LIBRARY_VERSION_STRING], line[MPI_MAX_LIBRARY_VERSION_STRING + 64];
    int length = 0;
    auto_file_path(path, sizeof path);
    PMPI_Get_library_version(library, &length);
    library[strcspn(library, "\n")] = 0;
    FILE *f = fopen(path, "r");
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        char *tab = strrchr(line, '\t'); /* the last: MPICH's own name holds one */
        if (!tab)
            continue;
        *tab = 0;
        if (strcmp(line, library) != 0)
            continue;
        tab[strcspn(tab + 1, "\n") + 1] = 0;
        ml_pb.auto_send_datatype_from = ml_pb.auto_recv_datatype_from = parse_size(path, tab + 1, AUTO_FROM_MAX);
        found = 1;
    }
    if (f)
        fclose(f);
    if (!found)
        ml_pb_say(1,
                  "auto: no threshold measured for this MPI library in %s (run `mpilens piggyback`); "
                  "packing below %zu bytes, a struct type from there on",
                  path, ml_pb.auto_send_datatype_from);
}

static void read_environment(void)
{
    const char *method = getenv("MPILENS_PB_METHOD");
    if (method && *method) {
        ml_pb.method = method_named(method);
        if (!ml_pb.method)
            ml_pb_fail("unknown method \"%s\" in MPILENS_PB_METHOD: expected one of %s", method, METHOD_NAMES);
    }
    const char *size = getenv("MPILENS_PB_SIZE");
    if (size && *size)
        ml_pb.size = parse_size("MPILENS_PB_SIZE", size, MPILENS_PB_MAX_SIZE);
    const char *from = getenv("MPILENS_PB_AUTO_DATATYPE_FROM");
    if (from && *from)
        ml_pb.auto_send_datatype_from = ml_pb.auto_recv_datatype_from =
            parse_size("MPILENS_PB_AUTO_DATATYPE_FROM", from, AUTO_FROM_MAX);
    else if (ml_pb.method->automatic)
        read_auto_file();
}

void ml_pb_configure(MPI_Comm world)
{
    read_environment();
    ml_pb.frozen = 1;
    /* every rank must run the same method with the same size */
    unsigned long mine[2] = {(unsigned long)(ml_pb.method - methods), (unsigned long)ml_pb.size}, low[2], high[2];
    PMPI_Allreduce(mine, low, 2, MPI_UNSIGNED_LONG, MPI_MIN, world);
    PMPI_Allreduce(mine, high, 2, MPI_UNSIGNED_LONG, MPI_MAX, world);
    if (low[0] != high[0] || low[1] != high[1])
        ml_pb_fail("ranks disagree on the piggyback method or size (this rank: %s, %zu bytes); set "
                   "MPILENS_PB_METHOD and MPILENS_PB_SIZE the same for every rank",
                   ml_pb.method->name, ml_pb.size);
}
