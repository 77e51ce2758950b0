/* The control variables (MPI_T cvars) the MPI library of a run really has: recorded in the meta
 * record, so that advice names only settings that exist in the library measured (issue 19,
 * docs/results-schema.md, "cvars"), and printed by mpilens-cvars before `mpilens tune` launches
 * a candidate setting. */
#ifndef MPILENS_CORE_CVARS_H
#define MPILENS_CORE_CVARS_H

#include "json.h"

/* Writes key: {"count": N, "vars": {NAME: {"type", "value", "default", "scope"}}} (or null when
 * the MPI tool interface cannot start). Values are read for variables bound to no object and
 * holding one element (or a string); "default" is the value read when no environment variable
 * sets the variable (MPI_T has no call for a default), else null. Local: call on one process,
 * at any time between MPI_Init and MPI_Finalize or outside them. */
void ml_cvars_json(ml_json_t *out, const char *key);

#endif
