/*
 * spinup_fmu LIBRARY GUID STEP DURATION W0 RAMP INPUT_VR OUTPUT_VR REPEATS
 *
 * Paper 001's spin-up through an FMI 2.0 co-simulation binary, driven from
 * C: at every communication step of STEP seconds it sets the prescribed
 * hub angle, rate and acceleration (value references INPUT_VR, +1, +2) from
 * the spin-up profile to W0 rad/s in RAMP s, calls fmi2DoStep and reads the
 * output OUTPUT_VR (the tip deflection), for DURATION seconds, REPEATS
 * times. Prints the minimum of the output, its time, and the median and
 * minimum wall time of one whole run in seconds (flexfmu benchmarks/spinup.py).
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fmi2Functions.h"
#include "timing.h"

static void quiet_logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status, fmi2String category,
                         fmi2String message, ...) {
    (void)env; (void)name; (void)status; (void)category; (void)message;
}

static void *allocate(size_t n, size_t size) { return calloc(n, size); }

/* theta, its rate and acceleration of the spin-up profile at t */
static void profile(double t, double w0, double ramp, double out[3]) {
    const double pi = 3.14159265358979323846, w = 2.0 * pi / ramp;
    if (t < ramp) {
        out[0] = w0 / ramp * (t * t / 2.0 + (cos(w * t) - 1.0) / (w * w));
        out[1] = w0 / ramp * (t - sin(w * t) / w);
        out[2] = w0 / ramp * (1.0 - cos(w * t));
    } else {
        out[0] = w0 * (t - ramp / 2.0);
        out[1] = w0;
        out[2] = 0.0;
    }
}

#define LOAD(name) name##TYPE *name = (name##TYPE *)dlsym(lib, #name); if (!name) { fprintf(stderr, "missing %s\n", #name); return 2; }

int main(int argc, char **argv) {
    if (argc != 10) {
        fprintf(stderr, "usage: %s LIBRARY GUID STEP DURATION W0 RAMP INPUT_VR OUTPUT_VR REPEATS\n", argv[0]);
        return 2;
    }
    double step = atof(argv[3]), duration = atof(argv[4]), w0 = atof(argv[5]), ramp = atof(argv[6]);
    fmi2ValueReference inputs[3], output = (fmi2ValueReference)atol(argv[8]);
    int repeats = atoi(argv[9]), count = (int)floor(duration / step + 0.5);
    for (int j = 0; j < 3; ++j) inputs[j] = (fmi2ValueReference)atol(argv[7]) + (fmi2ValueReference)j;
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 2; }
    LOAD(fmi2Instantiate) LOAD(fmi2SetupExperiment) LOAD(fmi2EnterInitializationMode)
    LOAD(fmi2ExitInitializationMode) LOAD(fmi2DoStep) LOAD(fmi2FreeInstance) LOAD(fmi2Reset) LOAD(fmi2SetReal)
    LOAD(fmi2GetReal)
    fmi2CallbackFunctions callbacks = {quiet_logger, allocate, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate("spinup", fmi2CoSimulation, argv[2], "", &callbacks, fmi2False, fmi2False);
    if (!c) { fprintf(stderr, "instantiate failed\n"); return 2; }
    double *wall = calloc((size_t)repeats, sizeof(double)), lowest = 0.0, when = 0.0;
    for (int r = 0; r < repeats; ++r) {
        double start = now_ns(), motion[3], y;
        fmi2Reset(c);
        fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2False, 0.0);
        fmi2EnterInitializationMode(c);
        fmi2ExitInitializationMode(c);
        lowest = 0.0;
        for (int k = 0; k <= count; ++k) {
            profile(k * step, w0, ramp, motion);
            if (fmi2SetReal(c, inputs, 3, motion) != fmi2OK) { fprintf(stderr, "setReal failed\n"); return 2; }
            if (fmi2GetReal(c, &output, 1, &y) != fmi2OK) { fprintf(stderr, "getReal failed\n"); return 2; }
            if (y < lowest) { lowest = y; when = k * step; }
            if (k < count && fmi2DoStep(c, k * step, step, fmi2True) != fmi2OK) {
                fprintf(stderr, "doStep failed\n");
                return 2;
            }
        }
        wall[r] = (now_ns() - start) * 1e-9;
    }
    qsort(wall, (size_t)repeats, sizeof(double), compare);
    printf("%.9f %.6f %.6e %.6e\n", lowest, when, wall[repeats / 2], wall[0]);
    fmi2FreeInstance(c);
    free(wall);
    dlclose(lib);
    return 0;
}
