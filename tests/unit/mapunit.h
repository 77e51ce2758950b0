/* What the libmpilens-map unit tests share (tests/mpi/map/maptest.h is the MPI tests' header):
 * the data directory they are given (argv[1], tests/data/map), a scratch directory for the files
 * they write, removed at the end with what it holds, and the checked constructors of topologies
 * and matrices. */
#ifndef MPILENS_TEST_MAPUNIT_H
#define MPILENS_TEST_MAPUNIT_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "map_internal.h"

static const char *data_dir;
static char scratch_dir[] = "/tmp/test_map.XXXXXX";

static inline const char *mapunit_path(const char *dir, const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static inline const char *data_path(const char *name) { return mapunit_path(data_dir, name); }
static inline const char *scratch_path(const char *name) { return mapunit_path(scratch_dir, name); }

/* A scratch file holding `text` (mapunit_end removes it). */
static inline const char *scratch_file(const char *name, const char *text)
{
    const char *path = scratch_path(name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return path;
}

/* Takes the data directory from argv[1] and makes the scratch directory: 0, or 2 after a usage
 * line, which main returns. */
static inline int mapunit_start(int argc, char **argv)
{
    if (argc < 2 || !mkdtemp(scratch_dir)) {
        fprintf(stderr, "usage: %s DATA_DIR (tests/data/map)\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    return 0;
}

/* Removes the scratch directory and the files in it. */
static inline void mapunit_end(void)
{
    DIR *d = opendir(scratch_dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlink(scratch_path(e->d_name));
    if (d)
        closedir(d);
    rmdir(scratch_dir);
}

/* The synthetic topology `spec` (a check fails if it is refused). */
static inline mpilens_map_topology_t *topology(const char *spec)
{
    mpilens_map_topology_t *t = NULL;
    CHECK(mpilens_map_topology_synthetic(spec, &t) == MPILENS_MAP_OK);
    return t;
}

/* An empty matrix of `order` processes (a check fails if it is refused). */
static inline mpilens_map_matrix_t *matrix(int order)
{
    mpilens_map_matrix_t *m = NULL;
    CHECK(mpilens_map_matrix_create(order, &m) == MPILENS_MAP_OK);
    return m;
}

#endif
