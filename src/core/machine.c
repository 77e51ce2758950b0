#include "machine.h"

#include <stdio.h>
#include <string.h>

uint64_t ml_machine_hash(void)
{
    char id[64] = {0};
    FILE *f = fopen("/etc/machine-id", "r");
    if (!f)
        f = fopen("/var/lib/dbus/machine-id", "r");
    if (f) {
        if (!fgets(id, sizeof id, f))
            id[0] = '\0';
        fclose(f);
    }
    id[strcspn(id, "\n")] = '\0';
    if (!id[0])
        return 0;
    uint64_t hash = 14695981039346656037ULL;
    for (const char *c = "mpilens:"; *c; c++)
        hash = (hash ^ (unsigned char)*c) * 1099511628211ULL;
    for (const char *c = id; *c; c++)
        hash = (hash ^ (unsigned char)*c) * 1099511628211ULL;
    return hash ? hash : 1;
}

void ml_machine_id(char *buf, size_t len)
{
    uint64_t hash = ml_machine_hash();
    if (hash)
        snprintf(buf, len, "%016llx", (unsigned long long)hash);
    else if (len)
        buf[0] = '\0';
}
