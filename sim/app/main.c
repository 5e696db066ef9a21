/* main.c — the epochsim command line: dispatches to subcommands (see sim/cli.c). */
#include "sim/app/cli.h"

int main(int argc, char **argv)
{
    return sim_cli_main(argc, argv);
}
