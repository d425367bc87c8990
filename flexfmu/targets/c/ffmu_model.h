/*
 * ffmu_model.h - the contract between flexfmu's generic instance code and the
 * per-model code that flexfmu generates for each arm.
 *
 * The instance code (ffmu_instance.c) and the interface glues (fmi2_glue.c,
 * ...) know nothing about robots; the generated model_data.c knows the arm's
 * sizes, names and start values and points at the five CasADi-generated
 * functions in model_functions.c. None of them is
 * edited by hand per model. All data here is constant: instances keep their
 * own state and work arrays, so any number of instances can run in parallel
 * threads.
 *
 * States are x = [q; qd] (nx = 2 nq), q the coordinates that are states (the
 * angle of a prescribed joint is an input, with its rate and acceleration).
 * A sampled system (a plant with its controller, flexfmu/targets/loop.py)
 * appends nd discrete states: x = [q; qd; d], nx = 2 nq + nd. They change
 * only in the step function (one controller sample per internal step) and
 * are constant in between, so their derivatives are zero; a plant has nd = 0.
 * Value references are fixed by category
 * (FFMU_VR_BLOCK apart) and index, so they are stable across rebuilds:
 *   parameter k        FFMU_VR_PARAMETER    + k   (k = 0 .. np-1)
 *   state k            FFMU_VR_STATE        + k   (k = 0 .. nx-1)
 *   acceleration k     FFMU_VR_ACCELERATION + k   (der(qd_k), k = 0 .. nq-1)
 *   input k            FFMU_VR_INPUT        + k   (k = 0 .. nu-1)
 *   output k           FFMU_VR_OUTPUT       + k   (k = 0 .. ny-1)
 * The derivative of state k < nq is state nq + k; of state nq + k it is
 * acceleration k.
 */
#ifndef FFMU_MODEL_H
#define FFMU_MODEL_H

#define FFMU_VR_BLOCK 100000
#define FFMU_VR_PARAMETER (1 * FFMU_VR_BLOCK)
#define FFMU_VR_STATE (2 * FFMU_VR_BLOCK)
#define FFMU_VR_ACCELERATION (3 * FFMU_VR_BLOCK)
#define FFMU_VR_INPUT (4 * FFMU_VR_BLOCK)
#define FFMU_VR_OUTPUT (5 * FFMU_VR_BLOCK)

/* casadi_int of the generated code (CodeGenerator option casadi_int="int") */
typedef int ffmu_int;

/* A CasADi-generated function: evaluation and its work-array sizes. */
typedef int (*ffmu_eval)(const double **arg, double **res, ffmu_int *iw, double *w, int mem);
typedef int (*ffmu_work)(ffmu_int *sz_arg, ffmu_int *sz_res, ffmu_int *sz_iw, ffmu_int *sz_w);

typedef struct {
    ffmu_eval eval;
    ffmu_work work;
} ffmu_function;

enum { FFMU_RK4 = 0, FFMU_IMPLICIT_MIDPOINT = 1, FFMU_ROSENBROCK = 2 };

typedef struct {
    const char *model_name;      /* the arm's name */
    const char *guid;            /* must equal the modelDescription's guid */
    int nq, nx, nu, ny, np;      /* coordinates, states (2 nq), inputs, outputs, parameters */
    int nc;                      /* constants computed from the parameters */

    const double *parameter_start;   /* np nominal values */
    const int *parameter_tunable;    /* np flags: 1 tunable, 0 fixed (set before initialization only) */
    const double *state_start;       /* nx start values of x: the arm at rest at its start pose */
    const double *input_start;       /* nu start values of u: what holds it there (flexfmu.dynamics.equilibrium) */
    const char *const *parameter_names; /* np, for messages */
    const char *const *state_names;     /* nx */
    const char *const *input_names;     /* nu */
    const char *const *output_names;    /* ny */

    int integrator;              /* FFMU_RK4, FFMU_IMPLICIT_MIDPOINT or FFMU_ROSENBROCK */
    double internal_step;        /* fixed internal step h of co-simulation (s) */

    /* constants:   (p[np]) -> (c[nc])   parameter-only parts of the model, hoisted
     *              out of the functions below; evaluated again when p changes.
     * The other functions take pc = [p; c] (np + nc values) as third argument:
     * step:        (x[nx], u[nu], pc, h[1]) -> (x_next[nx])   one internal step
     * derivatives: (x, u, pc) -> (xdot[nx])
     * outputs:     (x, u, pc) -> (y[ny])
     * directional: (x, u, pc, dx[nx], du[nu]) -> (dxdot[nx], dy[ny])   forward AD */
    ffmu_function constants, step, derivatives, outputs, directional;

    /* The validity envelope: the model's assumptions (small deflections of assumed-mode links, linear joint
     * springs) hold while |y[envelope_output[k]]| <= p[envelope_limit[k]] for every k < n_envelope;
     * envelope_label[k] says what output k measures, for messages (arrays NULL when n_envelope is 0). */
    int n_envelope;
    const int *envelope_output;        /* indices into y */
    const int *envelope_limit;         /* indices into p */
    const char *const *envelope_label; /* "tip deflection of link 2 relative to its length" */

    int nd; /* discrete states at the end of x (see the top of this file); 0 for a plant */
} ffmu_model;

/* Defined in the generated model_data.c. */
extern const ffmu_model FFMU_MODEL;

#endif
