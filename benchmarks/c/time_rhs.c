/*
 * time_rhs COUNT REPEATS: nanoseconds per call of the generated right-hand
 * side ffmu_derivatives at x = 0, linked directly against an FMU's
 * sources/model_functions.c (flexfmu benchmarks/fmu.py).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "model_functions.h"
#include "timing.h"

int main(int argc, char **argv) {
    int count = argc > 1 ? atoi(argv[1]) : 100000, repeats = argc > 2 ? atoi(argv[2]) : 7;
    int sz_arg, sz_res, sz_iw, sz_w;
    ffmu_derivatives_work(&sz_arg, &sz_res, &sz_iw, &sz_w);
    const double **arg = calloc((size_t)sz_arg, sizeof(double *));
    double **res = calloc((size_t)sz_res, sizeof(double *));
    int *iw = calloc((size_t)sz_iw + 1, sizeof(int));
    double *w = calloc((size_t)sz_w + 1, sizeof(double));
    double *x = calloc(1000, sizeof(double)), *u = calloc(100, sizeof(double)), *p = calloc(1000, sizeof(double));
    double *xdot = calloc(1000, sizeof(double));
    for (int k = 0; k < 1000; ++k) p[k] = 1.0;  /* positive masses and lengths */
    arg[0] = x; arg[1] = u; arg[2] = p; res[0] = xdot;
    double *per_call = calloc((size_t)repeats, sizeof(double)), sink = 0;
    for (int r = 0; r < repeats; ++r) {
        double start = now_ns();
        for (int k = 0; k < count; ++k) { ffmu_derivatives(arg, res, iw, w, 0); sink += xdot[0]; }
        per_call[r] = (now_ns() - start) / count;
    }
    qsort(per_call, (size_t)repeats, sizeof(double), compare);
    printf("%.1f %.1f %g\n", per_call[repeats / 2], per_call[0], sink * 0);
    return 0;
}
