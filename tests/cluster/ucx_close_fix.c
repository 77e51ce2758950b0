/* The test cluster's nodes load this in the place of libucp (tests/cluster/cluster.sh mounts it
 * over the library there); it loads the real libucp by path, and every symbol but the two below
 * comes from that.
 *
 * Why: MPICH 4.0's MPI_Finalize over UCX closes every endpoint with ucp_disconnect_nb, a close
 * that flushes, waits until all are closed, and only then enters a PMI barrier. Over UCX's TCP
 * transport (1.13) a rank whose peer has already closed its side may need a new connection to
 * that peer to complete its flush; the peer, blocked in the barrier, never answers, and the job
 * hangs (pmodels/mpich#6596, fixed in MPICH 4.2 by entering the barrier first). Here the close is
 * a flush bounded in time; the endpoint is then left to ucp_worker_destroy, which MPICH calls
 * after the barrier. What the flush could not deliver within the bound nobody waits for: every
 * rank has completed its communication before MPI_Finalize, and the peer is in the barrier.
 *
 * Only with exactly one UCX worker (MPICH's default of one VCI): the flush progresses that
 * worker. Otherwise the close is the library's own. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>
#include <ucp/api/ucp.h>

#define FLUSH_BOUND_S 1.0

typedef ucs_status_t (*worker_create_fn)(ucp_context_h, const ucp_worker_params_t *, ucp_worker_h *);
typedef ucs_status_ptr_t (*disconnect_fn)(ucp_ep_h);

static ucp_worker_h the_worker;
static int workers;

ucs_status_t ucp_worker_create(ucp_context_h context, const ucp_worker_params_t *params, ucp_worker_h *worker_p)
{
    static worker_create_fn real;
    if (!real)
        real = (worker_create_fn)dlsym(RTLD_NEXT, "ucp_worker_create");
    ucs_status_t status = real(context, params, worker_p);
    if (status == UCS_OK) {
        the_worker = *worker_p;
        workers++;
    }
    return status;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void flushed(void *request, ucs_status_t status)
{
    (void)request;
    (void)status;
}

ucs_status_ptr_t ucp_disconnect_nb(ucp_ep_h ep)
{
    static disconnect_fn real;
    if (!real)
        real = (disconnect_fn)dlsym(RTLD_NEXT, "ucp_disconnect_nb");
    if (workers != 1)
        return real(ep);
    ucs_status_ptr_t request = ucp_ep_flush_nb(ep, 0, flushed);
    if (UCS_PTR_IS_PTR(request)) {
        double end = now_s() + FLUSH_BOUND_S;
        while (ucp_request_check_status(request) == UCS_INPROGRESS && now_s() < end)
            ucp_worker_progress(the_worker);
        ucp_request_free(request);
    }
    return UCS_OK;
}
