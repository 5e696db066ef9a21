/* bench_machine.h — the line a benchmark prints first: the CPU model, the cores online and the
 * load average, so that a quoted figure names the machine and how busy it was. Used by
 * bench_compare and bench_import. */
#ifndef BENCH_MACHINE_H
#define BENCH_MACHINE_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static inline void bench_print_machine(void)
{
    char line[512], model[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
            model[strcspn(model, "\n")] = 0;
            break;
        }
    if (f) fclose(f);
    double load[3] = {0};
    f = fopen("/proc/loadavg", "r");
    if (f && fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
    if (f) fclose(f);
    printf("machine: %s, %ld cores online, load average %.2f %.2f %.2f\n", model,
           sysconf(_SC_NPROCESSORS_ONLN), load[0], load[1], load[2]);
}

#endif
