/* The layer's own sends left in flight: the separate method's pb messages, and the copies that
 * turn an in-band method's buffered send into the layer's own (wrap_send.c). A call that sends
 * one returns at once, as the program's send does without the layer; the layer tests them at
 * each completion call, releases their buffers when done, and waits for the rest at
 * MPI_Finalize. Waiting for one earlier could deadlock a correct program: its receiver may take
 * it only after the sender's next message. */
#include <stdlib.h>

#include "pb.h"

typedef struct {
    MPI_Request request;
    void *buffer; /* pooled (ml_pb_buffer_get), released when the send is done */
} in_flight_t;

static in_flight_t *in_flight;
static size_t in_flight_room;
size_t ml_pb_n_in_flight;

void ml_pb_in_flight_add(MPI_Request request, void *buffer)
{
    if (ml_pb_n_in_flight == in_flight_room) {
        in_flight_room = in_flight_room ? 2 * in_flight_room : 64;
        in_flight = realloc(in_flight, in_flight_room * sizeof *in_flight);
        if (!in_flight)
            ml_pb_fail("out of memory for the layer's messages in flight");
    }
    in_flight[ml_pb_n_in_flight++] = (in_flight_t){request, buffer};
}

void ml_pb_in_flight_poll(int wait)
{
    for (size_t i = 0; i < ml_pb_n_in_flight;) {
        int done = 1;
        if (wait)
            PMPI_Wait(&in_flight[i].request, MPI_STATUS_IGNORE);
        else
            PMPI_Test(&in_flight[i].request, &done, MPI_STATUS_IGNORE);
        if (done) {
            ml_pb_buffer_put(in_flight[i].buffer);
            in_flight[i] = in_flight[--ml_pb_n_in_flight];
        } else {
            i++;
        }
    }
}

void ml_pb_in_flight_finalize(void)
{
    ml_pb_in_flight_poll(1);
    free(in_flight);
    in_flight = NULL;
    in_flight_room = 0;
}
