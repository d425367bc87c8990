/*
 * ffmu_matlab.h - what the MATLAB glue (the S-function and the MEX gateway)
 * needs beside the per-model contract ffmu_model.h: units for 'info', the
 * default sample time, and the mass matrix M(q, p), which the FMU does not
 * use. Generated per model as matlab_data.c and model_mass_matrix.c by
 * `flexfmu export --target sfunction`.
 */
#ifndef FFMU_MATLAB_H
#define FFMU_MATLAB_H

#include "ffmu_model.h"

typedef struct {
    const char *const *parameter_units; /* np */
    const char *const *state_units;     /* nx */
    const char *const *input_units;     /* nu */
    const char *const *output_units;    /* ny */
    double sample_time;                 /* the export's communication step (s) */
    /* mass_matrix: (q[nq], p[np]) -> (M[nq*nq], column-major, dense) */
    ffmu_function mass_matrix;
} ffmu_matlab_data;

/* Defined in the generated matlab_data.c. */
extern const ffmu_matlab_data FFMU_MATLAB;

#endif
