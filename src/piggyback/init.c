/* The life cycle (wrapped.spec's lifecycle hooks): at MPI_Init, the configuration fixed and agreed
 * on, the driver and the shadow communicators set up; at MPI_Finalize, freed requests waited for
 * and the driver's report.
 *
 * Threads: the layer keeps its records without locks, so it supports MPI_THREAD_SERIALIZED at
 * most. A program asking for MPI_THREAD_MULTIPLE is told so once and given SERIALIZED as
 * `provided` (and by MPI_Query_thread), which a correct program checks (docs/piggyback.md,
 * "Threads"). */
#include "hooks.h"

void ml_pb_start_layer(int provided)
{
    (void)provided;
    ml_pb_configure(MPI_COMM_WORLD);
    ml_pb_drivers_init(MPI_COMM_WORLD);
    ml_pb_separate_init();
    ml_pb.active = 1;
}

int ml_pb_provided_level(int provided)
{
    if (provided <= MPI_THREAD_SERIALIZED)
        return provided;
    ml_pb_say(1, "supports up to MPI_THREAD_SERIALIZED: the program asked for MPI_THREAD_MULTIPLE and "
                 "is given MPI_THREAD_SERIALIZED (only one thread at a time may call MPI)");
    return MPI_THREAD_SERIALIZED;
}

void ml_pb_stop_layer(void)
{
    if (!ml_pb.active)
        return;
    ml_pb_zombies_poll(1);
    ml_pb_in_flight_finalize();
    ml_pb_drivers_finalize(MPI_COMM_WORLD);
    ml_pb_separate_finalize();
    ml_pb_inband_finalize();
    ml_pb.active = 0;
}
