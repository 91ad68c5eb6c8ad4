/* exec_local.c: the local executor (--executor local, the default): a
 * worker process per attempt on this machine, events over a pipe; the
 * functions of supervise.c, unchanged, behind the executor table. */
#include "orchestrator/daemon.h"

void orc_executor_local(orc_executor *x)
{
    *x = (orc_executor){
        .name = "local",
        .start = orc_run_start,
        .signal = orc_run_signal,
        .stop = orc_run_stop,
        .tick_run = orc_run_tick,
        .close = orc_run_close,
    };
}
