/* The baseline dbio is measured against: a bare loop of random O_DIRECT preads that times
 * nothing. Usage: pread_loop FILE BLOCK_SIZE SECONDS. Prints reads per second and the CPU
 * time (user + system) per read in ns. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s FILE BLOCK_SIZE SECONDS\n", argv[0]);
        return 2;
    }
    size_t bs = strtoul(argv[2], NULL, 10);
    double seconds = atof(argv[3]);
    int fd = open(argv[1], O_RDONLY | O_DIRECT);
    if (fd < 0) { perror("open"); return 1; }
    struct stat st;
    fstat(fd, &st);
    uint64_t blocks = st.st_size / bs;
    void *buf;
    if (posix_memalign(&buf, 4096, bs)) return 1;
    uint64_t x = 88172645463325252ull, n = 0;
    double start = now(), end = start + seconds;
    for (;;) {
        /* Check the clock every 4096 reads only: the loop itself times nothing. */
        for (int i = 0; i < 4096; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            if (pread(fd, buf, bs, (off_t)((x % blocks) * bs)) != (ssize_t)bs) { perror("pread"); return 1; }
        }
        n += 4096;
        if (now() >= end) break;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    printf("%.0f %.1f\n", n / (now() - start), cpu / n * 1e9);
    return 0;
}
