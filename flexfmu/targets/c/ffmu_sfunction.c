/*
 * ffmu_sfunction.c - a Level-2 C-MEX S-function of a flexfmu model, for
 * Simulink and the Simulink Coder targets (the route to NI VeriStand that
 * paper 000 took), written once for any FFMU_MODEL. `flexfmu export --target
 * sfunction` copies it as <arm>_sfun.c with S_FUNCTION_NAME defined, and
 * make_<arm>.m builds it with mex.
 *
 * The block is fixed-step discrete with the sample time Ts:
 *   input port 1    the torques (nu values, direct feedthrough: the tip
 *                   accelerations depend on them)
 *   output port 1   the FMU's outputs (ny values, in the FMU's order)
 *   parameter 1     the physical parameters (np values, or [] for the
 *                   nominal ones); tunable during the run, but a fixed
 *                   parameter (geometry) may only change before it
 *   parameter 2     the initial state x0 = [q; qd] (nx values, or [] for the FMU's start: the arm at rest
 *                   at its start pose)
 *   parameter 3     Ts, any positive step (a whole multiple of the internal step is the fast path; [] for the
 *                   export's communication step)
 * At each sample t_k: outputs y(x_k, u_k, p); update x_k+1 = the FMU's
 * fmi2DoStep(t_k, Ts): the same instance code (ffmu_instance.c), integrator
 * and internal step as the FMU, through the same per-model contract
 * (ffmu_model.h). The state lives in the instance (PWork), so Simulink's
 * operating points do not save it.
 *
 * Errors are reported with ssSetErrorStatus and the instance's message.
 * Memory is allocated in mdlStart and freed in mdlTerminate, none while
 * simulating.
 */
#ifndef S_FUNCTION_NAME
#error "define S_FUNCTION_NAME (flexfmu export --target sfunction writes <arm>_sfun.c with it)"
#endif
#define S_FUNCTION_LEVEL 2

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simstruc.h"
#include "ffmu_instance.h"
#include "ffmu_matlab.h"

enum { P_PARAMETERS, P_INITIAL_STATE, P_SAMPLE_TIME, N_DIALOG_PARAMETERS };

/* What one block keeps between calls (PWork 0). */
typedef struct {
    ffmu_instance *instance;
    ffmu_vr *inputs, *outputs, *parameters, *states;
    double *values; /* np scratch values */
    char message[1024]; /* the last error, for ssSetErrorStatus (must outlive the call) */
} block_data;

/* ---- dialog parameters ---------------------------------------------------------- */

/* n values, or 0 if the parameter is []; -1 if it is neither a real double vector of n values nor []. */
static int dialog_vector(SimStruct *S, int index, int n, const double **values)
{
    const mxArray *a = ssGetSFcnParam(S, index);
    *values = NULL;
    if (mxIsEmpty(a)) return 0;
    if (!mxIsDouble(a) || mxIsComplex(a) || (int)mxGetNumberOfElements(a) != n) return -1;
    *values = mxGetPr(a);
    return n;
}

static double sample_time(SimStruct *S)
{
    const double *ts;
    return dialog_vector(S, P_SAMPLE_TIME, 1, &ts) == 1 ? ts[0] : FFMU_MATLAB.sample_time;
}

#define MDL_CHECK_PARAMETERS
static void mdlCheckParameters(SimStruct *S)
{
    const ffmu_model *m = &FFMU_MODEL;
    const double *values;
    double ts;
    if (dialog_vector(S, P_PARAMETERS, m->np, &values) < 0) {
        ssSetErrorStatus(S, "parameter 1 must hold the model's parameters (info.np values) or be []");
        return;
    }
    if (dialog_vector(S, P_INITIAL_STATE, m->nx, &values) < 0) {
        ssSetErrorStatus(S, "parameter 2 must hold the initial state [q; qd] (info.nx values) or be []");
        return;
    }
    if (dialog_vector(S, P_SAMPLE_TIME, 1, &values) < 0) {
        ssSetErrorStatus(S, "parameter 3 must be the sample time Ts in s, or []");
        return;
    }
    ts = sample_time(S);
    if (!(ts > 0) || !(ts < 1e12 * m->internal_step)) {
        ssSetErrorStatus(S, "the sample time Ts must be positive and below 1e12 internal steps");
    }
}

/* ---- sizes and sample times -------------------------------------------------------- */

static void mdlInitializeSizes(SimStruct *S)
{
    const ffmu_model *m = &FFMU_MODEL;
    ssSetNumSFcnParams(S, N_DIALOG_PARAMETERS);
#if defined(MATLAB_MEX_FILE)
    if (ssGetNumSFcnParams(S) != ssGetSFcnParamsCount(S)) return; /* Simulink reports the count */
    mdlCheckParameters(S);
    if (ssGetErrorStatus(S) != NULL) return;
#endif
    ssSetSFcnParamTunable(S, P_PARAMETERS, 1);
    ssSetSFcnParamTunable(S, P_INITIAL_STATE, 0);
    ssSetSFcnParamTunable(S, P_SAMPLE_TIME, 0);
    ssSetNumContStates(S, 0);
    ssSetNumDiscStates(S, 0);
    if (!ssSetNumInputPorts(S, 1)) return;
    ssSetInputPortWidth(S, 0, m->nu);
    ssSetInputPortDirectFeedThrough(S, 0, 1);
    ssSetInputPortRequiredContiguous(S, 0, 1);
    if (!ssSetNumOutputPorts(S, 1)) return;
    ssSetOutputPortWidth(S, 0, m->ny);
    ssSetNumSampleTimes(S, 1);
    ssSetNumPWork(S, 1);
    ssSetOptions(S, SS_OPTION_EXCEPTION_FREE_CODE);
}

static void mdlInitializeSampleTimes(SimStruct *S)
{
    ssSetSampleTime(S, 0, sample_time(S));
    ssSetOffsetTime(S, 0, 0.0);
}

/* ---- the instance ------------------------------------------------------------------- */

/* The instance's errors are kept in the block's data, for ssSetErrorStatus. */
static void log_message(const ffmu_host *host, const char *instance_name, ffmu_status status,
                        const char *category, const char *message)
{
    block_data *data = (block_data *)host->environment;
    (void)instance_name;
    (void)category;
    if (status >= FFMU_ERROR) snprintf(data->message, sizeof data->message, "%s", message);
}

static void fail(SimStruct *S, block_data *data, const char *what)
{
    if (!data->message[0]) snprintf(data->message, sizeof data->message, "%s failed", what);
    ssSetErrorStatus(S, data->message);
}

static ffmu_vr *references(ffmu_vr base, int n)
{
    ffmu_vr *vr = (ffmu_vr *)calloc((size_t)n + 1, sizeof *vr);
    int k;
    if (vr)
        for (k = 0; k < n; ++k) vr[k] = base + (ffmu_vr)k;
    return vr;
}

static void free_block_data(block_data *data)
{
    if (!data) return;
    ffmu_free(data->instance);
    free(data->inputs);
    free(data->outputs);
    free(data->parameters);
    free(data->states);
    free(data->values);
    free(data);
}

/* Sets the dialog's parameters that differ from the instance's (all of them before the run). */
static int apply_parameters(block_data *data, const char *fn, const double *values)
{
    const ffmu_model *m = &FFMU_MODEL;
    int k;
    if (!values) return 1;
    if (!ffmu_get_real(data->instance, fn, data->parameters, (size_t)m->np, data->values)) return 0;
    for (k = 0; k < m->np; ++k)
        if (values[k] != data->values[k] &&
            !ffmu_set_real(data->instance, fn, &data->parameters[k], 1, &values[k]))
            return 0;
    return 1;
}

#define MDL_START
static void mdlStart(SimStruct *S)
{
    const ffmu_model *m = &FFMU_MODEL;
    const char *fn = "mdlStart";
    const double *parameters, *x0;
    block_data *data = (block_data *)calloc(1, sizeof *data);
    ffmu_host host;
    ssGetPWork(S)[0] = data;
    if (!data) {
        ssSetErrorStatus(S, "out of memory");
        return;
    }
    data->inputs = references(FFMU_VR_INPUT, m->nu);
    data->outputs = references(FFMU_VR_OUTPUT, m->ny);
    data->parameters = references(FFMU_VR_PARAMETER, m->np);
    data->states = references(FFMU_VR_STATE, m->nx);
    data->values = (double *)calloc((size_t)m->np + 1, sizeof(double));
    host.allocate = calloc;
    host.release = free;
    host.log = log_message;
    host.logger = NULL;
    host.environment = data;
    if (data->inputs && data->outputs && data->parameters && data->states && data->values)
        data->instance = ffmu_instantiate(&host, fn, ssGetPath(S), FFMU_CO_SIMULATION, m->guid, 0);
    if (!data->instance) {
        fail(S, data, "creating the model instance");
        return;
    }
    dialog_vector(S, P_PARAMETERS, m->np, &parameters);
    dialog_vector(S, P_INITIAL_STATE, m->nx, &x0);
    if (!apply_parameters(data, fn, parameters) ||
        (x0 && !ffmu_set_real(data->instance, fn, data->states, (size_t)m->nx, x0)) ||
        !ffmu_setup_experiment(data->instance, fn, ssGetTStart(S), 0, 0.0) ||
        !ffmu_check_start(data->instance, fn)) {
        fail(S, data, "starting the model");
        return;
    }
    data->instance->run.state = FFMU_ST_STEP;
}

/* ---- simulation ------------------------------------------------------------------- */

static int set_inputs(SimStruct *S, block_data *data, const char *fn)
{
    const real_T *u = ssGetInputPortRealSignal(S, 0);
    return ffmu_set_real(data->instance, fn, data->inputs, (size_t)FFMU_MODEL.nu, u);
}

static void mdlOutputs(SimStruct *S, int_T tid)
{
    block_data *data = (block_data *)ssGetPWork(S)[0];
    const char *fn = "mdlOutputs";
    (void)tid;
    if (!set_inputs(S, data, fn) ||
        !ffmu_get_real(data->instance, fn, data->outputs, (size_t)FFMU_MODEL.ny, ssGetOutputPortRealSignal(S, 0)))
        fail(S, data, fn);
}

#define MDL_UPDATE
static void mdlUpdate(SimStruct *S, int_T tid)
{
    block_data *data = (block_data *)ssGetPWork(S)[0];
    const char *fn = "mdlUpdate";
    (void)tid;
    if (!set_inputs(S, data, fn) || !ffmu_do_step(data->instance, fn, ssGetT(S), sample_time(S)))
        fail(S, data, fn);
}

#define MDL_PROCESS_PARAMETERS
static void mdlProcessParameters(SimStruct *S)
{
    block_data *data = (block_data *)ssGetPWork(S)[0];
    const double *parameters;
    if (!data || !data->instance) return; /* before mdlStart: it applies them */
    dialog_vector(S, P_PARAMETERS, FFMU_MODEL.np, &parameters);
    if (!apply_parameters(data, "mdlProcessParameters", parameters)) fail(S, data, "changing the parameters");
}

static void mdlTerminate(SimStruct *S)
{
    free_block_data((block_data *)ssGetPWork(S)[0]);
    ssGetPWork(S)[0] = NULL;
}

#ifdef MATLAB_MEX_FILE
#include "simulink.c"
#else
#include "cg_sfun.h"
#endif
