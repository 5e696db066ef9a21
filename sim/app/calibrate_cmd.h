/* calibrate_cmd.h — `epochsim calibrate`: fits a GPU's catalog fields to kernels recorded on it
 * and writes a catalog overlay that `run` and `sweep` take (system.catalog_overlay). */
#ifndef SIM_CALIBRATE_CMD_H
#define SIM_CALIBRATE_CMD_H

int sim_calibrate_cmd(int argc, char **argv);

#endif
