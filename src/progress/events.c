/* The event mode's wait (seed 002's interrupt-driven thread): the thread blocks until one of the
 * MPI library's descriptors becomes readable, then drives progress.
 *
 * MPI has no call that waits for network events, so the descriptors are found from outside:
 * the sockets, event fds and epoll sets of the process (/proc/self/fd) that were not open before
 * MPI_Init began. They are watched edge-triggered: the library, not this thread, reads them, so
 * a level-triggered watch would wake the thread again and again until the library's next read;
 * an edge wakes it once per arrival. An epoll set of the library's own (libevent's under Open
 * MPI, UCX's) is itself readable when one of its descriptors is, so connections it adds later
 * are covered. Others open lazily (a connection accepted after a wake-up on a listening socket,
 * one opened at the first message to a peer), so the descriptors are looked for again: within
 * RESCAN_NS of a wake-up by a descriptor, and every RESCAN_IDLE_NS when only the timer wakes
 * the thread (a scan costs a few system calls per descriptor: 95 us for 26 of them, so 0.1% of a
 * core at 100 ms; at 1 s a connection the rank itself opened went unwatched through a whole
 * 10-message exchange in CI). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "layer.h"

#define MAX_FDS 1024
#define RESCAN_NS 10000000LL       /* 10 ms */
#define RESCAN_IDLE_NS 100000000LL /* 100 ms */
#define NEVER LLONG_MAX

typedef struct {
    int fd;
    ino_t ino; /* a descriptor closed and its number reused is another one */
} fd_id_t;

static struct {
    fd_id_t before[MAX_FDS]; /* open before MPI_Init: the program's (and the launcher's) */
    int n_before;
    fd_id_t watched[MAX_FDS];
    int n_watched;
    int epoll_fd;
    int wake_fd; /* the layer's own: written to stop the thread's wait */
    long long last_scan_ns;
    long long next_scan_ns; /* when the next scan is due; NEVER before a wake-up asks for one */
} ev = {.epoll_fd = -1, .wake_fd = -1, .next_scan_ns = NEVER};

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Whether /proc/self/fd/<name> is a socket, an event fd or an epoll set: what a transport waits
 * on (pipes, files and shared memory segments are not). */
static int is_event_source(const char *name)
{
    char path[300], target[64];
    snprintf(path, sizeof path, "/proc/self/fd/%s", name);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0)
        return 0;
    target[n] = '\0';
    return strncmp(target, "socket:", 7) == 0 || strcmp(target, "anon_inode:[eventfd]") == 0 ||
           strcmp(target, "anon_inode:[eventpoll]") == 0;
}

static int find(const fd_id_t *set, int n, fd_id_t id)
{
    for (int i = 0; i < n; i++)
        if (set[i].fd == id.fd && set[i].ino == id.ino)
            return 1;
    return 0;
}

/* Calls each(id) for every event source open now, but the layer's own. */
static void scan(void (*each)(fd_id_t id))
{
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return;
    int own = dirfd(dir);
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        struct stat st;
        int fd = atoi(e->d_name);
        if (fd == own || fd == ev.epoll_fd || fd == ev.wake_fd || fstat(fd, &st) != 0 || !is_event_source(e->d_name))
            continue;
        each((fd_id_t){fd, st.st_ino});
    }
    closedir(dir);
}

static void note_before(fd_id_t id)
{
    if (ev.n_before < MAX_FDS)
        ev.before[ev.n_before++] = id;
}

static void watch(fd_id_t id)
{
    if (find(ev.before, ev.n_before, id) || find(ev.watched, ev.n_watched, id) || ev.n_watched == MAX_FDS)
        return;
    struct epoll_event want = {.events = EPOLLIN | EPOLLET, .data.fd = id.fd};
    if (epoll_ctl(ev.epoll_fd, EPOLL_CTL_ADD, id.fd, &want) == 0 || errno == EEXIST)
        ev.watched[ev.n_watched++] = id;
}

void ml_progress_events_before_init(void)
{
    ev.n_before = 0;
    scan(note_before);
}

/* The watch list keeps only what is still open: epoll forgets a closed descriptor by itself. */
static void forget_closed(void)
{
    int kept = 0;
    for (int i = 0; i < ev.n_watched; i++) {
        struct stat st;
        if (fstat(ev.watched[i].fd, &st) == 0 && st.st_ino == ev.watched[i].ino)
            ev.watched[kept++] = ev.watched[i];
    }
    ev.n_watched = kept;
}

static void rescan(void)
{
    forget_closed();
    scan(watch);
    ev.last_scan_ns = now_ns();
}

int ml_progress_events_open(char *why, size_t why_size)
{
    ev.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    ev.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event stop = {.events = EPOLLIN, .data.fd = ev.wake_fd};
    if (ev.epoll_fd < 0 || ev.wake_fd < 0 || epoll_ctl(ev.epoll_fd, EPOLL_CTL_ADD, ev.wake_fd, &stop) != 0) {
        snprintf(why, why_size, "epoll: %s", strerror(errno));
        ml_progress_events_close();
        return -1;
    }
    ev.n_watched = 0;
    rescan();
    if (ev.n_watched == 0) {
        snprintf(why, why_size, "MPI_Init opened no socket or event descriptor");
        ml_progress_events_close();
        return -1;
    }
    return ev.n_watched;
}

static int ceil_ms(long long ns) { return (int)((ns + 999999) / 1000000); }

static long long earliest(long long a, long long b) { return a < b ? a : b; }

int ml_progress_events_wait(long timeout_us)
{
    long long now = now_ns();
    if (now >= ev.next_scan_ns) {
        rescan();
        ev.next_scan_ns = NEVER;
    }
    /* epoll_wait counts milliseconds: a pause below one is rounded up, never down to a poll */
    long long until = timeout_us == 0 ? NEVER : now + timeout_us * 1000LL;
    until = earliest(until, ev.next_scan_ns); /* wake for a scan that is due */
    int timeout_ms = until == NEVER ? -1 : ceil_ms(until - now);
    struct epoll_event got[16];
    int n = epoll_wait(ev.epoll_fd, got, (int)(sizeof got / sizeof got[0]), timeout_ms);
    int woken = 0;
    for (int i = 0; i < n; i++)
        woken |= got[i].data.fd != ev.wake_fd;
    ev.next_scan_ns = earliest(ev.next_scan_ns, ev.last_scan_ns + (woken ? RESCAN_NS : RESCAN_IDLE_NS));
    return woken;
}

int ml_progress_events_watched(void) { return ev.n_watched; }

void ml_progress_events_interrupt(void)
{
    uint64_t one = 1;
    if (write(ev.wake_fd, &one, sizeof one) != sizeof one)
        ml_progress_say(0, "event: cannot wake the thread (%s): it stops at its next wake-up", strerror(errno));
}

void ml_progress_events_close(void)
{
    if (ev.epoll_fd >= 0)
        close(ev.epoll_fd);
    if (ev.wake_fd >= 0)
        close(ev.wake_fd);
    ev.epoll_fd = ev.wake_fd = -1;
    ev.n_watched = 0;
}

void ml_progress_events_choose(ml_progress_spec_t *spec, char *why, size_t why_size)
{
    why[0] = '\0';
    int world, local;
    MPI_Comm node;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    PMPI_Comm_size(MPI_COMM_WORLD, &world);
    PMPI_Comm_size(node, &local);
    PMPI_Comm_free(&node);
    char reason[160];
    if (local == world)
        snprintf(reason, sizeof reason,
                 "the %d rank%s share%s one node, whose shared memory has no descriptor to wait on", world,
                 world == 1 ? "" : "s", world == 1 ? "s" : "");
    else if (ml_progress_events_open(reason, sizeof reason) >= 0)
        return;
    spec->mode = MODE_SLEEP;
    spec->interval_us = ml_progress_event_fallback_us(spec->interval_us);
    snprintf(why, why_size, "event: %s: sleep:%ld instead", reason, spec->interval_us);
}
