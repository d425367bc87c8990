/*
 * ffmu_mex.c - the MEX gateway of a flexfmu model for MATLAB and GNU Octave
 * scripts, written once for any FFMU_MODEL. `flexfmu export --target
 * sfunction` copies it as <arm>_mex.c with FFMU_MEX_NAME defined, and
 * make_<arm>.m builds it (mex, or Octave's mkoctfile --mex).
 *
 *   info = <arm>_mex('info')                  names, units, sizes, nominal parameters, steps
 *   x1   = <arm>_mex('step', x, u, p, dt)     states after dt (any dt > 0; a multiple of info.internal_step is the fast path)
 *   y    = <arm>_mex('outputs', x, u, p)      the FMU's outputs
 *   qdd  = <arm>_mex('forward_dynamics', x, u, p)
 *   M    = <arm>_mex('mass_matrix', q, p)
 *
 * x = [q; qd] (info.nx values), u the torques (info.nu), p the parameters
 * (info.np, or [] for the nominal ones), q the coordinates (info.nq).
 * 'step' runs the FMU's own integrator and internal step: the same instance
 * code (ffmu_instance.c) and per-model code (ffmu_model.h) as the FMU's
 * fmi2DoStep, so a script stepping the arm reproduces the FMU's trajectory.
 * Errors (a wrong argument, a step that is not positive,
 * a non-finite state) raise a MATLAB error with the instance's message.
 *
 * One instance per loaded MEX file, kept between calls and freed when the
 * MEX file is cleared; each call starts it from the given x, u and p.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mex.h"
#include "ffmu_instance.h"
#include "ffmu_matlab.h"

#ifndef FFMU_MEX_NAME
#error "define FFMU_MEX_NAME (flexfmu export --target sfunction writes <arm>_mex.c with it)"
#endif

static ffmu_instance *instance;   /* created on first use */
static char last_error[1024];     /* the instance's last error message */

/* The instance's errors are kept and raised by the caller; warnings become MATLAB warnings. */
static void log_message(const ffmu_host *host, const char *instance_name, ffmu_status status,
                        const char *category, const char *message)
{
    (void)host;
    (void)instance_name;
    (void)category;
    if (status >= FFMU_ERROR)
        snprintf(last_error, sizeof last_error, "%s", message);
    else if (status == FFMU_WARNING)
        mexWarnMsgIdAndTxt(FFMU_MEX_NAME ":warning", "%s", message);
}

static void release_instance(void)
{
    ffmu_free(instance);
    instance = NULL;
}

/* Raises the instance's message (it names the command), or says what failed. */
static void fail(const char *what)
{
    if (last_error[0]) mexErrMsgIdAndTxt(FFMU_MEX_NAME ":failed", "%s", last_error);
    mexErrMsgIdAndTxt(FFMU_MEX_NAME ":failed", "%s failed", what);
}

static ffmu_instance *the_instance(void)
{
    ffmu_host host;
    if (instance) return instance;
    host.allocate = calloc;
    host.release = free;
    host.log = log_message;
    host.logger = NULL;
    host.environment = NULL;
    last_error[0] = '\0';
    instance = ffmu_instantiate(&host, FFMU_MEX_NAME, FFMU_MEX_NAME, FFMU_CO_SIMULATION, FFMU_MODEL.guid, 0);
    if (!instance) fail("cannot create the model instance");
    mexAtExit(release_instance);
    return instance;
}

/* ---- arguments ---------------------------------------------------------------- */

/* The real double vector argument `what` with n values; NULL for [] when empty_ok. */
static const double *vector(const mxArray *a, int n, const char *what, int empty_ok)
{
    if (empty_ok && mxIsEmpty(a)) return NULL;
    if (!mxIsDouble(a) || mxIsComplex(a) || mxIsSparse(a) || (int)mxGetNumberOfElements(a) != n ||
        mxGetNumberOfDimensions(a) != 2 || (mxGetM(a) != 1 && mxGetN(a) != 1 && n != 0))
        mexErrMsgIdAndTxt(FFMU_MEX_NAME ":arguments", "%s must be a real double vector of %d values%s", what, n,
                          empty_ok ? " (or [] for the nominal values)" : "");
    return mxGetPr(a);
}

static void expect_arguments(int nrhs, int expected, const char *usage)
{
    if (nrhs != expected)
        mexErrMsgIdAndTxt(FFMU_MEX_NAME ":arguments", "usage: %s(%s)", FFMU_MEX_NAME, usage);
}

/* Sets one block of value references (base + k, k < n) from values; fn names the command. */
static void set_block(ffmu_instance *in, const char *fn, ffmu_vr base, int n, const double *values)
{
    ffmu_vr vr[64];
    int k, done;
    for (done = 0; done < n; done += 64) {
        int count = n - done < 64 ? n - done : 64;
        for (k = 0; k < count; ++k) vr[k] = base + (ffmu_vr)(done + k);
        if (!ffmu_set_real(in, fn, vr, (size_t)count, values + done)) fail(fn);
    }
}

static void get_block(ffmu_instance *in, const char *fn, ffmu_vr base, int n, double *values)
{
    ffmu_vr vr[64];
    int k, done;
    for (done = 0; done < n; done += 64) {
        int count = n - done < 64 ? n - done : 64;
        for (k = 0; k < count; ++k) vr[k] = base + (ffmu_vr)(done + k);
        if (!ffmu_get_real(in, fn, vr, (size_t)count, values + done)) fail(fn);
    }
}

/* The instance at time 0 with states x, inputs u and parameters p (nominal if []), for the command fn. */
static ffmu_instance *started(const char *fn, const mxArray *x, const mxArray *u, const mxArray *p)
{
    const ffmu_model *m = &FFMU_MODEL;
    const double *xv = vector(x, m->nx, "x", 0), *uv = vector(u, m->nu, "u", 0), *pv = vector(p, m->np, "p", 1);
    ffmu_instance *in = the_instance();
    last_error[0] = '\0';
    ffmu_reset(in);
    if (pv) set_block(in, fn, FFMU_VR_PARAMETER, m->np, pv);
    set_block(in, fn, FFMU_VR_STATE, m->nx, xv);
    set_block(in, fn, FFMU_VR_INPUT, m->nu, uv);
    if (!ffmu_setup_experiment(in, fn, 0.0, 0, 0.0)) fail(fn);
    in->run.state = FFMU_ST_STEP;
    return in;
}

/* ---- results -------------------------------------------------------------------- */

static mxArray *column(int n)
{
    return mxCreateDoubleMatrix((mwSize)n, 1, mxREAL);
}

static mxArray *strings(const char *const *items, int n)
{
    mxArray *cell = mxCreateCellMatrix((mwSize)n, 1);
    int k;
    for (k = 0; k < n; ++k) mxSetCell(cell, (mwIndex)k, mxCreateString(items[k] ? items[k] : ""));
    return cell;
}

static mxArray *info(void)
{
    const char *fields[] = {
        "name", "guid", "nq", "nx", "nu", "ny", "np", "integrator", "internal_step", "sample_time",
        "state_names", "state_units", "input_names", "input_units", "output_names", "output_units",
        "parameter_names", "parameter_units", "parameter_nominal", "parameter_tunable", "state_start", "input_start"};
    const ffmu_model *m = &FFMU_MODEL;
    const ffmu_matlab_data *d = &FFMU_MATLAB;
    mxArray *s = mxCreateStructMatrix(1, 1, (int)(sizeof fields / sizeof fields[0]), fields);
    mxArray *nominal = column(m->np), *tunable = mxCreateLogicalMatrix((mwSize)m->np, 1);
    mxArray *state_start = column(m->nx), *input_start = column(m->nu);
    mxLogical *flags = mxGetLogicals(tunable);
    int k;
    for (k = 0; k < m->np; ++k) {
        mxGetPr(nominal)[k] = m->parameter_start[k];
        flags[k] = m->parameter_tunable[k] != 0;
    }
    for (k = 0; k < m->nx; ++k) mxGetPr(state_start)[k] = m->state_start[k];
    for (k = 0; k < m->nu; ++k) mxGetPr(input_start)[k] = m->input_start[k];
    mxSetField(s, 0, "name", mxCreateString(m->model_name));
    mxSetField(s, 0, "guid", mxCreateString(m->guid));
    mxSetField(s, 0, "nq", mxCreateDoubleScalar(m->nq));
    mxSetField(s, 0, "nx", mxCreateDoubleScalar(m->nx));
    mxSetField(s, 0, "nu", mxCreateDoubleScalar(m->nu));
    mxSetField(s, 0, "ny", mxCreateDoubleScalar(m->ny));
    mxSetField(s, 0, "np", mxCreateDoubleScalar(m->np));
    mxSetField(s, 0, "integrator", mxCreateString(m->integrator == FFMU_RK4 ? "rk4" : m->integrator == FFMU_ROSENBROCK ? "rosenbrock" : "implicit_midpoint"));
    mxSetField(s, 0, "internal_step", mxCreateDoubleScalar(m->internal_step));
    mxSetField(s, 0, "sample_time", mxCreateDoubleScalar(d->sample_time));
    mxSetField(s, 0, "state_names", strings(m->state_names, m->nx));
    mxSetField(s, 0, "state_units", strings(d->state_units, m->nx));
    mxSetField(s, 0, "input_names", strings(m->input_names, m->nu));
    mxSetField(s, 0, "input_units", strings(d->input_units, m->nu));
    mxSetField(s, 0, "output_names", strings(m->output_names, m->ny));
    mxSetField(s, 0, "output_units", strings(d->output_units, m->ny));
    mxSetField(s, 0, "parameter_names", strings(m->parameter_names, m->np));
    mxSetField(s, 0, "parameter_units", strings(d->parameter_units, m->np));
    mxSetField(s, 0, "parameter_nominal", nominal);
    mxSetField(s, 0, "parameter_tunable", tunable);
    mxSetField(s, 0, "state_start", state_start); /* the arm at rest at its start pose */
    mxSetField(s, 0, "input_start", input_start); /* what holds it there */
    return s;
}

/* M(q, p) from the generated function; p [] gives the nominal parameters. */
static mxArray *mass_matrix(const mxArray *q, const mxArray *p)
{
    const ffmu_model *m = &FFMU_MODEL;
    const ffmu_function *f = &FFMU_MATLAB.mass_matrix;
    const double *qv = vector(q, m->nq, "q", 0), *pv = vector(p, m->np, "p", 1);
    ffmu_int n_arg = 0, n_res = 0, n_iw = 0, n_w = 0;
    const double **arg;
    double **res, *w;
    ffmu_int *iw;
    mxArray *result = mxCreateDoubleMatrix((mwSize)m->nq, (mwSize)m->nq, mxREAL);
    if (f->work(&n_arg, &n_res, &n_iw, &n_w) != 0) mexErrMsgIdAndTxt(FFMU_MEX_NAME ":failed", "mass matrix: work");
    arg = (const double **)mxCalloc((size_t)n_arg + 2, sizeof *arg);
    res = (double **)mxCalloc((size_t)n_res + 1, sizeof *res);
    iw = (ffmu_int *)mxCalloc((size_t)n_iw + 1, sizeof *iw);
    w = (double *)mxCalloc((size_t)n_w + 1, sizeof *w);
    arg[0] = qv;
    arg[1] = pv ? pv : m->parameter_start;
    res[0] = mxGetPr(result);
    if (f->eval(arg, res, iw, w, 0) != 0) mexErrMsgIdAndTxt(FFMU_MEX_NAME ":failed", "mass matrix: evaluation");
    mxFree(arg);
    mxFree(res);
    mxFree(iw);
    mxFree(w);
    return result;
}

void mexFunction(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    const ffmu_model *m = &FFMU_MODEL;
    char command[32];
    ffmu_instance *in;
    double dt;
    (void)nlhs;
    if (nrhs < 1 || !mxIsChar(prhs[0]) || mxGetString(prhs[0], command, sizeof command) != 0)
        mexErrMsgIdAndTxt(FFMU_MEX_NAME ":arguments", "usage: %s(COMMAND, ...) with COMMAND one of 'info', "
                          "'step', 'outputs', 'forward_dynamics', 'mass_matrix'", FFMU_MEX_NAME);
    if (strcmp(command, "info") == 0) {
        expect_arguments(nrhs, 1, "'info'");
        plhs[0] = info();
    } else if (strcmp(command, "step") == 0) {
        expect_arguments(nrhs, 5, "'step', x, u, p, dt");
        if (!mxIsDouble(prhs[4]) || mxGetNumberOfElements(prhs[4]) != 1)
            mexErrMsgIdAndTxt(FFMU_MEX_NAME ":arguments", "dt must be a real double scalar");
        dt = mxGetScalar(prhs[4]);
        in = started(command, prhs[1], prhs[2], prhs[3]);
        if (!ffmu_do_step(in, command, 0.0, dt)) fail(command);
        plhs[0] = column(m->nx);
        if (!ffmu_get_continuous_states(in, command, mxGetPr(plhs[0]), (size_t)m->nx)) fail(command);
    } else if (strcmp(command, "outputs") == 0) {
        expect_arguments(nrhs, 4, "'outputs', x, u, p");
        in = started(command, prhs[1], prhs[2], prhs[3]);
        plhs[0] = column(m->ny);
        get_block(in, command, FFMU_VR_OUTPUT, m->ny, mxGetPr(plhs[0]));
    } else if (strcmp(command, "forward_dynamics") == 0) {
        expect_arguments(nrhs, 4, "'forward_dynamics', x, u, p");
        in = started(command, prhs[1], prhs[2], prhs[3]);
        plhs[0] = column(m->nq);
        get_block(in, command, FFMU_VR_ACCELERATION, m->nq, mxGetPr(plhs[0]));
    } else if (strcmp(command, "mass_matrix") == 0) {
        expect_arguments(nrhs, 3, "'mass_matrix', q, p");
        plhs[0] = mass_matrix(prhs[1], prhs[2]);
    } else {
        mexErrMsgIdAndTxt(FFMU_MEX_NAME ":arguments", "unknown command '%s' (use 'info', 'step', 'outputs', "
                          "'forward_dynamics' or 'mass_matrix')", command);
    }
}
