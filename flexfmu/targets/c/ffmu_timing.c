/*
 * ffmu_timing COUNT SECONDS STEP
 *
 * Times the FMU's own co-simulation step on the machine that exports it
 * (flexfmu.targets.timing links this driver with the FMU's compiled
 * instance and model code, no FMI glue): an instance at its start values,
 * inputs untouched, then doSteps of STEP s, each timed alone, until COUNT
 * steps or SECONDS s have passed (at least 20 steps). Every RESTART steps
 * the instance starts again (untimed): a fixed-step FMU costs the same in
 * every state, and an arm whose rest is unstable (a tall arm in gravity
 * under constant torques) stays near it. Prints "steps median_ns worst_ns"
 * on one line, or the failing step's message.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ffmu_instance.h"
#include "ffmu_model.h"

static void report(const ffmu_host *host, const char *instance_name, ffmu_status status, const char *category,
                   const char *message)
{
    (void)host; (void)instance_name; (void)category;
    if (status >= FFMU_ERROR) fprintf(stderr, "%s\n", message);
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define RESTART 100

static ffmu_instance *started(ffmu_host *host)
{
    ffmu_instance *in = ffmu_instantiate(host, "timing", "timing", FFMU_CO_SIMULATION, FFMU_MODEL.guid, 0);
    if (!in) return NULL;
    if (!ffmu_setup_experiment(in, "timing", 0.0, 0, 0.0) || !ffmu_check_start(in, "timing")) {
        ffmu_free(in);
        return NULL;
    }
    in->run.state = FFMU_ST_STEP;
    return in;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s COUNT SECONDS STEP\n", argv[0]);
        return 2;
    }
    long count = atol(argv[1]);
    double budget = atof(argv[2]), step = atof(argv[3]);
    ffmu_host host = {calloc, free, report, NULL, NULL};
    ffmu_instance *in = started(&host);
    if (!in) return 1;
    double *cost = calloc((size_t)count, sizeof(double));
    if (!cost) return 1;
    double start = seconds();
    long k = 0;
    for (; k < count && (k < 20 || seconds() - start < budget); ++k) {
        if (k > 0 && k % RESTART == 0) {
            ffmu_free(in);
            if (!(in = started(&host))) return 1;
        }
        double before = seconds();
        if (!ffmu_do_step(in, "timing", (double)(k % RESTART) * step, step)) return 1;
        cost[k] = seconds() - before;
    }
    qsort(cost, (size_t)k, sizeof(double), by_value);
    printf("%ld %.1f %.1f\n", k, 1e9 * cost[k / 2], 1e9 * cost[k - 1]);
    free(cost);
    ffmu_free(in);
    return 0;
}
