/* validate_cmd.h — the `epochsim validate` subcommand (the public accuracy table). */
#ifndef SIM_VALIDATE_CMD_H
#define SIM_VALIDATE_CMD_H

int sim_validate_cmd(int argc, char **argv);

#endif
