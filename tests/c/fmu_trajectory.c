/*
 * fmu_trajectory.c - runs a flexfmu FMU binary (FMI 2.0 co-simulation)
 * through a torque profile and prints its trajectory, so that the same
 * program built for Linux and for Windows compares an FMU's linux64 .so with
 * its win64 .dll (run under Wine).
 *
 *   fmu_trajectory LIBRARY GUID NX NU NY DURATION STEP [VR=VALUE ...]
 *
 * Instantiates a co-simulation instance, sets the parameters given as
 * VR=VALUE, initialises at t = 0, then for each communication step STEP up
 * to DURATION sets the torques tau_j(t) = 0.4 - 0.3 t^2 / j before 1 s and
 * -0.2 + 0.1 t from 1 s on (j = 1 .. NU; plain arithmetic, no library
 * function, so both builds apply the same bits), calls fmi2DoStep and prints
 * one line: t, the NX states
 * (value references FFMU_VR_STATE + k) and the NY outputs, each with 17
 * significant digits. Exits with 1 (after a message on stderr) if a call fails.
 *
 * Build: gcc -std=c99 -Wall -Wextra -Werror -I<fmpy>/c-code fmu_trajectory.c -o fmu_trajectory -ldl
 *   or:  x86_64-w64-mingw32-gcc -std=c99 -Wall -Wextra -Werror -I<fmpy>/c-code fmu_trajectory.c
 *        -o fmu_trajectory.exe -static
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2FunctionTypes.h"
#include "../../flexfmu/targets/c/ffmu_model.h" /* value reference layout */
#include "dynlib.h"                              /* dlopen or LoadLibrary */

static void print_message(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status,
                          fmi2String category, fmi2String message, ...)
{
    (void)env;
    fprintf(stderr, "[%s] %s (status %d): %s\n", category, instance, (int)status, message);
}

static int fail(const char *what)
{
    fprintf(stderr, "fmu_trajectory: %s failed\n", what);
    return 1;
}

/* Looks up an fmi2 function; the caller casts it to its type. */
static void *function(dynlib lib, const char *name, int *missing)
{
    void *p = dynlib_symbol(lib, name);
    if (!p) {
        fprintf(stderr, "fmu_trajectory: %s is not exported\n", name);
        *missing = 1;
    }
    return p;
}

int main(int argc, char **argv)
{
    const fmi2CallbackFunctions callbacks = {print_message, calloc, free, NULL, NULL};
    fmi2InstantiateTYPE *instantiate;
    fmi2SetupExperimentTYPE *setup;
    fmi2EnterInitializationModeTYPE *enter_init;
    fmi2ExitInitializationModeTYPE *exit_init;
    fmi2SetRealTYPE *set_real;
    fmi2GetRealTYPE *get_real;
    fmi2DoStepTYPE *do_step;
    fmi2FreeInstanceTYPE *free_instance;
    fmi2ValueReference *vr, parameter;
    fmi2Component c;
    dynlib lib;
    double duration, step, t, value, *values, *torque;
    int nx, nu, ny, i, j, k, n_steps, missing = 0;
    char *equals;

    if (argc < 8) {
        fprintf(stderr, "usage: fmu_trajectory LIBRARY GUID NX NU NY DURATION STEP [VR=VALUE ...]\n");
        return 2;
    }
    nx = atoi(argv[3]);
    nu = atoi(argv[4]);
    ny = atoi(argv[5]);
    duration = atof(argv[6]);
    step = atof(argv[7]);
    lib = dynlib_open(argv[1]);
    if (!lib) {
        fprintf(stderr, "fmu_trajectory: cannot load %s: %s\n", argv[1], dynlib_error());
        return 1;
    }
    instantiate = (fmi2InstantiateTYPE *)function(lib, "fmi2Instantiate", &missing);
    setup = (fmi2SetupExperimentTYPE *)function(lib, "fmi2SetupExperiment", &missing);
    enter_init = (fmi2EnterInitializationModeTYPE *)function(lib, "fmi2EnterInitializationMode", &missing);
    exit_init = (fmi2ExitInitializationModeTYPE *)function(lib, "fmi2ExitInitializationMode", &missing);
    set_real = (fmi2SetRealTYPE *)function(lib, "fmi2SetReal", &missing);
    get_real = (fmi2GetRealTYPE *)function(lib, "fmi2GetReal", &missing);
    do_step = (fmi2DoStepTYPE *)function(lib, "fmi2DoStep", &missing);
    free_instance = (fmi2FreeInstanceTYPE *)function(lib, "fmi2FreeInstance", &missing);
    if (missing) return 1;

    c = instantiate("trajectory", fmi2CoSimulation, argv[2], "", &callbacks, fmi2False, fmi2False);
    if (!c) return fail("fmi2Instantiate");
    if (setup(c, fmi2False, 0.0, 0.0, fmi2False, 0.0) != fmi2OK) return fail("fmi2SetupExperiment");
    for (i = 8; i < argc; ++i) {
        equals = strchr(argv[i], '=');
        if (!equals) return fail("parsing VR=VALUE");
        parameter = (fmi2ValueReference)strtoul(argv[i], NULL, 10);
        value = atof(equals + 1);
        if (set_real(c, &parameter, 1, &value) != fmi2OK) return fail("fmi2SetReal of a parameter");
    }
    if (enter_init(c) != fmi2OK || exit_init(c) != fmi2OK) return fail("initialization");

    vr = (fmi2ValueReference *)calloc((size_t)(nx + ny + nu) + 1, sizeof *vr);
    values = (double *)calloc((size_t)(nx + ny) + 1, sizeof *values);
    torque = (double *)calloc((size_t)nu + 1, sizeof *torque);
    if (!vr || !values || !torque) return fail("allocation");
    for (k = 0; k < nx; ++k) vr[k] = FFMU_VR_STATE + k;
    for (k = 0; k < ny; ++k) vr[nx + k] = FFMU_VR_OUTPUT + k;
    for (k = 0; k < nu; ++k) vr[nx + ny + k] = FFMU_VR_INPUT + k;

    n_steps = (int)(duration / step + 0.5);
    for (i = 0; i < n_steps; ++i) {
        t = i * step;
        for (j = 0; j < nu; ++j) torque[j] = t < 1.0 ? 0.4 - 0.3 * t * t / (j + 1) : -0.2 + 0.1 * t;
        if (set_real(c, vr + nx + ny, (size_t)nu, torque) != fmi2OK) return fail("fmi2SetReal of the torques");
        if (do_step(c, t, step, fmi2True) != fmi2OK) return fail("fmi2DoStep");
        if (get_real(c, vr, (size_t)(nx + ny), values) != fmi2OK) return fail("fmi2GetReal");
        printf("%.17g", t + step);
        for (k = 0; k < nx + ny; ++k) printf(" %.17g", values[k]);
        printf("\n");
    }
    free_instance(c);
    dynlib_close(lib);
    free(vr);
    free(values);
    free(torque);
    return 0;
}
