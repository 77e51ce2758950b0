/* mpilens-cvars: print the MPI library it runs under and its control variables (MPI_T cvars), as
 * one JSON object: {"library", "flavour", "cvars"} (the meta record's "cvars",
 * docs/results-schema.md). `mpilens tune` runs it as
 * one process before it launches anything, to refuse a setting the library does not have. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "cvars.h"
#include "json.h"
#include "meta.h"

static const char usage[] = "usage: mpirun -n N mpilens-cvars [--help] [--version]\n"
                            "Prints the MPI library it runs under and its control variables (MPI_T cvars) as one JSON\n"
                            "object (docs/programs/mpilens-cvars.md).\n";

/* --help and --version answer without starting MPI; anything else is refused. */
static int options(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            printf("mpilens-cvars %s\n", ml_version_string);
            return 0;
        }
        if (strcmp(argv[i], "--help") == 0) {
            fputs(usage, stdout);
            return 0;
        }
        fprintf(stderr, "mpilens-cvars: unknown option %s\n%s", argv[i], usage);
        return 2;
    }
    return -1;
}

int main(int argc, char **argv)
{
    int answered = options(argc, argv);
    if (answered >= 0)
        return answered;
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int rc = 0;
    if (rank == 0) {
        ml_json_t out;
        ml_json_init(&out);
        char library[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(library, &len);
        ml_json_begin_object(&out, NULL);
        ml_json_string(&out, "library", library);
        ml_json_string(&out, "flavour", ml_mpi_flavour(library));
        ml_cvars_json(&out, "cvars");
        ml_json_end_object(&out);
        if (out.failed || printf("%s\n", out.buf) < 0)
            rc = 1;
        ml_json_free(&out);
    }
    MPI_Finalize();
    return rc;
}
