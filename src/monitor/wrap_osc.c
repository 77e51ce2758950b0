/* One-sided operations (docs/monitor.md, "One-sided"): each is one message from the origin to the
 * target, counted when it is issued, of the size of the data accessed at the target: written for
 * a Put or an accumulate, read for a Get (the bytes travel the other way, but the origin is the
 * process that asked). The target's arguments describe that data in every operation, whatever
 * the origin's buffers hold (a Get_accumulate with MPI_NO_OP has no origin data at all). */
#include "monitor.h"
#include "next.h"

static void accessed(MPI_Win win, int target, int count, MPI_Datatype type)
{
    if (ml_recording())
        ml_record_win(win, target, ml_bytes(count, type));
}

int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    accessed(win, target_rank, target_count, target_datatype);
    ML_FORWARD(MPI_Put, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
               target_datatype, win);
}

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    accessed(win, target_rank, target_count, target_datatype);
    ML_FORWARD(MPI_Get, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
               target_datatype, win);
}

int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    accessed(win, target_rank, target_count, target_datatype);
    ML_FORWARD(MPI_Accumulate, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
               target_datatype, op, win);
}

int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                       int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                       int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    accessed(win, target_rank, target_count, target_datatype);
    ML_FORWARD(MPI_Get_accumulate, origin_addr, origin_count, origin_datatype, result_addr, result_count,
               result_datatype, target_rank, target_disp, target_count, target_datatype, op, win);
}

/* Fetch_and_op and Compare_and_swap access one element of datatype at the target. */
int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                     MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    accessed(win, target_rank, 1, datatype);
    ML_FORWARD(MPI_Fetch_and_op, origin_addr, result_addr, datatype, target_rank, target_disp, op, win);
}

int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype,
                         int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    accessed(win, target_rank, 1, datatype);
    ML_FORWARD(MPI_Compare_and_swap, origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win);
}

/* ---- request-based forms --------------------------------------------------------------------- */

int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    accessed(win, target_rank, target_count, target_datatype);
    ML_FORWARD(MPI_Rput, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
               target_datatype, win, request);
}

int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    accessed(win, target_rank, target_count, target_datatype);
    ML_FORWARD(MPI_Rget, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
               target_datatype, win, request);
}

int MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                    MPI_Request *request)
{
    accessed(win, target_rank, target_count, target_datatype);
    ML_FORWARD(MPI_Raccumulate, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
               target_datatype, op, win, request);
}

int MPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    accessed(win, target_rank, target_count, target_datatype);
    ML_FORWARD(MPI_Rget_accumulate, origin_addr, origin_count, origin_datatype, result_addr, result_count,
               result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request);
}
