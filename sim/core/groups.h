/* groups.h — each group's part of a shared resource's busy time (several jobs on one server).
 * The server keeps one running figure, `share`: the integral over time of what ONE of its n
 * active requests is owed of the busy measure (busy units / n). A group with k requests active
 * owes k times its change, so a group's integral is brought up to date only when its own count
 * changes: O(1) per arrival or departure, whatever the number of groups, and the groups'
 * integrals add up to the server's busy integral. */
#ifndef SIM_GROUPS_H
#define SIM_GROUPS_H

typedef struct sim_group_part {
    int active;      /* the group's requests in service now */
    double integral; /* its part of the busy integral up to `mark` */
    double mark;     /* the server's share when the count last changed */
} sim_group_part;

typedef struct sim_groups {
    int n; /* 0: not counted (one job alone has the whole server) */
    sim_group_part *part;
} sim_groups;

/* Counts n groups (0 .. n-1). Returns 0 or SIM_ENOMEM. */
int sim_groups_init(sim_groups *g, int n);
void sim_groups_free(sim_groups *g);
/* A request of `group` arrives (delta +1) or leaves (-1) when the server's share is `share`. */
void sim_groups_change(sim_groups *g, int group, int delta, double share);
/* The group's part of the busy integral when the server's share is `share`. */
double sim_groups_integral(const sim_groups *g, int group, double share);

#endif
