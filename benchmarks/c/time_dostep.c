/*
 * time_dostep LIBRARY GUID STEP COUNT REPEATS INPUTS
 *
 * Loads an FMI 2.0 co-simulation binary, instantiates it, and times COUNT
 * calls of fmi2DoStep of size STEP, REPEATS times; prints the median and the
 * minimum nanoseconds per call. As a controller would, it sets the INPUTS
 * torques (value references FFMU_VR_INPUT + j) before every step: the
 * holding torques the FMU starts with plus a slow sine that keeps the arm
 * moving. The instance starts again every RESTART steps (outside the timed
 * blocks), so an arm whose rest is unstable never gets far from it
 * (Canadarm2 in 1 g grows at about 213 1/s: a factor 5,000 in 40 steps,
 * where a 78 ms run diverges). Measured from C so that no Python loop is in the figure
 * (flexfmu benchmarks/fmu.py).
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ffmu_model.h"
#include "fmi2Functions.h"
#include "timing.h"

#define MAX_INPUTS 64
#define RESTART 40

static void quiet_logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status, fmi2String category,
                         fmi2String message, ...) {
    (void)env; (void)name; (void)category;
    if (status >= fmi2Error) fprintf(stderr, "%s\n", message);  /* the FMU's reason for a failed step */
}

static void *allocate(size_t n, size_t size) { return calloc(n, size); }

#define LOAD(name) name##TYPE *name = (name##TYPE *)dlsym(lib, #name); if (!name) { fprintf(stderr, "missing %s\n", #name); return 2; }

int main(int argc, char **argv) {
    if (argc != 7 || atoi(argv[6]) < 0 || atoi(argv[6]) > MAX_INPUTS) {
        fprintf(stderr, "usage: %s LIBRARY GUID STEP COUNT REPEATS INPUTS (at most %d)\n", argv[0], MAX_INPUTS);
        return 2;
    }
    double step = atof(argv[3]);
    int count = atoi(argv[4]), repeats = atoi(argv[5]), inputs = atoi(argv[6]);
    fmi2ValueReference input_vr[MAX_INPUTS];
    double torque[MAX_INPUTS];
    for (int j = 0; j < inputs; ++j) input_vr[j] = FFMU_VR_INPUT + (fmi2ValueReference)j;
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 2; }
    LOAD(fmi2Instantiate) LOAD(fmi2SetupExperiment) LOAD(fmi2EnterInitializationMode)
    LOAD(fmi2ExitInitializationMode) LOAD(fmi2DoStep) LOAD(fmi2FreeInstance) LOAD(fmi2Reset) LOAD(fmi2SetReal)
    LOAD(fmi2GetReal)
    fmi2CallbackFunctions callbacks = {quiet_logger, allocate, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate("bench", fmi2CoSimulation, argv[2], "", &callbacks,
                                     fmi2False, fmi2False);
    if (!c) { fprintf(stderr, "instantiate failed\n"); return 2; }
    double *per_call = calloc((size_t)repeats, sizeof(double));
    double holding[MAX_INPUTS];
    for (int r = 0; r < repeats; ++r) {
        double spent = 0.0, start = 0.0;
        for (int k = 0; k < count; ++k) {
            if (k % RESTART == 0) {
                if (k > 0) spent += now_ns() - start;
                fmi2Reset(c);
                fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2False, 0.0);
                fmi2EnterInitializationMode(c);
                fmi2ExitInitializationMode(c);
                if (fmi2GetReal(c, input_vr, (size_t)inputs, holding) != fmi2OK) { fprintf(stderr, "getReal failed\n"); return 2; }
                start = now_ns();
            }
            double t = (k % RESTART) * step;
            for (int j = 0; j < inputs; ++j) torque[j] = holding[j] + 0.2 * sin(6.0 * t + j);
            if (fmi2SetReal(c, input_vr, (size_t)inputs, torque) != fmi2OK) { fprintf(stderr, "setReal failed\n"); return 2; }
            if (fmi2DoStep(c, t, step, fmi2True) != fmi2OK) { fprintf(stderr, "doStep failed at step %d (t = %g s after a start)\n", k, t); return 2; }
        }
        spent += now_ns() - start;
        per_call[r] = spent / count;
    }
    qsort(per_call, (size_t)repeats, sizeof(double), compare);
    printf("%.1f %.1f\n", per_call[repeats / 2], per_call[0]);
    fmi2FreeInstance(c);
    free(per_call);
    dlclose(lib);
    return 0;
}
