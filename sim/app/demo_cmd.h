/* demo_cmd.h — `epochsim demo`: the classroom demos (sim/app/demo.h).
 *   epochsim demo list
 *   epochsim demo NAME [--plot FILE] [--catalog DIR]
 * `list` names each demo with its lesson; NAME runs the demo's experiment before and after its
 * change and prints the figures side by side, both verdicts and one sentence of explanation;
 * --plot draws the two runs' epoch time and GPU-Util. A study (the batch-size sweep) prints a row
 * per value instead, and --plot draws its samples/s and GPU-Util curves. */
#ifndef SIM_DEMO_CMD_H
#define SIM_DEMO_CMD_H

/* argv[0] is "demo"; returns 0 ok, 1 simulation or file error, 2 usage error. */
int sim_demo_cmd(int argc, char **argv);

#endif
