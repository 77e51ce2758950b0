/* Large counts refused by a layer that works on int counts (large_count.h). */
#include "large_count.h"

#include <stdarg.h>

#include "layer_say.h"

#if MPI_VERSION >= 4
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ml_layer_vsay(ml_layer_name, 0, fmt, ap);
    va_end(ap);
}

static void say_once(const char *function)
{
    static int said;
    if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        say("%s with a count above INT_MAX: the layer passes counts on as int and refuses larger "
            "ones (MPI_ERR_COUNT)",
            function);
}

int ml_count_refused_comm(const char *function, MPI_Comm comm)
{
    say_once(function);
    PMPI_Comm_call_errhandler(comm, MPI_ERR_COUNT);
    return MPI_ERR_COUNT;
}

int ml_count_refused_win(const char *function, MPI_Win win)
{
    say_once(function);
    PMPI_Win_call_errhandler(win, MPI_ERR_COUNT);
    return MPI_ERR_COUNT;
}
#endif
