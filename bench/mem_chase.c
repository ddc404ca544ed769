/* The reference `dbio mem` is checked against: a dependent pointer chase over a random
 * cyclic permutation (Sattolo) of the 64-byte cache lines of a buffer, as lat_mem_rd does
 * with a stride but randomised so that prefetchers cannot help.
 *
 * Usage: mem_chase SIZE_BYTES [CPU] [REPS]
 * Prints: SIZE_BYTES NS_PER_LOAD (the median of REPS repetitions of about 1 ms each during
 * which the thread kept its CPU: one with an involuntary context switch timed the
 * scheduler, so it is retried, up to 50 × REPS attempts, after which the preempted ones
 * count too).
 *
 * Made the way dbio makes its buffers: anonymous mmap, MADV_NOHUGEPAGE (4 KiB pages), every
 * page written before the chase; the thread pinned to CPU (default 0). Build: cc -O2. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#define LINE 64

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) { /* xorshift64* */
    rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

/* Follows `n` pointers (n a multiple of 16) from `p`; returns where it stopped. */
static void **chase(void **p, uint64_t n) {
    for (uint64_t i = 0; i < n; i += 16) {
#define S p = (void **)*p;
        S S S S S S S S S S S S S S S S
#undef S
    }
    return p;
}

static long preemptions(void) {
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nivcsw;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s SIZE_BYTES [CPU] [REPS]\n", argv[0]);
        return 2;
    }
    size_t size = strtoull(argv[1], NULL, 10);
    int cpu = argc > 2 ? atoi(argv[2]) : 0;
    int reps = argc > 3 ? atoi(argv[3]) : 15;
    size_t lines = size / LINE;
    if (lines < 2 || reps < 1 || reps > 1000) { fprintf(stderr, "bad arguments\n"); return 2; }

    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) { perror("sched_setaffinity"); return 1; }

    char *buf = mmap(NULL, lines * LINE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) { perror("mmap"); return 1; }
    madvise(buf, lines * LINE, MADV_NOHUGEPAGE);
    memset(buf, 1, lines * LINE);

    /* Sattolo's algorithm: a uniformly random permutation made of one single cycle. */
    uint32_t *next = malloc(lines * sizeof *next);
    if (!next) { perror("malloc"); return 1; }
    for (size_t i = 0; i < lines; i++) next[i] = (uint32_t)i;
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = next_rand() % i;
        uint32_t t = next[i]; next[i] = next[j]; next[j] = t;
    }
    for (size_t i = 0; i < lines; i++) *(void **)(buf + i * LINE) = buf + (size_t)next[i] * LINE;
    free(next);

    /* Warm up for one lap (at most 4M loads), then size a repetition to about 1 ms. */
    void **p = (void **)buf;
    uint64_t n = 1 << 16, t0 = now_ns();
    p = chase(p, (lines + 15) / 16 * 16 < (1u << 22) ? (lines + 15) / 16 * 16 : (1u << 22));
    t0 = now_ns();
    p = chase(p, n);
    double per = (double)(now_ns() - t0) / n;
    uint64_t per_rep = (uint64_t)(1e6 / (per > 0.1 ? per : 0.1)) / 16 * 16 + 16;

    double *ns = malloc(reps * sizeof *ns), *any = malloc(reps * sizeof *any);
    int clean = 0, preempted = 0;
    for (int attempt = 0; clean < reps && attempt < 50 * reps; attempt++) {
        long sw = preemptions();
        t0 = now_ns();
        p = chase(p, per_rep);
        double v = (double)(now_ns() - t0) / per_rep;
        if (preemptions() == sw) ns[clean++] = v;
        else if (preempted < reps) any[preempted++] = v;
    }
    /* A machine too busy for clean repetitions: take what there is. */
    for (int r = 0; clean < reps && r < preempted; r++) ns[clean++] = any[r];
    reps = clean;
    qsort(ns, reps, sizeof *ns, cmp);
    /* Printing `p` keeps the chase from being optimised away. */
    printf("%zu %.3f%s\n", size, ns[reps / 2], p == NULL ? " " : "");
    return 0;
}
