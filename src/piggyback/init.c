/* MPI_Init, MPI_Init_thread and MPI_Finalize: the configuration fixed and agreed on, the driver
 * and the shadow communicators set up; at the end, freed requests waited for and the driver's
 * report.
 *
 * Threads: the layer keeps its records without locks, so it supports MPI_THREAD_SERIALIZED at
 * most. A program asking for MPI_THREAD_MULTIPLE is told so once and given SERIALIZED as
 * `provided`, which a correct program checks (docs/piggyback.md, "Threads"). */
#include "pb.h"

static void start_layer(void)
{
    ml_pb_configure(MPI_COMM_WORLD);
    ml_pb_drivers_init(MPI_COMM_WORLD);
    ml_pb_separate_init();
    ml_pb.active = 1;
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = ML_NEXT(MPI_Init)(argc, argv);
    if (rc == MPI_SUCCESS)
        start_layer();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = ML_NEXT(MPI_Init_thread)(argc, argv, required, provided);
    if (rc != MPI_SUCCESS)
        return rc;
    if (*provided > MPI_THREAD_SERIALIZED) {
        ml_pb_say(1, "supports up to MPI_THREAD_SERIALIZED: the program asked for MPI_THREAD_MULTIPLE and "
                     "is given MPI_THREAD_SERIALIZED (only one thread at a time may call MPI)");
        *provided = MPI_THREAD_SERIALIZED;
    }
    start_layer();
    return rc;
}

int MPI_Query_thread(int *provided)
{
    int rc = ML_NEXT(MPI_Query_thread)(provided);
    if (rc == MPI_SUCCESS && ml_pb.active && *provided > MPI_THREAD_SERIALIZED)
        *provided = MPI_THREAD_SERIALIZED;
    return rc;
}

int MPI_Finalize(void)
{
    if (ml_pb.active) {
        ml_pb_zombies_poll(1);
        ml_pb_drivers_finalize(MPI_COMM_WORLD);
        ml_pb_separate_finalize();
        ml_pb_inband_finalize();
        ml_pb.active = 0;
    }
    return ML_NEXT(MPI_Finalize)();
}
