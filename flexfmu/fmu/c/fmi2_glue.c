/*
 * fmi2_glue.c - the FMI 2.0 interface (co-simulation and model exchange in
 * one binary) of every flexfmu FMU, written once for any FFMU_MODEL.
 *
 * Design
 * ------
 * The model is the constant FFMU_MODEL (ffmu_model.h): sizes, names, start
 * values, the fixed internal step and four CasADi-generated functions. This
 * file knows FMI and nothing about robots.
 *
 * Memory and threads. There is no mutable global or static state (only const
 * tables). An fmi2Component is an ffmu_instance that owns all its memory,
 * allocated through the importer's allocateMemory in fmi2Instantiate: the
 * variable arrays, the caches and the CasADi work arrays, sized once as the
 * maximum over the four functions. Nothing is allocated while simulating, so
 * fmi2DoStep is real-time friendly, and any number of instances can run in
 * parallel threads.
 *
 * State machine. Every FMI function starts with call_allowed() and its row of
 * the CALL RULES table below (which interface types and which states allow
 * it); the transitions are the few assignments to in->run.state.
 *
 * Errors. This code runs on real-time targets where a crash takes the target
 * down, so every argument is checked: NULL component, state, NULL arrays,
 * sizes and every value reference. Misuse is logged and answered with
 * fmi2Error without changing the instance (a faulty call cannot corrupt it;
 * Set functions validate all value references before changing anything).
 * A numerical failure of the model (a non-finite state, derivative or output,
 * or a CasADi function reporting failure while simulating) puts the instance
 * in the error state, as the standard prescribes after fmi2Error: from there
 * only inspection, fmi2SetFMUstate, fmi2Reset and fmi2FreeInstance work.
 *
 * Time. Co-simulation counts internal steps: t = t_start + steps * h with an
 * integer counter, so no rounding error accumulates in long runs and the
 * master's communication points can be checked against the FMU time.
 *
 * Caches. Outputs y and derivatives xdot are functions of (x, u, p) only; they
 * are computed on demand and kept until x, u or p change.
 *
 * Logging. Errors are always passed to the logger (if the importer gave one);
 * warnings and call traces only when debug logging is on for their category.
 */

#include <math.h> /* isfinite: a macro, so the glue needs no libm */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fmi2Functions.h"
#include "ffmu_model.h"

#if defined(__GNUC__)
#define FFMU_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define FFMU_PRINTF(fmt, args)
#endif

/* ======================================================================== */
/* Machine states and the call rules (the FMI 2.0 state machine)            */
/* ======================================================================== */

/* One bit per state so that a rule can hold a set of states. */
typedef enum {
    ST_INSTANTIATED = 1 << 0,
    ST_INITIALIZATION = 1 << 1,
    ST_STEP_COMPLETE = 1 << 2, /* co-simulation, between fmi2DoStep calls */
    ST_EVENT = 1 << 3,         /* model exchange */
    ST_CONTINUOUS = 1 << 4,    /* model exchange */
    ST_TERMINATED = 1 << 5,
    ST_ERROR = 1 << 6,
    /* Never entered: nothing here can leave the process in an undefined state.
     * Listed to complete the standard's machine; no rule allows it. */
    ST_FATAL = 1 << 7
} machine_state;

#define ALL_STATES 0xFF
#define ALIVE (ALL_STATES & ~ST_FATAL)
#define FROM_INIT_ON (ALIVE & ~ST_INSTANTIATED)
#define RUNNING (ST_STEP_COMPLETE | ST_EVENT | ST_CONTINUOUS)
#define BEFORE_RUN (ST_INSTANTIATED | ST_INITIALIZATION)

/* Interface types a function belongs to. */
#define FOR_ME 1u
#define FOR_CS 2u
#define FOR_BOTH (FOR_ME | FOR_CS)

typedef struct {
    const char *name;
    unsigned types;  /* FOR_ME, FOR_CS or FOR_BOTH */
    unsigned states; /* set of machine states in which the call is legal */
} call_rule;

/*
 * CALL RULES: where each FMI function may be called (FMI 2.0, sections 3.2.3
 * and 4.2.4). A CS instance never is in event or continuous-time mode and an
 * ME instance never is in stepComplete, so one set serves both types.
 * Deliberate extensions of the standard, all read-only and harmless:
 * Get* also in instantiated (start values); fmi2GetContinuousStates also in
 * instantiated; fmi2Get*Status also in error (fmi2LastSuccessfulTime is what a
 * master wants to know after a failed step).
 * Per-variable rules of fmi2SetReal are in set_refusal().
 */
static const call_rule
    R_SetDebugLogging = {"fmi2SetDebugLogging", FOR_BOTH, ALIVE},
    R_SetupExperiment = {"fmi2SetupExperiment", FOR_BOTH, ST_INSTANTIATED},
    R_EnterInitializationMode = {"fmi2EnterInitializationMode", FOR_BOTH, ST_INSTANTIATED},
    R_ExitInitializationMode = {"fmi2ExitInitializationMode", FOR_BOTH, ST_INITIALIZATION},
    R_Terminate = {"fmi2Terminate", FOR_BOTH, RUNNING},
    R_Reset = {"fmi2Reset", FOR_BOTH, ALIVE},
    R_GetReal = {"fmi2GetReal", FOR_BOTH, ALIVE},
    R_GetInteger = {"fmi2GetInteger", FOR_BOTH, ALIVE},
    R_GetBoolean = {"fmi2GetBoolean", FOR_BOTH, ALIVE},
    R_GetString = {"fmi2GetString", FOR_BOTH, ALIVE},
    R_SetReal = {"fmi2SetReal", FOR_BOTH, BEFORE_RUN | RUNNING},
    R_SetInteger = {"fmi2SetInteger", FOR_BOTH, BEFORE_RUN | ST_STEP_COMPLETE | ST_EVENT},
    R_SetBoolean = {"fmi2SetBoolean", FOR_BOTH, BEFORE_RUN | ST_STEP_COMPLETE | ST_EVENT},
    R_SetString = {"fmi2SetString", FOR_BOTH, BEFORE_RUN | ST_STEP_COMPLETE | ST_EVENT},
    R_GetFMUstate = {"fmi2GetFMUstate", FOR_BOTH, ALIVE},
    R_SetFMUstate = {"fmi2SetFMUstate", FOR_BOTH, ALIVE},
    R_FreeFMUstate = {"fmi2FreeFMUstate", FOR_BOTH, ALIVE},
    R_SerializedFMUstateSize = {"fmi2SerializedFMUstateSize", FOR_BOTH, ALIVE},
    R_SerializeFMUstate = {"fmi2SerializeFMUstate", FOR_BOTH, ALIVE},
    R_DeSerializeFMUstate = {"fmi2DeSerializeFMUstate", FOR_BOTH, ALIVE},
    R_GetDirectionalDerivative = {"fmi2GetDirectionalDerivative", FOR_BOTH, FROM_INIT_ON},
    /* model exchange */
    R_EnterEventMode = {"fmi2EnterEventMode", FOR_ME, ST_EVENT | ST_CONTINUOUS},
    R_NewDiscreteStates = {"fmi2NewDiscreteStates", FOR_ME, ST_EVENT},
    R_EnterContinuousTimeMode = {"fmi2EnterContinuousTimeMode", FOR_ME, ST_EVENT},
    R_CompletedIntegratorStep = {"fmi2CompletedIntegratorStep", FOR_ME, ST_CONTINUOUS},
    R_SetTime = {"fmi2SetTime", FOR_ME, ST_EVENT | ST_CONTINUOUS},
    R_SetContinuousStates = {"fmi2SetContinuousStates", FOR_ME, ST_CONTINUOUS},
    R_GetDerivatives = {"fmi2GetDerivatives", FOR_ME, FROM_INIT_ON},
    R_GetEventIndicators = {"fmi2GetEventIndicators", FOR_ME, FROM_INIT_ON},
    R_GetContinuousStates = {"fmi2GetContinuousStates", FOR_ME, ALIVE},
    R_GetNominalsOfContinuousStates = {"fmi2GetNominalsOfContinuousStates", FOR_ME, ALIVE},
    /* co-simulation */
    R_SetRealInputDerivatives = {"fmi2SetRealInputDerivatives", FOR_CS, BEFORE_RUN | ST_STEP_COMPLETE},
    R_GetRealOutputDerivatives = {"fmi2GetRealOutputDerivatives", FOR_CS,
                                  ST_STEP_COMPLETE | ST_TERMINATED | ST_ERROR},
    R_DoStep = {"fmi2DoStep", FOR_CS, ST_STEP_COMPLETE},
    R_CancelStep = {"fmi2CancelStep", FOR_CS, ALIVE}, /* always refused, see fmi2CancelStep */
    R_GetStatus = {"fmi2GetStatus", FOR_CS, ST_STEP_COMPLETE | ST_TERMINATED | ST_ERROR},
    R_GetRealStatus = {"fmi2GetRealStatus", FOR_CS, ST_STEP_COMPLETE | ST_TERMINATED | ST_ERROR},
    R_GetIntegerStatus = {"fmi2GetIntegerStatus", FOR_CS, ST_STEP_COMPLETE | ST_TERMINATED | ST_ERROR},
    R_GetBooleanStatus = {"fmi2GetBooleanStatus", FOR_CS, ST_STEP_COMPLETE | ST_TERMINATED | ST_ERROR},
    R_GetStringStatus = {"fmi2GetStringStatus", FOR_CS, ST_STEP_COMPLETE | ST_TERMINATED | ST_ERROR};

static const char *state_name(unsigned state)
{
    switch (state) {
    case ST_INSTANTIATED: return "instantiated";
    case ST_INITIALIZATION: return "initializationMode";
    case ST_STEP_COMPLETE: return "stepComplete";
    case ST_EVENT: return "eventMode";
    case ST_CONTINUOUS: return "continuousTimeMode";
    case ST_TERMINATED: return "terminated";
    case ST_ERROR: return "error";
    case ST_FATAL: return "fatal";
    default: return "unknown";
    }
}

/* ======================================================================== */
/* The instance                                                             */
/* ======================================================================== */

/* Everything about where the simulation is, apart from the variable values;
 * copied as a whole into and out of FMU state snapshots. */
typedef struct {
    machine_state state;
    double start_time;
    double stop_time; /* recorded, not enforced */
    int stop_time_defined;
    double time;     /* ME: last fmi2SetTime; CS: start_time + steps * h */
    long long steps; /* CS: internal steps done since start_time */
} run_state;

typedef struct {
    fmi2CallbackFunctions cb; /* a copy: the importer may free its struct */
    char *name;
    fmi2Type type;
    unsigned log_categories; /* LOG_* bits switched on by debug logging */
    uint32_t guid_hash;      /* identifies snapshots of this model */
    run_state run;

    double *x, *u, *p;  /* states [q; qd], inputs, parameters followed by their constants c(p) */
    double *xdot, *y;   /* caches, valid while the flags are set */
    int xdot_valid, y_valid;
    int constants_valid; /* c(p) in p[np..np+nc) matches p[0..np) */
    double *x_next;     /* result of one internal step (CasADi's res must not alias arg) */
    double *dx, *du, *dxdot, *dy; /* seeds and results of directional derivatives */

    /* CasADi work arrays, sized as the maximum over the four functions */
    const double **arg;
    double **res;
    ffmu_int *iw;
    double *w;
} ffmu_instance;

/* ======================================================================== */
/* Logging                                                                  */
/* ======================================================================== */

enum { LOG_ERROR = 1, LOG_WARNING = 2, LOG_ALL = 4 };
#define LOG_CATEGORY_COUNT 3
static const char *const LOG_CATEGORY_NAMES[LOG_CATEGORY_COUNT] = {"logStatusError", "logStatusWarning",
                                                                   "logAll"};
static const unsigned LOG_CATEGORY_BITS[LOG_CATEGORY_COUNT] = {LOG_ERROR, LOG_WARNING, LOG_ALL};

/* The logger treats the message like a printf format and FMI 2.0 gives '#'
 * a meaning (#r12# names a variable), so both are escaped. We format the text
 * ourselves instead of passing arguments on because some loggers (FMPy's
 * among them) print the message as it is and ignore the arguments. */
static void escape_message(const char *text, char *out, size_t size)
{
    size_t n = 0;
    for (; *text && n + 3 <= size; ++text) {
        if (*text == '%' || *text == '#') out[n++] = *text;
        out[n++] = *text;
    }
    out[n] = '\0';
}

static void emit(const fmi2CallbackFunctions *cb, const char *instance_name, fmi2Status status,
                 const char *category, const char *fmt, va_list ap)
{
    char text[512];
    char escaped[2 * sizeof text];
    if (!cb || !cb->logger) return;
    vsnprintf(text, sizeof text, fmt, ap);
    escape_message(text, escaped, sizeof escaped);
    cb->logger(cb->componentEnvironment, instance_name ? instance_name : "", status, category, escaped);
}

/* Errors are always reported. */
static void log_error(const ffmu_instance *in, const char *fmt, ...) FFMU_PRINTF(2, 3);
static void log_error(const ffmu_instance *in, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(&in->cb, in->name, fmi2Error, "logStatusError", fmt, ap);
    va_end(ap);
}

static void log_warning(const ffmu_instance *in, const char *fmt, ...) FFMU_PRINTF(2, 3);
static void log_warning(const ffmu_instance *in, const char *fmt, ...)
{
    va_list ap;
    if (!(in->log_categories & (LOG_WARNING | LOG_ALL))) return;
    va_start(ap, fmt);
    emit(&in->cb, in->name, fmi2Warning, "logStatusWarning", fmt, ap);
    va_end(ap);
}

static void log_trace(const ffmu_instance *in, const char *fmt, ...) FFMU_PRINTF(2, 3);
static void log_trace(const ffmu_instance *in, const char *fmt, ...)
{
    va_list ap;
    if (!(in->log_categories & LOG_ALL)) return;
    va_start(ap, fmt);
    emit(&in->cb, in->name, fmi2OK, "logAll", fmt, ap);
    va_end(ap);
}

/* Before an instance exists (fmi2Instantiate failures). */
static void log_instantiate_error(const fmi2CallbackFunctions *cb, const char *instance_name, const char *fmt,
                                  ...) FFMU_PRINTF(3, 4);
static void log_instantiate_error(const fmi2CallbackFunctions *cb, const char *instance_name, const char *fmt,
                                  ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(cb, instance_name, fmi2Error, "logStatusError", fmt, ap);
    va_end(ap);
}

/* ======================================================================== */
/* Argument checks                                                          */
/* ======================================================================== */

static void describe_states(unsigned states, char *out, size_t size)
{
    unsigned bit;
    size_t n = 0;
    out[0] = '\0';
    for (bit = 1; bit <= ST_FATAL; bit <<= 1) {
        if (!(states & bit)) continue;
        n += (size_t)snprintf(out + n, size - n, "%s%s", n ? ", " : "", state_name(bit));
        if (n >= size) return;
    }
    if (!n) snprintf(out, size, "no state");
}

/* The entry check of every function: component, interface type, state. */
static int call_allowed(ffmu_instance *in, const call_rule *rule)
{
    unsigned type_bit;
    char allowed[160];
    if (!in) return 0; /* nobody to log to */
    type_bit = in->type == fmi2ModelExchange ? FOR_ME : FOR_CS;
    if (!(rule->types & type_bit)) {
        log_error(in, "%s is not available in %s", rule->name,
                  in->type == fmi2ModelExchange ? "model exchange" : "co-simulation");
        return 0;
    }
    if (!(rule->states & (unsigned)in->run.state)) {
        describe_states(rule->states, allowed, sizeof allowed);
        log_error(in, "%s is not allowed in state %s (allowed in: %s)", rule->name,
                  state_name(in->run.state), allowed);
        return 0;
    }
    log_trace(in, "%s", rule->name);
    return 1;
}

/* An array argument must not be NULL when it has elements. */
static int array_ok(const ffmu_instance *in, const char *function, const char *array, const void *pointer,
                    size_t count)
{
    if (count > 0 && !pointer) {
        log_error(in, "%s: %s is NULL although its length is %lu", function, array, (unsigned long)count);
        return 0;
    }
    return 1;
}

static int pointer_ok(const ffmu_instance *in, const char *function, const char *argument, const void *pointer)
{
    if (!pointer) {
        log_error(in, "%s: %s is NULL", function, argument);
        return 0;
    }
    return 1;
}

static int size_ok(const ffmu_instance *in, const char *function, const char *argument, size_t given,
                   int expected)
{
    if (given != (size_t)expected) {
        log_error(in, "%s: %s = %lu, but the model has %d", function, argument, (unsigned long)given, expected);
        return 0;
    }
    return 1;
}

static double magnitude(double v) { return v < 0 ? -v : v; }

static int first_nonfinite(const double *v, int n)
{
    int i;
    for (i = 0; i < n; ++i)
        if (!isfinite(v[i])) return i;
    return -1;
}

static const char *nonfinite_word(double v)
{
    if (v != v) return "NaN";
    return v > 0 ? "+Inf" : "-Inf";
}

static const char *name_at(const char *const *names, int k) { return names && names[k] ? names[k] : "?"; }

/* ======================================================================== */
/* Value references                                                         */
/* ======================================================================== */

typedef enum { VK_UNKNOWN, VK_PARAMETER, VK_STATE, VK_ACCELERATION, VK_INPUT, VK_OUTPUT } var_kind;

static int in_block(fmi2ValueReference vr, unsigned long base, int count, int *index)
{
    if (vr < base || vr - base >= (unsigned long)count) return 0;
    *index = (int)(vr - base);
    return 1;
}

/* The category and index of a value reference (ffmu_model.h), VK_UNKNOWN if
 * it names no variable of this model. */
static var_kind classify(fmi2ValueReference vr, int *index)
{
    const ffmu_model *m = &FFMU_MODEL;
    if (in_block(vr, FFMU_VR_PARAMETER, m->np, index)) return VK_PARAMETER;
    if (in_block(vr, FFMU_VR_STATE, m->nx, index)) return VK_STATE;
    if (in_block(vr, FFMU_VR_ACCELERATION, m->nq, index)) return VK_ACCELERATION;
    if (in_block(vr, FFMU_VR_INPUT, m->nu, index)) return VK_INPUT;
    if (in_block(vr, FFMU_VR_OUTPUT, m->ny, index)) return VK_OUTPUT;
    *index = -1;
    return VK_UNKNOWN;
}

/* "parameter 'stiffness' (vr 100001)" for messages. */
static const char *describe_variable(fmi2ValueReference vr, char *out, size_t size)
{
    const ffmu_model *m = &FFMU_MODEL;
    int k;
    switch (classify(vr, &k)) {
    case VK_PARAMETER: snprintf(out, size, "parameter '%s' (vr %u)", name_at(m->parameter_names, k), vr); break;
    case VK_STATE: snprintf(out, size, "state '%s' (vr %u)", name_at(m->state_names, k), vr); break;
    case VK_ACCELERATION:
        snprintf(out, size, "acceleration der(%s) (vr %u)", name_at(m->state_names, m->nq + k), vr);
        break;
    case VK_INPUT: snprintf(out, size, "input '%s' (vr %u)", name_at(m->input_names, k), vr); break;
    case VK_OUTPUT: snprintf(out, size, "output '%s' (vr %u)", name_at(m->output_names, k), vr); break;
    default: snprintf(out, size, "unknown value reference %u", vr); break;
    }
    return out;
}

/* All value references must be known before anything is read or written. */
static int all_known(const ffmu_instance *in, const char *function, const fmi2ValueReference vr[], size_t nvr)
{
    size_t i;
    int k;
    for (i = 0; i < nvr; ++i) {
        if (classify(vr[i], &k) == VK_UNKNOWN) {
            log_error(in, "%s: unknown value reference %u", function, vr[i]);
            return 0;
        }
    }
    return 1;
}

/* ======================================================================== */
/* Model evaluation                                                         */
/* ======================================================================== */

static void invalidate_caches(ffmu_instance *in) { in->xdot_valid = in->y_valid = 0; }

static double cs_time(const run_state *run)
{
    return run->start_time + (double)run->steps * FFMU_MODEL.internal_step;
}

/* Calls a CasADi function whose arg/res entries have been filled in. */
static int run_function(ffmu_instance *in, const ffmu_function *f, const char *what)
{
    int rc = f->eval(in->arg, in->res, in->iw, in->w, 0);
    if (rc != 0) {
        log_error(in, "model function '%s' failed (code %d) at t=%.9g", what, rc, in->run.time);
        return 0;
    }
    return 1;
}

/* Parameter changes invalidate the constants c(p) computed from them. */
static void parameters_changed(ffmu_instance *in)
{
    in->constants_valid = 0;
    invalidate_caches(in);
}

/* Points arg[0..2] at x, u and [p; c(p)], computing c(p) first if p changed
 * (the model functions take the parameters with their hoisted constants). */
static int set_xup_arguments(ffmu_instance *in)
{
    if (!in->constants_valid) {
        in->arg[0] = in->p;
        in->res[0] = in->p + FFMU_MODEL.np;
        if (!run_function(in, &FFMU_MODEL.constants, "constants")) return 0;
        in->constants_valid = 1;
    }
    in->arg[0] = in->x;
    in->arg[1] = in->u;
    in->arg[2] = in->p;
    return 1;
}

static int compute_derivatives(ffmu_instance *in)
{
    if (in->xdot_valid) return 1;
    if (!set_xup_arguments(in)) return 0;
    in->res[0] = in->xdot;
    if (!run_function(in, &FFMU_MODEL.derivatives, "derivatives")) return 0;
    in->xdot_valid = 1;
    return 1;
}

static int compute_outputs(ffmu_instance *in)
{
    if (in->y_valid) return 1;
    if (!set_xup_arguments(in)) return 0;
    in->res[0] = in->y;
    if (!run_function(in, &FFMU_MODEL.outputs, "outputs")) return 0;
    in->y_valid = 1;
    return 1;
}

/* A non-finite state usually comes from a non-finite input or parameter (or a
 * step far too large for the arm's stiffness); name the first suspect. */
static void suspect_hint(const ffmu_instance *in, char *out, size_t size)
{
    const ffmu_model *m = &FFMU_MODEL;
    int k = first_nonfinite(in->u, m->nu);
    out[0] = '\0';
    if (k >= 0) {
        snprintf(out, size, " (input '%s' is %s)", name_at(m->input_names, k), nonfinite_word(in->u[k]));
        return;
    }
    k = first_nonfinite(in->p, m->np);
    if (k >= 0)
        snprintf(out, size, " (parameter '%s' is %s)", name_at(m->parameter_names, k), nonfinite_word(in->p[k]));
}

static int states_finite(const ffmu_instance *in, const char *function)
{
    char hint[160];
    int k = first_nonfinite(in->x, FFMU_MODEL.nx);
    if (k < 0) return 1;
    suspect_hint(in, hint, sizeof hint);
    log_error(in, "%s: state '%s' is %s at t=%.9g%s", function, name_at(FFMU_MODEL.state_names, k),
              nonfinite_word(in->x[k]), in->run.time, hint);
    return 0;
}

static int outputs_finite(ffmu_instance *in, const char *function)
{
    char hint[160];
    int k;
    if (!compute_outputs(in)) return 0;
    k = first_nonfinite(in->y, FFMU_MODEL.ny);
    if (k < 0) return 1;
    suspect_hint(in, hint, sizeof hint);
    log_error(in, "%s: output '%s' is %s at t=%.9g%s", function, name_at(FFMU_MODEL.output_names, k),
              nonfinite_word(in->y[k]), in->run.time, hint);
    return 0;
}

/* One internal step of co-simulation. x is only replaced by a finite result,
 * so after a failure x, steps and the time still describe the last good point
 * (which fmi2GetRealStatus reports as fmi2LastSuccessfulTime). */
static int internal_step(ffmu_instance *in)
{
    const ffmu_model *m = &FFMU_MODEL;
    const double h = m->internal_step;
    char hint[160];
    int k;
    if (!set_xup_arguments(in)) return 0;
    in->arg[3] = &h;
    in->res[0] = in->x_next;
    if (!run_function(in, &m->step, "step")) return 0;
    k = first_nonfinite(in->x_next, m->nx);
    if (k >= 0) {
        suspect_hint(in, hint, sizeof hint);
        log_error(in, "fmi2DoStep: state '%s' became %s in the internal step from t=%.9g to t=%.9g%s",
                  name_at(m->state_names, k), nonfinite_word(in->x_next[k]), in->run.time, in->run.time + h,
                  hint);
        return 0;
    }
    memcpy(in->x, in->x_next, (size_t)m->nx * sizeof(double));
    in->run.steps++;
    in->run.time = cs_time(&in->run);
    invalidate_caches(in);
    return 1;
}

/* ======================================================================== */
/* Instantiation                                                            */
/* ======================================================================== */

typedef struct {
    ffmu_int arg, res, iw, w;
} work_sizes;

/* Checks one generated function and raises the work sizes to cover it. The
 * arg/res arrays must hold at least the function's inputs and outputs, or the
 * glue would write past them. */
static int add_function(const ffmu_function *f, int n_in, int n_out, work_sizes *max)
{
    ffmu_int a = 0, r = 0, iw = 0, w = 0;
    if (!f->eval || !f->work || f->work(&a, &r, &iw, &w) != 0) return 0;
    if (a < n_in || r < n_out || iw < 0 || w < 0) return 0;
    if (a > max->arg) max->arg = a;
    if (r > max->res) max->res = r;
    if (iw > max->iw) max->iw = iw;
    if (w > max->w) max->w = w;
    return 1;
}

/* NULL if the generated model data is usable, else what is wrong with it. */
static const char *model_problem(work_sizes *ws)
{
    const ffmu_model *m = &FFMU_MODEL;
    ws->arg = ws->res = ws->iw = ws->w = 0;
    if (!m->guid) return "the model has no GUID";
    if (m->nq < 0 || m->nx != 2 * m->nq || m->nu < 0 || m->ny < 0 || m->np < 0 || m->nc < 0)
        return "the model sizes are inconsistent";
    if ((m->np > 0 && (!m->parameter_start || !m->parameter_tunable)) || (m->nx > 0 && !m->state_start))
        return "the model has no start values";
    if (!isfinite(m->internal_step) || m->internal_step <= 0) return "the internal step is not positive";
    if (!add_function(&m->constants, 1, 1, ws)) return "the model function 'constants' is missing or invalid";
    if (!add_function(&m->step, 4, 1, ws)) return "the model function 'step' is missing or invalid";
    if (!add_function(&m->derivatives, 3, 1, ws)) return "the model function 'derivatives' is missing or invalid";
    if (!add_function(&m->outputs, 3, 1, ws)) return "the model function 'outputs' is missing or invalid";
    if (!add_function(&m->directional, 5, 2, ws)) return "the model function 'directional' is missing or invalid";
    return NULL;
}

/* calloc semantics; at least one element so that a size of 0 is no failure. */
static void *allocate(const fmi2CallbackFunctions *cb, size_t count, size_t size)
{
    return cb->allocateMemory(count ? count : 1, size);
}

static void release(const fmi2CallbackFunctions *cb, void *p)
{
    if (p) cb->freeMemory(p);
}

static void free_instance(ffmu_instance *in)
{
    fmi2CallbackFunctions cb = in->cb; /* in itself is freed last */
    release(&cb, in->name);
    release(&cb, in->x); /* the start of the block of all doubles */
    release(&cb, in->iw);
    release(&cb, (void *)in->arg);
    release(&cb, in->res);
    release(&cb, in);
}

/* Takes n doubles from the block. */
static double *carve(double **cursor, int n)
{
    double *p = *cursor;
    *cursor += n;
    return p;
}

static ffmu_instance *allocate_instance(const fmi2CallbackFunctions *cb, const char *name,
                                        const work_sizes *ws)
{
    const ffmu_model *m = &FFMU_MODEL;
    size_t n_doubles = 5 * (size_t)m->nx + 2 * (size_t)m->nu + (size_t)m->np + (size_t)m->nc + 2 * (size_t)m->ny +
                       (size_t)ws->w;
    double *block, *cursor;
    ffmu_instance *in = (ffmu_instance *)cb->allocateMemory(1, sizeof *in);
    if (!in) return NULL;
    memset(in, 0, sizeof *in); /* free_instance relies on NULL pointers */
    in->cb = *cb;
    in->name = (char *)allocate(cb, strlen(name) + 1, 1);
    block = (double *)allocate(cb, n_doubles, sizeof(double));
    in->iw = (ffmu_int *)allocate(cb, (size_t)ws->iw, sizeof(ffmu_int));
    in->arg = (const double **)allocate(cb, (size_t)ws->arg, sizeof(const double *));
    in->res = (double **)allocate(cb, (size_t)ws->res, sizeof(double *));
    in->x = block; /* x starts the block: free_instance frees the block through it */
    if (!in->name || !block || !in->iw || !in->arg || !in->res) {
        free_instance(in);
        return NULL;
    }
    memcpy(in->name, name, strlen(name) + 1);
    cursor = block;
    in->x = carve(&cursor, m->nx);
    in->x_next = carve(&cursor, m->nx);
    in->xdot = carve(&cursor, m->nx);
    in->dx = carve(&cursor, m->nx);
    in->dxdot = carve(&cursor, m->nx);
    in->u = carve(&cursor, m->nu);
    in->du = carve(&cursor, m->nu);
    in->p = carve(&cursor, m->np + m->nc);
    in->y = carve(&cursor, m->ny);
    in->dy = carve(&cursor, m->ny);
    in->w = carve(&cursor, (int)ws->w);
    return in;
}

/* Start values: what fmi2Instantiate and fmi2Reset leave behind. */
static void set_start_values(ffmu_instance *in)
{
    const ffmu_model *m = &FFMU_MODEL;
    int i;
    for (i = 0; i < m->nx; ++i) in->x[i] = m->state_start[i];
    for (i = 0; i < m->nu; ++i) in->u[i] = 0.0; /* inputs have start 0 */
    for (i = 0; i < m->np; ++i) in->p[i] = m->parameter_start[i];
    memset(&in->run, 0, sizeof in->run);
    in->run.state = ST_INSTANTIATED;
    parameters_changed(in);
}

/* FNV-1a; tells snapshots of this model from those of other models. */
static uint32_t hash_string(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; ++s) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

/* ======================================================================== */
/* Common functions                                                         */
/* ======================================================================== */

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }

const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[])
{
    ffmu_instance *in = (ffmu_instance *)c;
    unsigned selected = 0;
    size_t i;
    int j;
    if (!call_allowed(in, &R_SetDebugLogging)) return fmi2Error;
    if (!array_ok(in, R_SetDebugLogging.name, "categories", categories, nCategories)) return fmi2Error;
    /* Validate every category first: a failing call changes nothing. */
    for (i = 0; i < nCategories; ++i) {
        for (j = 0; j < LOG_CATEGORY_COUNT; ++j)
            if (categories[i] && strcmp(categories[i], LOG_CATEGORY_NAMES[j]) == 0) break;
        if (j == LOG_CATEGORY_COUNT) {
            log_error(in, "fmi2SetDebugLogging: unknown log category '%s' (known: logStatusError, "
                          "logStatusWarning, logAll)",
                      categories[i] ? categories[i] : "(NULL)");
            return fmi2Error;
        }
        selected |= LOG_CATEGORY_BITS[j];
    }
    if (nCategories == 0) selected = LOG_ERROR | LOG_WARNING | LOG_ALL; /* the standard: all categories */
    if (loggingOn)
        in->log_categories |= selected;
    else
        in->log_categories &= ~selected;
    return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn)
{
    const char *problem;
    work_sizes ws;
    ffmu_instance *in;
    (void)fmuResourceLocation; /* the model needs no resources */
    (void)visible;             /* there is nothing to show */
    if (!functions) return NULL; /* no logger to tell */
    if (!functions->allocateMemory || !functions->freeMemory) {
        log_instantiate_error(functions, instanceName, "fmi2Instantiate: allocateMemory and freeMemory are required");
        return NULL;
    }
    if (!instanceName || !instanceName[0]) {
        log_instantiate_error(functions, instanceName, "fmi2Instantiate: instanceName is NULL or empty");
        return NULL;
    }
    if (fmuType != fmi2ModelExchange && fmuType != fmi2CoSimulation) {
        log_instantiate_error(functions, instanceName, "fmi2Instantiate: unknown fmuType %d", (int)fmuType);
        return NULL;
    }
    if (!fmuGUID || !FFMU_MODEL.guid || strcmp(fmuGUID, FFMU_MODEL.guid) != 0) {
        log_instantiate_error(functions, instanceName,
                              "fmi2Instantiate: GUID '%s' does not match the GUID '%s' of this binary "
                              "(modelDescription.xml and binary belong to different FMUs)",
                              fmuGUID ? fmuGUID : "(NULL)", FFMU_MODEL.guid ? FFMU_MODEL.guid : "(NULL)");
        return NULL;
    }
    problem = model_problem(&ws);
    if (problem) {
        log_instantiate_error(functions, instanceName, "fmi2Instantiate: the generated model is broken: %s",
                              problem);
        return NULL;
    }
    in = allocate_instance(functions, instanceName, &ws);
    if (!in) {
        log_instantiate_error(functions, instanceName, "fmi2Instantiate: out of memory");
        return NULL;
    }
    in->type = fmuType;
    in->log_categories = loggingOn ? (LOG_ERROR | LOG_WARNING | LOG_ALL) : 0;
    in->guid_hash = hash_string(FFMU_MODEL.guid);
    set_start_values(in);
    log_trace(in, "fmi2Instantiate: model '%s', %s, nx=%d nu=%d ny=%d np=%d, internal step %.9g s",
              FFMU_MODEL.model_name ? FFMU_MODEL.model_name : "?",
              fmuType == fmi2CoSimulation ? "co-simulation" : "model exchange", FFMU_MODEL.nx, FFMU_MODEL.nu,
              FFMU_MODEL.ny, FFMU_MODEL.np, FFMU_MODEL.internal_step);
    return in;
}

void fmi2FreeInstance(fmi2Component c)
{
    if (c) free_instance((ffmu_instance *)c);
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    ffmu_instance *in = (ffmu_instance *)c;
    (void)toleranceDefined; /* fixed-step integration: there is no tolerance to apply */
    (void)tolerance;
    if (!call_allowed(in, &R_SetupExperiment)) return fmi2Error;
    if (!isfinite(startTime)) {
        log_error(in, "fmi2SetupExperiment: startTime %g is not finite", startTime);
        return fmi2Error;
    }
    if (stopTimeDefined && (!isfinite(stopTime) || stopTime < startTime)) {
        log_error(in, "fmi2SetupExperiment: stopTime %g is before startTime %g", stopTime, startTime);
        return fmi2Error;
    }
    in->run.start_time = in->run.time = startTime;
    in->run.steps = 0;
    in->run.stop_time_defined = stopTimeDefined ? 1 : 0;
    in->run.stop_time = stopTimeDefined ? stopTime : 0.0;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!call_allowed(in, &R_EnterInitializationMode)) return fmi2Error;
    in->run.state = ST_INITIALIZATION;
    return fmi2OK;
}

/* The start point must be valid before the importer relies on it. */
fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!call_allowed(in, &R_ExitInitializationMode)) return fmi2Error;
    if (!states_finite(in, R_ExitInitializationMode.name) || !outputs_finite(in, R_ExitInitializationMode.name)) {
        in->run.state = ST_ERROR;
        return fmi2Error;
    }
    in->run.state = in->type == fmi2CoSimulation ? ST_STEP_COMPLETE : ST_EVENT;
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!call_allowed(in, &R_Terminate)) return fmi2Error;
    in->run.state = ST_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!call_allowed(in, &R_Reset)) return fmi2Error;
    set_start_values(in); /* debug logging settings are kept */
    return fmi2OK;
}

/* ======================================================================== */
/* Getting and setting variables                                            */
/* ======================================================================== */

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[])
{
    ffmu_instance *in = (ffmu_instance *)c;
    const int nq = FFMU_MODEL.nq;
    size_t i;
    int k;
    if (!call_allowed(in, &R_GetReal)) return fmi2Error;
    if (!array_ok(in, R_GetReal.name, "vr", vr, nvr) || !array_ok(in, R_GetReal.name, "value", value, nvr) ||
        !all_known(in, R_GetReal.name, vr, nvr))
        return fmi2Error;
    for (i = 0; i < nvr; ++i) {
        switch (classify(vr[i], &k)) {
        case VK_PARAMETER: value[i] = in->p[k]; break;
        case VK_STATE: value[i] = in->x[k]; break;
        case VK_INPUT: value[i] = in->u[k]; break;
        case VK_OUTPUT:
            if (!compute_outputs(in)) return fmi2Error;
            value[i] = in->y[k];
            break;
        case VK_ACCELERATION:
            if (!compute_derivatives(in)) return fmi2Error;
            value[i] = in->xdot[nq + k];
            break;
        default: return fmi2Error; /* excluded by all_known */
        }
    }
    return fmi2OK;
}

/* NULL if the variable may be set in the current state, else why not. */
static const char *set_refusal(const ffmu_instance *in, var_kind kind, int k)
{
    const unsigned st = (unsigned)in->run.state;
    switch (kind) {
    case VK_PARAMETER:
        if (st & BEFORE_RUN) return NULL;
        if (!FFMU_MODEL.parameter_tunable[k])
            return "it is a fixed parameter: set it before fmi2ExitInitializationMode";
        if (st & (ST_STEP_COMPLETE | ST_EVENT)) return NULL;
        return "tunable parameters can be set only in stepComplete (co-simulation) or eventMode (model exchange)";
    case VK_STATE:
        if (st & BEFORE_RUN) return NULL;
        return in->type == fmi2ModelExchange ? "states are set with fmi2SetContinuousStates after initialization"
                                             : "states can only be set before fmi2ExitInitializationMode";
    case VK_INPUT: return NULL; /* every state R_SetReal allows */
    case VK_OUTPUT: return "outputs are computed by the model";
    case VK_ACCELERATION: return "accelerations are computed by the model";
    default: return "unknown value reference";
    }
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Real value[])
{
    ffmu_instance *in = (ffmu_instance *)c;
    char label[160];
    const char *why;
    var_kind kind;
    size_t i;
    int k;
    if (!call_allowed(in, &R_SetReal)) return fmi2Error;
    if (!array_ok(in, R_SetReal.name, "vr", vr, nvr) || !array_ok(in, R_SetReal.name, "value", value, nvr) ||
        !all_known(in, R_SetReal.name, vr, nvr))
        return fmi2Error;
    /* Refuse the whole call before changing anything. */
    for (i = 0; i < nvr; ++i) {
        kind = classify(vr[i], &k); /* separate statement: k must be set before set_refusal reads it */
        why = set_refusal(in, kind, k);
        if (why) {
            log_error(in, "fmi2SetReal: cannot set %s in state %s: %s", describe_variable(vr[i], label, sizeof label),
                      state_name(in->run.state), why);
            return fmi2Error;
        }
    }
    for (i = 0; i < nvr; ++i) {
        switch (classify(vr[i], &k)) {
        case VK_PARAMETER: in->p[k] = value[i]; in->constants_valid = 0; break;
        case VK_STATE: in->x[k] = value[i]; break;
        case VK_INPUT: in->u[k] = value[i]; break;
        default: break; /* refused above */
        }
        if (!isfinite(value[i]))
            log_warning(in, "fmi2SetReal: %s set to %s", describe_variable(vr[i], label, sizeof label),
                        nonfinite_word(value[i]));
    }
    /* setting inputs every step must not redo c(p): only parameters clear it */
    if (nvr > 0) invalidate_caches(in);
    return fmi2OK;
}

/* The model has only Real variables: any other value reference is unknown. */
static fmi2Status no_variables(ffmu_instance *in, const call_rule *rule, const fmi2ValueReference vr[], size_t nvr,
                               const void *value, const char *type)
{
    if (!call_allowed(in, rule)) return fmi2Error;
    if (!array_ok(in, rule->name, "vr", vr, nvr) || !array_ok(in, rule->name, "value", value, nvr))
        return fmi2Error;
    if (nvr > 0) {
        log_error(in, "%s: unknown value reference %u (the model has no %s variables)", rule->name, vr[0], type);
        return fmi2Error;
    }
    return fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Integer value[])
{
    return no_variables((ffmu_instance *)c, &R_GetInteger, vr, nvr, value, "Integer");
}

fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Boolean value[])
{
    return no_variables((ffmu_instance *)c, &R_GetBoolean, vr, nvr, value, "Boolean");
}

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2String value[])
{
    return no_variables((ffmu_instance *)c, &R_GetString, vr, nvr, value, "String");
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Integer value[])
{
    return no_variables((ffmu_instance *)c, &R_SetInteger, vr, nvr, value, "Integer");
}

fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Boolean value[])
{
    return no_variables((ffmu_instance *)c, &R_SetBoolean, vr, nvr, value, "Boolean");
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2String value[])
{
    return no_variables((ffmu_instance *)c, &R_SetString, vr, nvr, value, "String");
}

/* ======================================================================== */
/* Directional derivatives                                                  */
/* ======================================================================== */

/* Unknowns: outputs, derivatives of states and accelerations. The derivative
 * of q_k is qd_k (state nq + k), so the state vr nq + k as an unknown stands
 * for der(q_k) = xdot[k]; q_k itself is no unknown. Returns the index into
 * xdot (*is_output = 0) or y (*is_output = 1), -1 if vr is no unknown. */
static int unknown_index(fmi2ValueReference vr, int *is_output)
{
    const int nq = FFMU_MODEL.nq;
    int k;
    *is_output = 0;
    switch (classify(vr, &k)) {
    case VK_OUTPUT: *is_output = 1; return k;
    case VK_STATE: return k >= nq ? k - nq : -1;
    case VK_ACCELERATION: return nq + k;
    default: return -1;
    }
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown_ref[], size_t nUnknown,
                                        const fmi2ValueReference vKnown_ref[], size_t nKnown,
                                        const fmi2Real dvKnown[], fmi2Real dvUnknown[])
{
    ffmu_instance *in = (ffmu_instance *)c;
    const ffmu_model *m = &FFMU_MODEL;
    const char *fn = R_GetDirectionalDerivative.name;
    char label[160];
    size_t i;
    int k, is_output;
    if (!call_allowed(in, &R_GetDirectionalDerivative)) return fmi2Error;
    if (!array_ok(in, fn, "vUnknown_ref", vUnknown_ref, nUnknown) ||
        !array_ok(in, fn, "vKnown_ref", vKnown_ref, nKnown) ||
        !array_ok(in, fn, "dvKnown", dvKnown, nKnown) || !array_ok(in, fn, "dvUnknown", dvUnknown, nUnknown))
        return fmi2Error;
    for (i = 0; i < nUnknown; ++i) {
        if (unknown_index(vUnknown_ref[i], &is_output) < 0) {
            log_error(in, "%s: %s cannot be an unknown (use outputs, derivatives of states or accelerations)", fn,
                      describe_variable(vUnknown_ref[i], label, sizeof label));
            return fmi2Error;
        }
    }
    for (i = 0; i < (size_t)m->nx; ++i) in->dx[i] = 0.0;
    for (i = 0; i < (size_t)m->nu; ++i) in->du[i] = 0.0;
    for (i = 0; i < nKnown; ++i) {
        switch (classify(vKnown_ref[i], &k)) {
        case VK_STATE: in->dx[k] += dvKnown[i]; break; /* a repeated known adds up, as in J * v */
        case VK_INPUT: in->du[k] += dvKnown[i]; break;
        default:
            log_error(in, "%s: %s cannot be a known (use states or inputs)", fn,
                      describe_variable(vKnown_ref[i], label, sizeof label));
            return fmi2Error;
        }
    }
    if (!set_xup_arguments(in)) return fmi2Error;
    in->arg[3] = in->dx;
    in->arg[4] = in->du;
    in->res[0] = in->dxdot;
    in->res[1] = in->dy;
    if (!run_function(in, &m->directional, "directional")) return fmi2Error;
    for (i = 0; i < nUnknown; ++i) {
        k = unknown_index(vUnknown_ref[i], &is_output);
        dvUnknown[i] = is_output ? in->dy[k] : in->dxdot[k];
    }
    return fmi2OK;
}

/* ======================================================================== */
/* FMU state: snapshots and their serialization                             */
/* ======================================================================== */

#define SNAPSHOT_MAGIC 0x46464D55u /* "FFMU" */

typedef struct {
    uint32_t magic;     /* SNAPSHOT_MAGIC while alive, 0 once freed */
    uint32_t guid_hash; /* the model that took it */
    int type, nx, nu, np;
    run_state run;
    fmi2CallbackFreeMemory free_memory; /* of the instance that allocated it */
    double *values;                      /* x, u, p: nx + nu + np */
} ffmu_snapshot;

static int value_count(void) { return FFMU_MODEL.nx + FFMU_MODEL.nu + FFMU_MODEL.np; }

/* A snapshot can only be used by instances of the same model and type. */
static int snapshot_usable(const ffmu_instance *in, const ffmu_snapshot *s, const char *function)
{
    if (s->magic != SNAPSHOT_MAGIC) {
        log_error(in, "%s: not an FMU state of a flexfmu FMU (freed already?)", function);
        return 0;
    }
    if (s->guid_hash != in->guid_hash || s->nx != FFMU_MODEL.nx || s->nu != FFMU_MODEL.nu ||
        s->np != FFMU_MODEL.np) {
        log_error(in, "%s: the FMU state belongs to another model (nx=%d nu=%d np=%d)", function, s->nx, s->nu,
                  s->np);
        return 0;
    }
    if (s->type != (int)in->type) {
        log_error(in, "%s: the FMU state was taken in %s, this instance is %s", function,
                  s->type == fmi2CoSimulation ? "co-simulation" : "model exchange",
                  in->type == fmi2CoSimulation ? "co-simulation" : "model exchange");
        return 0;
    }
    return 1;
}

static ffmu_snapshot *new_snapshot(const ffmu_instance *in)
{
    ffmu_snapshot *s = (ffmu_snapshot *)allocate(&in->cb, 1, sizeof *s);
    if (!s) return NULL;
    s->values = (double *)allocate(&in->cb, (size_t)value_count(), sizeof(double));
    if (!s->values) {
        release(&in->cb, s);
        return NULL;
    }
    s->magic = SNAPSHOT_MAGIC;
    s->guid_hash = in->guid_hash;
    s->type = (int)in->type;
    s->nx = FFMU_MODEL.nx;
    s->nu = FFMU_MODEL.nu;
    s->np = FFMU_MODEL.np;
    s->free_memory = in->cb.freeMemory;
    return s;
}

static void free_snapshot(ffmu_snapshot *s)
{
    fmi2CallbackFreeMemory free_memory = s->free_memory;
    s->magic = 0; /* so that a second free is recognised, as long as the memory is not reused */
    free_memory(s->values);
    free_memory(s);
}

/* The caches are not saved: recomputing them from (x, u, p) gives the same bits. */
static void save_snapshot(const ffmu_instance *in, ffmu_snapshot *s)
{
    const ffmu_model *m = &FFMU_MODEL;
    s->run = in->run;
    memcpy(s->values, in->x, (size_t)m->nx * sizeof(double));
    memcpy(s->values + m->nx, in->u, (size_t)m->nu * sizeof(double));
    memcpy(s->values + m->nx + m->nu, in->p, (size_t)m->np * sizeof(double));
}

static void restore_snapshot(ffmu_instance *in, const ffmu_snapshot *s)
{
    const ffmu_model *m = &FFMU_MODEL;
    in->run = s->run;
    memcpy(in->x, s->values, (size_t)m->nx * sizeof(double));
    memcpy(in->u, s->values + m->nx, (size_t)m->nu * sizeof(double));
    memcpy(in->p, s->values + m->nx + m->nu, (size_t)m->np * sizeof(double));
    parameters_changed(in);
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    ffmu_instance *in = (ffmu_instance *)c;
    ffmu_snapshot *s;
    if (!call_allowed(in, &R_GetFMUstate)) return fmi2Error;
    if (!pointer_ok(in, R_GetFMUstate.name, "FMUstate", FMUstate)) return fmi2Error;
    /* On entry *FMUstate is NULL (allocate) or a state returned before (reuse it). */
    s = (ffmu_snapshot *)*FMUstate;
    if (s && !snapshot_usable(in, s, R_GetFMUstate.name)) return fmi2Error;
    if (!s) s = new_snapshot(in);
    if (!s) {
        log_error(in, "%s: out of memory", R_GetFMUstate.name);
        return fmi2Error;
    }
    save_snapshot(in, s);
    *FMUstate = s;
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate FMUstate)
{
    ffmu_instance *in = (ffmu_instance *)c;
    const ffmu_snapshot *s = (const ffmu_snapshot *)FMUstate;
    if (!call_allowed(in, &R_SetFMUstate)) return fmi2Error;
    if (!pointer_ok(in, R_SetFMUstate.name, "FMUstate", s) || !snapshot_usable(in, s, R_SetFMUstate.name))
        return fmi2Error;
    restore_snapshot(in, s);
    return fmi2OK;
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!call_allowed(in, &R_FreeFMUstate)) return fmi2Error;
    if (!pointer_ok(in, R_FreeFMUstate.name, "FMUstate", FMUstate)) return fmi2Error;
    if (!*FMUstate) return fmi2OK; /* like free(NULL) */
    if (!snapshot_usable(in, (const ffmu_snapshot *)*FMUstate, R_FreeFMUstate.name)) return fmi2Error;
    free_snapshot((ffmu_snapshot *)*FMUstate);
    *FMUstate = NULL;
    return fmi2OK;
}

/*
 * Serialized format, version 1 (native byte order; every field is copied
 * with memcpy, so the buffer needs no alignment):
 *   char    tag[8]        "FFMUSTAT"
 *   uint32  version       1
 *   uint32  guid_length   then guid_length bytes of the GUID (no NUL)
 *   int32   fmu_type, machine_state, nx, nu, np, stop_time_defined
 *   int64   steps
 *   float64 start_time, stop_time, time
 *   float64 x[nx], u[nu], p[np]
 */
/* The format writes doubles as 8 bytes (compile-time check). */
typedef char ffmu_double_is_8_bytes[sizeof(double) == 8 ? 1 : -1];

static const char SERIAL_TAG[8] = {'F', 'F', 'M', 'U', 'S', 'T', 'A', 'T'};
#define SERIAL_VERSION 1u
#define SERIAL_PREFIX_SIZE (8 + 4 + 4)      /* tag, version, guid length */
#define SERIAL_FIXED_SIZE (6 * 4 + 8 + 3 * 8) /* the fields after the GUID */

static size_t serialized_size(void)
{
    return SERIAL_PREFIX_SIZE + strlen(FFMU_MODEL.guid) + SERIAL_FIXED_SIZE + (size_t)value_count() * 8;
}

typedef struct {
    unsigned char *pos;
    size_t left;
} byte_writer;

static void put(byte_writer *wr, const void *data, size_t n)
{
    if (n > wr->left) return; /* cannot happen: the size was checked first */
    memcpy(wr->pos, data, n);
    wr->pos += n;
    wr->left -= n;
}

static void put_i32(byte_writer *wr, int v)
{
    int32_t t = (int32_t)v;
    put(wr, &t, 4);
}

typedef struct {
    const unsigned char *pos;
    size_t left;
} byte_reader;

/* Reads n bytes if there are that many; callers check the total size first. */
static int get(byte_reader *rd, void *data, size_t n)
{
    if (n > rd->left) return 0;
    memcpy(data, rd->pos, n);
    rd->pos += n;
    rd->left -= n;
    return 1;
}

static int get_i32(byte_reader *rd)
{
    int32_t t = 0;
    get(rd, &t, 4);
    return (int)t;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate FMUstate, size_t *size)
{
    ffmu_instance *in = (ffmu_instance *)c;
    const char *fn = R_SerializedFMUstateSize.name;
    if (!call_allowed(in, &R_SerializedFMUstateSize)) return fmi2Error;
    if (!pointer_ok(in, fn, "FMUstate", FMUstate) || !pointer_ok(in, fn, "size", size) ||
        !snapshot_usable(in, (const ffmu_snapshot *)FMUstate, fn))
        return fmi2Error;
    *size = serialized_size();
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate FMUstate, fmi2Byte serializedState[], size_t size)
{
    ffmu_instance *in = (ffmu_instance *)c;
    const char *fn = R_SerializeFMUstate.name;
    const ffmu_snapshot *s = (const ffmu_snapshot *)FMUstate;
    const size_t needed = serialized_size();
    const uint32_t version = SERIAL_VERSION, guid_length = (uint32_t)strlen(FFMU_MODEL.guid);
    byte_writer wr;
    int64_t steps;
    if (!call_allowed(in, &R_SerializeFMUstate)) return fmi2Error;
    if (!pointer_ok(in, fn, "FMUstate", s) || !array_ok(in, fn, "serializedState", serializedState, size) ||
        !snapshot_usable(in, s, fn))
        return fmi2Error;
    if (size < needed) {
        log_error(in, "%s: the buffer has %lu bytes, %lu are needed (see fmi2SerializedFMUstateSize)", fn,
                  (unsigned long)size, (unsigned long)needed);
        return fmi2Error;
    }
    wr.pos = (unsigned char *)serializedState;
    wr.left = size;
    put(&wr, SERIAL_TAG, sizeof SERIAL_TAG);
    put(&wr, &version, 4);
    put(&wr, &guid_length, 4);
    put(&wr, FFMU_MODEL.guid, guid_length);
    put_i32(&wr, s->type);
    put_i32(&wr, (int)s->run.state);
    put_i32(&wr, s->nx);
    put_i32(&wr, s->nu);
    put_i32(&wr, s->np);
    put_i32(&wr, s->run.stop_time_defined);
    steps = (int64_t)s->run.steps;
    put(&wr, &steps, 8);
    put(&wr, &s->run.start_time, 8);
    put(&wr, &s->run.stop_time, 8);
    put(&wr, &s->run.time, 8);
    put(&wr, s->values, (size_t)value_count() * 8);
    return fmi2OK;
}

/* The machine states an instance of the given type can be in. */
static int state_valid_for(int state, fmi2Type type)
{
    const unsigned own = type == fmi2CoSimulation ? ST_STEP_COMPLETE : (ST_EVENT | ST_CONTINUOUS);
    const unsigned valid = ST_INSTANTIATED | ST_INITIALIZATION | own | ST_TERMINATED | ST_ERROR;
    unsigned st = (unsigned)state;
    return state > 0 && (st & (st - 1)) == 0 && (st & valid) != 0; /* exactly one valid bit */
}

/* Replaces non-printable bytes, for quoting a foreign GUID in a message. */
static void printable_copy(const unsigned char *src, size_t n, char *out, size_t size)
{
    size_t i;
    if (n > size - 1) n = size - 1;
    for (i = 0; i < n; ++i) out[i] = (src[i] >= 32 && src[i] < 127) ? (char)src[i] : '?';
    out[n] = '\0';
}

/* Reads and checks a serialized state into *r and values; 0 (logged) if invalid. */
static int parse_serialized(ffmu_instance *in, const unsigned char *bytes, size_t size, run_state *r, double *values)
{
    const char *fn = R_DeSerializeFMUstate.name;
    const size_t guid_length = strlen(FFMU_MODEL.guid);
    char tag[8], seen[80];
    uint32_t version = 0, stored_length = 0;
    int type, state, nx, nu, np;
    int64_t steps = 0;
    size_t expected;
    byte_reader rd;
    rd.pos = bytes;
    rd.left = size;
    if (size < SERIAL_PREFIX_SIZE) {
        log_error(in, "%s: %lu bytes are too few for an FMU state", fn, (unsigned long)size);
        return 0;
    }
    get(&rd, tag, sizeof tag);
    get(&rd, &version, 4);
    get(&rd, &stored_length, 4);
    if (memcmp(tag, SERIAL_TAG, sizeof tag) != 0) {
        log_error(in, "%s: the bytes are not a serialized flexfmu FMU state (bad magic tag)", fn);
        return 0;
    }
    if (version != SERIAL_VERSION) {
        log_error(in, "%s: serialization format version %lu is not supported (this FMU reads version %u)", fn,
                  (unsigned long)version, SERIAL_VERSION);
        return 0;
    }
    if (stored_length != guid_length || rd.left < guid_length || memcmp(rd.pos, FFMU_MODEL.guid, guid_length) != 0) {
        printable_copy(rd.pos, stored_length < rd.left ? stored_length : rd.left, seen, sizeof seen);
        log_error(in, "%s: the FMU state belongs to the model with GUID '%s', not to '%s'", fn, seen,
                  FFMU_MODEL.guid);
        return 0;
    }
    rd.pos += guid_length;
    rd.left -= guid_length;
    if (rd.left < SERIAL_FIXED_SIZE) {
        log_error(in, "%s: the FMU state is truncated (%lu bytes)", fn, (unsigned long)size);
        return 0;
    }
    type = get_i32(&rd);
    state = get_i32(&rd);
    nx = get_i32(&rd);
    nu = get_i32(&rd);
    np = get_i32(&rd);
    r->stop_time_defined = get_i32(&rd) ? 1 : 0;
    get(&rd, &steps, 8);
    get(&rd, &r->start_time, 8);
    get(&rd, &r->stop_time, 8);
    get(&rd, &r->time, 8);
    if (type != (int)in->type) {
        log_error(in, "%s: the FMU state was saved by a %s instance, this one is %s", fn,
                  type == fmi2CoSimulation    ? "co-simulation"
                  : type == fmi2ModelExchange ? "model-exchange"
                                              : "unknown",
                  in->type == fmi2CoSimulation ? "co-simulation" : "model exchange");
        return 0;
    }
    if (!state_valid_for(state, in->type)) {
        log_error(in, "%s: invalid machine state %d in the FMU state", fn, state);
        return 0;
    }
    if (nx != FFMU_MODEL.nx || nu != FFMU_MODEL.nu || np != FFMU_MODEL.np) {
        log_error(in, "%s: the FMU state has nx=%d nu=%d np=%d, the model nx=%d nu=%d np=%d", fn, nx, nu, np,
                  FFMU_MODEL.nx, FFMU_MODEL.nu, FFMU_MODEL.np);
        return 0;
    }
    expected = serialized_size();
    if (size != expected) {
        log_error(in, "%s: the FMU state has %lu bytes, %lu expected", fn, (unsigned long)size,
                  (unsigned long)expected);
        return 0;
    }
    if (steps < 0 || !isfinite(r->start_time) || !isfinite(r->time) ||
        (r->stop_time_defined && !isfinite(r->stop_time))) {
        log_error(in, "%s: the FMU state has an invalid time or step count", fn);
        return 0;
    }
    r->state = (machine_state)state;
    r->steps = (long long)steps;
    get(&rd, values, (size_t)value_count() * 8);
    return 1;
}

/* Parses into a new snapshot; if *FMUstate is a state returned before, it is
 * overwritten (only once everything is valid) and the pointer stays valid. */
fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte serializedState[], size_t size,
                                   fmi2FMUstate *FMUstate)
{
    ffmu_instance *in = (ffmu_instance *)c;
    const char *fn = R_DeSerializeFMUstate.name;
    ffmu_snapshot *old, *fresh;
    if (!call_allowed(in, &R_DeSerializeFMUstate)) return fmi2Error;
    if (!array_ok(in, fn, "serializedState", serializedState, size) || !pointer_ok(in, fn, "FMUstate", FMUstate))
        return fmi2Error;
    old = (ffmu_snapshot *)*FMUstate;
    if (old && !snapshot_usable(in, old, fn)) return fmi2Error;
    fresh = new_snapshot(in);
    if (!fresh) {
        log_error(in, "%s: out of memory", fn);
        return fmi2Error;
    }
    if (!parse_serialized(in, (const unsigned char *)serializedState, size, &fresh->run, fresh->values)) {
        free_snapshot(fresh);
        return fmi2Error;
    }
    if (!old) {
        *FMUstate = fresh;
        return fmi2OK;
    }
    old->run = fresh->run;
    memcpy(old->values, fresh->values, (size_t)value_count() * sizeof(double));
    free_snapshot(fresh);
    return fmi2OK;
}

/* ======================================================================== */
/* Model exchange                                                           */
/* ======================================================================== */

fmi2Status fmi2EnterEventMode(fmi2Component c)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!call_allowed(in, &R_EnterEventMode)) return fmi2Error;
    in->run.state = ST_EVENT;
    return fmi2OK;
}

/* The model has no events: nothing changes and no event is scheduled. */
fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *eventInfo)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!call_allowed(in, &R_NewDiscreteStates)) return fmi2Error;
    if (!pointer_ok(in, R_NewDiscreteStates.name, "eventInfo", eventInfo)) return fmi2Error;
    eventInfo->newDiscreteStatesNeeded = fmi2False;
    eventInfo->terminateSimulation = fmi2False;
    eventInfo->nominalsOfContinuousStatesChanged = fmi2False;
    eventInfo->valuesOfContinuousStatesChanged = fmi2False;
    eventInfo->nextEventTimeDefined = fmi2False;
    eventInfo->nextEventTime = 0.0;
    return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!call_allowed(in, &R_EnterContinuousTimeMode)) return fmi2Error;
    in->run.state = ST_CONTINUOUS;
    return fmi2OK;
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation)
{
    ffmu_instance *in = (ffmu_instance *)c;
    const char *fn = R_CompletedIntegratorStep.name;
    (void)noSetFMUStatePriorToCurrentPoint; /* snapshots never depend on the past */
    if (!call_allowed(in, &R_CompletedIntegratorStep)) return fmi2Error;
    if (!pointer_ok(in, fn, "enterEventMode", enterEventMode) ||
        !pointer_ok(in, fn, "terminateSimulation", terminateSimulation))
        return fmi2Error;
    *enterEventMode = fmi2False;
    *terminateSimulation = fmi2False;
    return fmi2OK;
}

/* The dynamics do not depend on time explicitly: the time is only kept for
 * messages and fmi2GetFMUstate. */
fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!call_allowed(in, &R_SetTime)) return fmi2Error;
    if (!isfinite(time)) {
        log_error(in, "fmi2SetTime: time %g is not finite", time);
        return fmi2Error;
    }
    in->run.time = time;
    return fmi2OK;
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx)
{
    ffmu_instance *in = (ffmu_instance *)c;
    const char *fn = R_SetContinuousStates.name;
    if (!call_allowed(in, &R_SetContinuousStates)) return fmi2Error;
    if (!size_ok(in, fn, "nx", nx, FFMU_MODEL.nx) || !array_ok(in, fn, "x", x, nx)) return fmi2Error;
    memcpy(in->x, x, nx * sizeof(double));
    invalidate_caches(in);
    return fmi2OK;
}

/* A non-finite derivative is a failure of the model: error state. */
fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real derivatives[], size_t nx)
{
    ffmu_instance *in = (ffmu_instance *)c;
    const ffmu_model *m = &FFMU_MODEL;
    const char *fn = R_GetDerivatives.name;
    char hint[160];
    int k;
    if (!call_allowed(in, &R_GetDerivatives)) return fmi2Error;
    if (!size_ok(in, fn, "nx", nx, m->nx) || !array_ok(in, fn, "derivatives", derivatives, nx)) return fmi2Error;
    if (!compute_derivatives(in)) {
        in->run.state = ST_ERROR;
        return fmi2Error;
    }
    k = first_nonfinite(in->xdot, m->nx);
    if (k >= 0) {
        suspect_hint(in, hint, sizeof hint);
        log_error(in, "%s: the derivative of state '%s' is %s at t=%.9g%s", fn, name_at(m->state_names, k),
                  nonfinite_word(in->xdot[k]), in->run.time, hint);
        in->run.state = ST_ERROR;
        return fmi2Error;
    }
    memcpy(derivatives, in->xdot, nx * sizeof(double));
    return fmi2OK;
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real eventIndicators[], size_t ni)
{
    ffmu_instance *in = (ffmu_instance *)c;
    (void)eventIndicators;
    if (!call_allowed(in, &R_GetEventIndicators)) return fmi2Error;
    if (!size_ok(in, R_GetEventIndicators.name, "ni (number of event indicators)", ni, 0)) return fmi2Error;
    return fmi2OK;
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
    ffmu_instance *in = (ffmu_instance *)c;
    const char *fn = R_GetContinuousStates.name;
    if (!call_allowed(in, &R_GetContinuousStates)) return fmi2Error;
    if (!size_ok(in, fn, "nx", nx, FFMU_MODEL.nx) || !array_ok(in, fn, "x", x, nx)) return fmi2Error;
    memcpy(x, in->x, nx * sizeof(double));
    return fmi2OK;
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx)
{
    ffmu_instance *in = (ffmu_instance *)c;
    const char *fn = R_GetNominalsOfContinuousStates.name;
    size_t i;
    if (!call_allowed(in, &R_GetNominalsOfContinuousStates)) return fmi2Error;
    if (!size_ok(in, fn, "nx", nx, FFMU_MODEL.nx) || !array_ok(in, fn, "x_nominal", x_nominal, nx))
        return fmi2Error;
    for (i = 0; i < nx; ++i) x_nominal[i] = 1.0;
    return fmi2OK;
}

/* ======================================================================== */
/* Co-simulation                                                            */
/* ======================================================================== */

/* canInterpolateInputs = false: derivatives of inputs are not accepted (an
 * empty call is harmless and succeeds). */
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[])
{
    ffmu_instance *in = (ffmu_instance *)c;
    (void)vr;
    (void)order;
    (void)value;
    if (!call_allowed(in, &R_SetRealInputDerivatives)) return fmi2Error;
    if (nvr == 0) return fmi2OK;
    log_error(in, "fmi2SetRealInputDerivatives: not supported (canInterpolateInputs is false)");
    return fmi2Error;
}

/* MaxOutputDerivativeOrder = 0. */
fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[])
{
    ffmu_instance *in = (ffmu_instance *)c;
    (void)vr;
    (void)order;
    (void)value;
    if (!call_allowed(in, &R_GetRealOutputDerivatives)) return fmi2Error;
    if (nvr == 0) return fmi2OK;
    log_error(in, "fmi2GetRealOutputDerivatives: not supported (MaxOutputDerivativeOrder is 0)");
    return fmi2Error;
}

/* Longest communication step accepted, in internal steps: beyond this a
 * double no longer counts steps exactly (and a real-time target would stall). */
#define MAX_STEPS_PER_DOSTEP 1e12

/* The communication point must be the FMU time and the step a whole number
 * of internal steps, which it returns in *n. */
static int communication_step_ok(const ffmu_instance *in, double point, double size, long long *n)
{
    const double h = FFMU_MODEL.internal_step;
    const double t = in->run.time;
    double ratio;
    long long steps;
    if (!isfinite(point) || magnitude(point - t) > 1e-9 * (magnitude(t) > 1 ? magnitude(t) : 1)) {
        log_error(in, "fmi2DoStep: communication point %.17g does not match the FMU time %.17g", point, t);
        return 0;
    }
    if (!isfinite(size) || size <= 0) {
        log_error(in, "fmi2DoStep: communication step size %.17g must be positive", size);
        return 0;
    }
    ratio = size / h;
    if (ratio > MAX_STEPS_PER_DOSTEP) {
        log_error(in, "fmi2DoStep: communication step size %.17g is too large (more than %.0f internal steps)",
                  size, MAX_STEPS_PER_DOSTEP);
        return 0;
    }
    steps = (long long)(ratio + 0.5);
    if (steps < 1 || magnitude(size - (double)steps * h) > 1e-9 * size) {
        log_error(in, "fmi2DoStep: communication step size %.17g is not a multiple of the internal step %.17g s "
                      "(the communication step must be an integer multiple of the internal step)",
                  size, h);
        return 0;
    }
    *n = steps;
    return 1;
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint, fmi2Real communicationStepSize,
                      fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    ffmu_instance *in = (ffmu_instance *)c;
    long long n, i;
    (void)noSetFMUStatePriorToCurrentPoint; /* snapshots never depend on the past */
    if (!call_allowed(in, &R_DoStep)) return fmi2Error;
    if (!communication_step_ok(in, currentCommunicationPoint, communicationStepSize, &n)) return fmi2Error;
    for (i = 0; i < n; ++i) {
        if (!internal_step(in)) {
            in->run.state = ST_ERROR;
            return fmi2Error;
        }
    }
    if (!outputs_finite(in, R_DoStep.name)) {
        in->run.state = ST_ERROR;
        return fmi2Error;
    }
    return fmi2OK;
}

/* fmi2DoStep never returns fmi2Pending, so there is nothing to cancel. */
fmi2Status fmi2CancelStep(fmi2Component c)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!call_allowed(in, &R_CancelStep)) return fmi2Error;
    log_error(in, "fmi2CancelStep: asynchronous stepping is not supported (fmi2DoStep never returns fmi2Pending)");
    return fmi2Error;
}

static const char *status_kind_name(fmi2StatusKind s)
{
    switch (s) {
    case fmi2DoStepStatus: return "fmi2DoStepStatus";
    case fmi2PendingStatus: return "fmi2PendingStatus";
    case fmi2LastSuccessfulTime: return "fmi2LastSuccessfulTime";
    case fmi2Terminated: return "fmi2Terminated";
    default: return "an unknown status kind";
    }
}

static fmi2Status wrong_status_kind(const ffmu_instance *in, const char *function, fmi2StatusKind s)
{
    log_error(in, "%s: %s (%d) is not available from this function or not meaningful for this FMU", function,
              status_kind_name(s), (int)s);
    return fmi2Error;
}

/* fmi2DoStepStatus: the status of the last fmi2DoStep, which is always finished. */
fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!call_allowed(in, &R_GetStatus)) return fmi2Error;
    if (!pointer_ok(in, R_GetStatus.name, "value", value)) return fmi2Error;
    if (s != fmi2DoStepStatus) return wrong_status_kind(in, R_GetStatus.name, s);
    *value = in->run.state == ST_ERROR ? fmi2Error : fmi2OK;
    return fmi2OK;
}

/* fmi2LastSuccessfulTime: the time of the last good state (internal_step()
 * keeps the time there after a failure). */
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!call_allowed(in, &R_GetRealStatus)) return fmi2Error;
    if (!pointer_ok(in, R_GetRealStatus.name, "value", value)) return fmi2Error;
    if (s != fmi2LastSuccessfulTime) return wrong_status_kind(in, R_GetRealStatus.name, s);
    *value = in->run.time;
    return fmi2OK;
}

/* FMI 2.0 defines no integer status. */
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!call_allowed(in, &R_GetIntegerStatus)) return fmi2Error;
    if (!pointer_ok(in, R_GetIntegerStatus.name, "value", value)) return fmi2Error;
    return wrong_status_kind(in, R_GetIntegerStatus.name, s);
}

/* fmi2Terminated: the FMU never asks to stop the simulation. */
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!call_allowed(in, &R_GetBooleanStatus)) return fmi2Error;
    if (!pointer_ok(in, R_GetBooleanStatus.name, "value", value)) return fmi2Error;
    if (s != fmi2Terminated) return wrong_status_kind(in, R_GetBooleanStatus.name, s);
    *value = fmi2False;
    return fmi2OK;
}

/* fmi2PendingStatus is only meaningful after fmi2Pending, which never happens. */
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!call_allowed(in, &R_GetStringStatus)) return fmi2Error;
    if (!pointer_ok(in, R_GetStringStatus.name, "value", value)) return fmi2Error;
    return wrong_status_kind(in, R_GetStringStatus.name, s);
}
