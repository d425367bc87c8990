/* Clock and median helpers shared by the benchmark drivers. */
#ifndef FLEXFMU_BENCH_TIMING_H
#define FLEXFMU_BENCH_TIMING_H

#include <time.h>

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

/* qsort comparison of doubles, for medians */
static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
