/* The Open MPI backend: collectives as the point-to-point messages the library really sent,
 * from Open MPI's pml/monitoring component through MPI_T (docs/monitor.md). */
#ifndef MPILENS_MPIT_H
#define MPILENS_MPIT_H

#include <stddef.h>
#include <stdint.h>

/* Probes and starts the backend (called when the engine comes up). Uses it only where it
 * works: Open MPI's pml_monitoring_enable is 1 and its per-peer variables can be read. Otherwise
 * records why in ml_mpit_reason() and leaves collectives to the logical backend. */
void ml_mpit_open(void);
void ml_mpit_close(void);
int ml_mpit_active(void);
const char *ml_mpit_reason(void);

/* Cumulative collective traffic by world rank: what Open MPI's point-to-point layer sent, minus
 * what the program sent point to point itself, minus this library's own traffic. */
int ml_mpit_coll_totals(int64_t *messages, int64_t *bytes);

/* The library's own collectives (duplicating a communicator, gathering data) go through Open
 * MPI's point-to-point layer too; bracketing them keeps them out of the collective data. */
typedef struct {
    uint64_t *messages, *bytes; /* the layer's totals before; NULL when the backend is off */
} ml_tool_traffic_t;
void ml_tool_traffic_begin(ml_tool_traffic_t *t);
void ml_tool_traffic_end(ml_tool_traffic_t *t);

#endif
