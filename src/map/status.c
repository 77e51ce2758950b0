/* The names of libmpilens-map's status codes and of its mapping algorithms. */
#include <string.h>

#include "map_internal.h"

const char *mpilens_map_status_string(mpilens_map_status_t status)
{
    switch (status) {
    case MPILENS_MAP_OK: return "success";
    case MPILENS_MAP_ERR_ARG: return "invalid argument";
    case MPILENS_MAP_ERR_NOMEM: return "out of memory";
    case MPILENS_MAP_ERR_SPEC: return "description that does not parse";
    case MPILENS_MAP_ERR_IO: return "file that cannot be opened, read or written";
    case MPILENS_MAP_ERR_FORMAT: return "file that does not hold a matrix or a topology";
    case MPILENS_MAP_ERR_HWLOC: return "hwloc could not load or describe the machine";
    case MPILENS_MAP_ERR_SHAPE: return "nodes of different shapes";
    case MPILENS_MAP_ERR_SIZE: return "matrix of another order than the processes";
    case MPILENS_MAP_ERR_UNSUPPORTED: return "algorithm not built in this library";
    case MPILENS_MAP_ERR_MPI: return "MPI call failed";
    case MPILENS_MAP_ERR_MONITOR: return "monitoring session could not give its matrix";
    }
    return "unknown status";
}

/* Every name algo_parse accepts; the first of each algorithm is the one algo_name gives. */
static const struct {
    const char *name;
    mpilens_map_algo_t algo;
} algo_names[] = {
    {"treematch", MPILENS_MAP_TREEMATCH},     {"greedy", MPILENS_MAP_GREEDY}, {"scotch", MPILENS_MAP_SCOTCH},
    {"identity", MPILENS_MAP_IDENTITY},       {"packed", MPILENS_MAP_PACKED}, {"rr", MPILENS_MAP_ROUND_ROBIN},
    {"round-robin", MPILENS_MAP_ROUND_ROBIN}, {"random", MPILENS_MAP_RANDOM},
};

#define ALGO_NAMES (sizeof algo_names / sizeof algo_names[0])

mpilens_map_status_t mpilens_map_algo_parse(const char *name, mpilens_map_algo_t *algo)
{
    if (!name || !algo)
        return MPILENS_MAP_ERR_ARG;
    for (size_t i = 0; i < ALGO_NAMES; i++) {
        if (strcmp(name, algo_names[i].name) == 0) {
            *algo = algo_names[i].algo;
            return MPILENS_MAP_OK;
        }
    }
    return MPILENS_MAP_ERR_SPEC;
}

mpilens_map_status_t mpilens_map_algo_name(mpilens_map_algo_t algo, const char **name)
{
    if (!name)
        return MPILENS_MAP_ERR_ARG;
    for (size_t i = 0; i < ALGO_NAMES; i++) {
        if (algo_names[i].algo == algo) {
            *name = algo_names[i].name;
            return MPILENS_MAP_OK;
        }
    }
    return MPILENS_MAP_ERR_ARG;
}

mpilens_map_status_t mpilens_map_algo_available(mpilens_map_algo_t algo, int *available)
{
    if (!available || (int)algo < (int)MPILENS_MAP_TREEMATCH || (int)algo > (int)MPILENS_MAP_RANDOM)
        return MPILENS_MAP_ERR_ARG;
#ifdef MPILENS_HAVE_SCOTCH
    *available = 1;
#else
    *available = algo != MPILENS_MAP_SCOTCH;
#endif
    return MPILENS_MAP_OK;
}
