/* rng.h — the loader's random numbers: the Mersenne Twister MT19937 (Matsumoto and Nishimura,
 * 1998) seeded as GSL's gsl_rng_mt19937 is, with GSL's uniform, uniform-integer and lognormal
 * draws (gsl_rng_uniform, gsl_rng_uniform_int, gsl_ran_lognormal): the same numbers bit for bit,
 * made without a call through GSL's generator table per 32-bit word. tests/base/test_rng.c holds
 * it to GSL. A generator is a plain value: copying the struct copies the stream. */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stdint.h>

#define SIM_RNG_WORDS 624

typedef struct sim_rng {
    uint32_t mt[SIM_RNG_WORDS]; /* the state */
    int next;                   /* the next word to temper; SIM_RNG_WORDS: regenerate first */
} sim_rng;

/* Seeds as gsl_rng_set does (a seed of 0 is taken as 4357; only the low 32 bits count). */
void sim_rng_seed(sim_rng *r, uint64_t seed);

/* The next 32-bit word, as GSL's mt19937 gives it. */
uint32_t sim_rng_get(sim_rng *r);

/* gsl_rng_uniform_int: a whole number in [0, n), 1 <= n <= 2^32 - 1, by GSL's rejection. */
uint32_t sim_rng_uniform_int(sim_rng *r, uint32_t n);

/* gsl_ran_lognormal: exp(zeta + sigma x N(0, 1)), the normal by the polar Box-Muller method. */
double sim_rng_lognormal(sim_rng *r, double zeta, double sigma);

#endif
