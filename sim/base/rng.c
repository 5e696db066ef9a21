/* rng.c — MT19937 with GSL's seeding and draws (see rng.h). The state is regenerated 624 words
 * at a time, out of line; a draw is then a load and the tempering, inlined into the two draws
 * the loader makes, where GSL calls through its generator table once per word. */
#include "sim/base/rng.h"

#include "sim/base/err.h"

#include <math.h>

#define SHIFT 397 /* the twist's middle word: word k is made from words k, k + 1 and k + SHIFT */
#define UPPER 0x80000000u
#define LOWER 0x7fffffffu
#define TWIST 0x9908b0dfu

void sim_rng_seed(sim_rng *r, uint64_t seed)
{
    if (seed == 0) seed = 4357; /* before the mask, as GSL: 2^32 seeds with 0 */
    r->mt[0] = (uint32_t)seed;
    for (uint32_t i = 1; i < SIM_RNG_WORDS; i++)
        r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + i;
    r->next = SIM_RNG_WORDS;
}

static uint32_t twist(uint32_t upper_of, uint32_t lower_of, uint32_t far)
{
    uint32_t y = (upper_of & UPPER) | (lower_of & LOWER);
    return far ^ (y >> 1) ^ (y & 1 ? TWIST : 0);
}

/* The next 624 words, each from the new words before it and the old ones after it. Out of line,
 * so that the draws, which call it once in 624, inline only the tempering. */
__attribute__((noinline)) static void regenerate(sim_rng *r)
{
    uint32_t *mt = r->mt;
    int k = 0;
    for (; k < SIM_RNG_WORDS - SHIFT; k++)
        mt[k] = twist(mt[k], mt[k + 1], mt[k + SHIFT]);
    for (; k < SIM_RNG_WORDS - 1; k++)
        mt[k] = twist(mt[k], mt[k + 1], mt[k + SHIFT - SIM_RNG_WORDS]);
    mt[k] = twist(mt[k], mt[0], mt[SHIFT - 1]);
    r->next = 0;
}

static inline uint32_t next_word(sim_rng *r)
{
    if (r->next >= SIM_RNG_WORDS) regenerate(r);
    uint32_t y = r->mt[r->next++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

uint32_t sim_rng_get(sim_rng *r)
{
    return next_word(r);
}

static double uniform(sim_rng *r)
{
    return next_word(r) / 4294967296.0;
}

uint32_t sim_rng_uniform_int(sim_rng *r, uint32_t n)
{
    SIM_ASSERT(n >= 1);
    uint32_t scale = UINT32_MAX / n, k;
    do
        k = next_word(r) / scale;
    while (k >= n);
    return k;
}

double sim_rng_lognormal(sim_rng *r, double zeta, double sigma)
{
    double u, v, r2;
    do {
        u = -1 + 2 * uniform(r);
        v = -1 + 2 * uniform(r);
        r2 = u * u + v * v;
    } while (r2 > 1.0 || r2 == 0);
    double normal = u * sqrt(-2.0 * log(r2) / r2);
    return exp(sigma * normal + zeta);
}
