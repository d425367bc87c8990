/*
 * time_dostep LIBRARY GUID STEP COUNT REPEATS INPUTS
 *
 * Loads an FMI 2.0 co-simulation binary, instantiates it, and times COUNT
 * calls of fmi2DoStep of size STEP, REPEATS times; prints the median and the
 * minimum nanoseconds per call. As a controller would, it sets the INPUTS
 * torques (value references FFMU_VR_INPUT + j) before every step, to a
 * slow sine that keeps the arm moving. Measured from C so that no Python
 * loop is in the figure (flexfmu benchmarks/fmu.py).
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

static void quiet_logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status, fmi2String category,
                         fmi2String message, ...) {
    (void)env; (void)name; (void)status; (void)category; (void)message;
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
    fmi2CallbackFunctions callbacks = {quiet_logger, allocate, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate("bench", fmi2CoSimulation, argv[2], "", &callbacks,
                                     fmi2False, fmi2False);
    if (!c) { fprintf(stderr, "instantiate failed\n"); return 2; }
    double *per_call = calloc((size_t)repeats, sizeof(double));
    for (int r = 0; r < repeats; ++r) {
        fmi2Reset(c);
        fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2False, 0.0);
        fmi2EnterInitializationMode(c);
        fmi2ExitInitializationMode(c);
        double start = now_ns();
        for (int k = 0; k < count; ++k) {
            for (int j = 0; j < inputs; ++j) torque[j] = 0.2 * sin(6.0 * k * step + j);
            if (fmi2SetReal(c, input_vr, (size_t)inputs, torque) != fmi2OK) { fprintf(stderr, "setReal failed\n"); return 2; }
            if (fmi2DoStep(c, k * step, step, fmi2True) != fmi2OK) { fprintf(stderr, "doStep failed\n"); return 2; }
        }
        per_call[r] = (now_ns() - start) / count;
    }
    qsort(per_call, (size_t)repeats, sizeof(double), compare);
    printf("%.1f %.1f\n", per_call[repeats / 2], per_call[0]);
    fmi2FreeInstance(c);
    free(per_call);
    dlclose(lib);
    return 0;
}
