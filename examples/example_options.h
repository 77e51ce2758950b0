/* The command line of the plain example applications (sweep.c, cg.c): they parse their options
 * themselves, with MPI alone, so that the PMPI layers under test see a program that uses nothing
 * of mpilens. The including file defines PROGRAM and usage_line first. */
#ifndef MPILENS_EXAMPLES_EXAMPLE_OPTIONS_H
#define MPILENS_EXAMPLES_EXAMPLE_OPTIONS_H

#include <errno.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every rank parses the same command line, so all of them come here together; rank 0 speaks. */
_Noreturn static inline void exit_usage(int rank, const char *fmt, ...)
{
    if (rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fputs(PROGRAM ": ", stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\n%s\n", usage_line);
    }
    MPI_Finalize();
    exit(2);
}

static inline int parse_int(int rank, const char *name, const char *text, int min, int max)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < min || value > max)
        exit_usage(rank, "invalid value \"%s\" for --%s: expected an integer from %d to %d", text, name, min, max);
    return (int)value;
}

/* The value of option argv[*a]: after its "=", or the next argument. */
static inline const char *option_value(int rank, int argc, char **argv, int *a, const char *equals, const char *option)
{
    if (equals)
        return equals + 1;
    if (*a + 1 >= argc)
        exit_usage(rank, "missing value for --%s", option);
    return argv[++*a];
}

/* The name of option argv[a] ("--name" or "--name=value") into option; *equals: its "=", or NULL.
 * Anything not starting with "--" ends the run with the usage; --help calls help; --version
 * prints the program's name and mpilens's version (MPILENS_EXAMPLE_VERSION, set by the build). */
static inline void option_name(int rank, const char *arg, char option[64], const char **equals, void (*help)(int rank))
{
    if (strncmp(arg, "--", 2) != 0)
        exit_usage(rank, "unexpected argument \"%s\" (options start with --)", arg);
    const char *name = arg + 2;
    *equals = strchr(name, '=');
    size_t len = *equals ? (size_t)(*equals - name) : strlen(name);
    snprintf(option, 64, "%.*s", (int)len, name);
    if (strcmp(option, "help") == 0)
        help(rank);
    if (strcmp(option, "version") == 0) {
        if (rank == 0)
            printf("%s %s\n", PROGRAM, MPILENS_EXAMPLE_VERSION);
        MPI_Finalize();
        exit(0);
    }
}

/* Whether option is the flag `flag` (and then sets *value); a flag given a value ends the run. */
static inline int flag_option(int rank, const char *option, const char *equals, const char *flag, int *value)
{
    if (strcmp(option, flag) != 0)
        return 0;
    if (equals)
        exit_usage(rank, "--%s takes no value", flag);
    *value = 1;
    return 1;
}

/* An integer option: its name, where it goes, its range. */
typedef struct {
    const char *name;
    int *dest;
    int min, max;
} int_option_t;

/* The grid: --nx, --ny, --nz, and --n for all three at once (a later option wins). */
typedef struct {
    int *nx, *ny, *nz;
    int max;
} grid_options_t;

/* Sets the integer option named `option`, a grid size or one of the n of `ints`, from argv (see
 * option_value), or ends the run with the usage if there is none of that name. */
static inline void set_int_option(int rank, const grid_options_t *grid, const int_option_t *ints, size_t n, int argc,
                                  char **argv, int *a, const char *equals, const char *option)
{
    const int_option_t sizes[] = {{"n", NULL, 1, grid->max},
                                  {"nx", grid->nx, 1, grid->max},
                                  {"ny", grid->ny, 1, grid->max},
                                  {"nz", grid->nz, 1, grid->max}};
    const int_option_t *found = NULL;
    for (size_t i = 0; i < 4 && !found; i++)
        found = strcmp(sizes[i].name, option) == 0 ? &sizes[i] : NULL;
    for (size_t i = 0; i < n && !found; i++)
        found = strcmp(ints[i].name, option) == 0 ? &ints[i] : NULL;
    if (!found)
        exit_usage(rank, "unknown option --%s (see --help)", option);
    int v = parse_int(rank, option, option_value(rank, argc, argv, a, equals, option), found->min, found->max);
    if (found->dest)
        *found->dest = v;
    else
        *grid->nx = *grid->ny = *grid->nz = v;
}

#endif
