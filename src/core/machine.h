/* Which machine this process runs on, so that host names that are one machine (containers, the
 * test cluster's emulated nodes) can be told apart from separate machines. No MPI calls: the
 * PMPI layers' results writer uses it too. */
#ifndef MPILENS_CORE_MACHINE_H
#define MPILENS_CORE_MACHINE_H

#include <stddef.h>
#include <stdint.h>

/* /etc/machine-id (else /var/lib/dbus/machine-id) hashed, FNV-1a 64 with a prefix of mpilens'
 * own, as systemd asks of programs that pass the id on; 0 where the system has none. */
uint64_t ml_machine_hash(void);

/* The hash in 16 hex digits, as the meta record's "machines" gives it; "" where there is none. */
void ml_machine_id(char *buf, size_t len);

#endif
