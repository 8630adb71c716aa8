/* fnprof ranks: one row per function over the profiles of an MPI program's ranks. */
#include "cli.h"

int fnp_cmd_ranks(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fnp_cli_error("ranks", "not built yet");
    return FNP_EXIT_FAILURE;
}
