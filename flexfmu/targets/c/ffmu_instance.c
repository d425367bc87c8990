/*
 * ffmu_instance.c - the interface-independent instance code of every flexfmu
 * model (see ffmu_instance.h for the design, the conventions and the layers).
 *
 * Time. Co-simulation counts internal steps: t = t_start + steps * h with an
 * integer counter, so no rounding error accumulates in long runs and the
 * master's communication points can be checked against the instance's time.
 * A communication step that is no multiple of h ends with one shorter step,
 * whose length is added to partial_time (zero while every step is a
 * multiple, so the fast path keeps its exact time).
 *
 * Caches. Outputs y and derivatives xdot are functions of (x, u, p) only; they
 * are computed on demand and kept until x, u or p change. The parameters'
 * constants c(p) are recomputed only when a parameter changes, not when
 * inputs do (a controller sets inputs every step).
 */

#include <math.h> /* isfinite: a macro, so this needs no libm */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ffmu_instance.h"

/* ======================================================================== */
/* Logging                                                                  */
/* ======================================================================== */

const char *const FFMU_LOG_CATEGORY_NAMES[FFMU_LOG_CATEGORY_COUNT] = {"logStatusError", "logStatusWarning",
                                                                     "logAll"};
static const unsigned LOG_CATEGORY_BITS[FFMU_LOG_CATEGORY_COUNT] = {FFMU_LOG_ERROR, FFMU_LOG_WARNING,
                                                                    FFMU_LOG_ALL};

/* Loggers treat the message like a printf format and FMI gives '#' a meaning
 * (#r12# names a variable), so both are escaped. The text is formatted here
 * rather than passed on with arguments because some loggers (FMPy's among
 * them) print the message as it is and ignore the arguments. */
static void escape_message(const char *text, char *out, size_t size)
{
    size_t n = 0;
    for (; *text && n + 3 <= size; ++text) {
        if (*text == '%' || *text == '#') out[n++] = *text;
        out[n++] = *text;
    }
    out[n] = '\0';
}

static void emit(const ffmu_host *host, const char *instance_name, ffmu_status status, const char *category,
                 const char *fmt, va_list ap)
{
    char text[512];
    char escaped[2 * sizeof text];
    if (!host || !host->log) return;
    vsnprintf(text, sizeof text, fmt, ap);
    escape_message(text, escaped, sizeof escaped);
    host->log(host, instance_name ? instance_name : "", status, category, escaped);
}

void ffmu_log_error(const ffmu_instance *in, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(&in->host, in->name, FFMU_ERROR, "logStatusError", fmt, ap);
    va_end(ap);
}

void ffmu_log_warning(const ffmu_instance *in, const char *fmt, ...)
{
    va_list ap;
    if (!(in->log_categories & (FFMU_LOG_WARNING | FFMU_LOG_ALL))) return;
    va_start(ap, fmt);
    emit(&in->host, in->name, FFMU_WARNING, "logStatusWarning", fmt, ap);
    va_end(ap);
}

void ffmu_log_trace(const ffmu_instance *in, const char *fmt, ...)
{
    va_list ap;
    if (!(in->log_categories & FFMU_LOG_ALL)) return;
    va_start(ap, fmt);
    emit(&in->host, in->name, FFMU_OK, "logAll", fmt, ap);
    va_end(ap);
}

void ffmu_log_model_warning(const ffmu_instance *in, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(&in->host, in->name, FFMU_WARNING, "logStatusWarning", fmt, ap);
    va_end(ap);
}

void ffmu_log_host_error(const ffmu_host *host, const char *instance_name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(host, instance_name, FFMU_ERROR, "logStatusError", fmt, ap);
    va_end(ap);
}

int ffmu_set_debug_logging(ffmu_instance *in, const char *fn, int on, size_t count, const char *const names[])
{
    unsigned selected = 0;
    size_t i;
    int j;
    if (!ffmu_array_ok(in, fn, "categories", names, count)) return 0;
    /* Validate every category first: a failing call changes nothing. */
    for (i = 0; i < count; ++i) {
        for (j = 0; j < FFMU_LOG_CATEGORY_COUNT; ++j)
            if (names[i] && strcmp(names[i], FFMU_LOG_CATEGORY_NAMES[j]) == 0) break;
        if (j == FFMU_LOG_CATEGORY_COUNT) {
            ffmu_log_error(in, "%s: unknown log category '%s' (known: logStatusError, logStatusWarning, logAll)",
                           fn, names[i] ? names[i] : "(NULL)");
            return 0;
        }
        selected |= LOG_CATEGORY_BITS[j];
    }
    if (count == 0) selected = FFMU_LOG_ERROR | FFMU_LOG_WARNING | FFMU_LOG_ALL; /* the standards: all */
    if (on)
        in->log_categories |= selected;
    else
        in->log_categories &= ~selected;
    return 1;
}

/* ======================================================================== */
/* Argument checks                                                          */
/* ======================================================================== */

const char *ffmu_state_name(unsigned state)
{
    switch (state) {
    case FFMU_ST_INSTANTIATED: return "instantiated";
    case FFMU_ST_INITIALIZATION: return "initializationMode";
    case FFMU_ST_STEP: return "stepMode";
    case FFMU_ST_EVENT: return "eventMode";
    case FFMU_ST_CONTINUOUS: return "continuousTimeMode";
    case FFMU_ST_TERMINATED: return "terminated";
    case FFMU_ST_ERROR: return "error";
    case FFMU_ST_FATAL: return "fatal";
    default: return "unknown";
    }
}

static void describe_states(unsigned states, char *out, size_t size)
{
    unsigned bit;
    size_t n = 0;
    out[0] = '\0';
    for (bit = 1; bit <= FFMU_ST_FATAL; bit <<= 1) {
        if (!(states & bit)) continue;
        n += (size_t)snprintf(out + n, size - n, "%s%s", n ? ", " : "", ffmu_state_name(bit));
        if (n >= size) return;
    }
    if (!n) snprintf(out, size, "no state");
}

static const char *interface_name(ffmu_interface type)
{
    return type == FFMU_MODEL_EXCHANGE ? "model exchange" : "co-simulation";
}

int ffmu_call_allowed(ffmu_instance *in, const ffmu_call_rule *rule)
{
    unsigned type_bit;
    char allowed[160];
    if (!in) return 0; /* nobody to log to */
    type_bit = in->type == FFMU_MODEL_EXCHANGE ? FFMU_FOR_ME : FFMU_FOR_CS;
    if (!(rule->types & type_bit)) {
        ffmu_log_error(in, "%s is not available in %s", rule->name, interface_name(in->type));
        return 0;
    }
    if (!(rule->states & (unsigned)in->run.state)) {
        describe_states(rule->states, allowed, sizeof allowed);
        ffmu_log_error(in, "%s is not allowed in state %s (allowed in: %s)", rule->name,
                       ffmu_state_name(in->run.state), allowed);
        return 0;
    }
    ffmu_log_trace(in, "%s", rule->name);
    return 1;
}

int ffmu_array_ok(const ffmu_instance *in, const char *fn, const char *array, const void *pointer, size_t count)
{
    if (count > 0 && !pointer) {
        ffmu_log_error(in, "%s: %s is NULL although its length is %lu", fn, array, (unsigned long)count);
        return 0;
    }
    return 1;
}

int ffmu_pointer_ok(const ffmu_instance *in, const char *fn, const char *argument, const void *pointer)
{
    if (!pointer) {
        ffmu_log_error(in, "%s: %s is NULL", fn, argument);
        return 0;
    }
    return 1;
}

int ffmu_size_ok(const ffmu_instance *in, const char *fn, const char *argument, size_t given, int expected)
{
    if (given != (size_t)expected) {
        ffmu_log_error(in, "%s: %s = %lu, but the model has %d", fn, argument, (unsigned long)given, expected);
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

static int in_block(ffmu_vr vr, unsigned long base, int count, int *index)
{
    if (vr < base || vr - base >= (unsigned long)count) return 0;
    *index = (int)(vr - base);
    return 1;
}

/* The category and index of a value reference (ffmu_model.h), VK_UNKNOWN if
 * it names no variable of this model. */
static var_kind classify(ffmu_vr vr, int *index)
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
static const char *describe_variable(ffmu_vr vr, char *out, size_t size)
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
static int all_known(const ffmu_instance *in, const char *fn, const ffmu_vr vr[], size_t nvr)
{
    size_t i;
    int k;
    for (i = 0; i < nvr; ++i) {
        if (classify(vr[i], &k) == VK_UNKNOWN) {
            ffmu_log_error(in, "%s: unknown value reference %u", fn, vr[i]);
            return 0;
        }
    }
    return 1;
}

/* ======================================================================== */
/* Model evaluation                                                         */
/* ======================================================================== */

static void invalidate_caches(ffmu_instance *in) { in->xdot_valid = in->y_valid = 0; }

static double cs_time(const ffmu_run_state *run)
{
    return run->start_time + (double)run->steps * FFMU_MODEL.internal_step + run->partial_time;
}

/* Calls a CasADi function whose arg/res entries have been filled in. */
static int run_function(ffmu_instance *in, const ffmu_function *f, const char *what)
{
    int rc = f->eval(in->arg, in->res, in->iw, in->w, 0);
    if (rc != 0) {
        ffmu_log_error(in, "model function '%s' failed (code %d) at t=%.9g", what, rc, in->run.time);
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

static int states_finite(const ffmu_instance *in, const char *fn)
{
    char hint[160];
    int k = first_nonfinite(in->x, FFMU_MODEL.nx);
    if (k < 0) return 1;
    suspect_hint(in, hint, sizeof hint);
    ffmu_log_error(in, "%s: state '%s' is %s at t=%.9g%s", fn, name_at(FFMU_MODEL.state_names, k),
                   nonfinite_word(in->x[k]), in->run.time, hint);
    return 0;
}

static int outputs_finite(ffmu_instance *in, const char *fn)
{
    char hint[160];
    int k;
    if (!compute_outputs(in)) return 0;
    k = first_nonfinite(in->y, FFMU_MODEL.ny);
    if (k < 0) return 1;
    suspect_hint(in, hint, sizeof hint);
    ffmu_log_error(in, "%s: output '%s' is %s at t=%.9g%s", fn, name_at(FFMU_MODEL.output_names, k),
                   nonfinite_word(in->y[k]), in->run.time, hint);
    return 0;
}

/* A state beyond this magnitude (rad, m, rad/s or m/s) has diverged: no arm
 * turns 1e14 times or moves that fast, and its outputs would soon overflow. */
#define FFMU_STATE_LIMIT 1e15

/* The first state that is not finite or beyond FFMU_STATE_LIMIT, -1 if none. */
static int first_diverged(const double *v, int n)
{
    int i;
    for (i = 0; i < n; ++i)
        if (!isfinite(v[i]) || magnitude(v[i]) > FFMU_STATE_LIMIT) return i;
    return -1;
}

static void describe_value(double v, char *out, size_t size)
{
    if (isfinite(v))
        snprintf(out, size, "%.3g (diverged: beyond %g)", v, FFMU_STATE_LIMIT);
    else
        snprintf(out, size, "%s", nonfinite_word(v));
}

/* One internal step of co-simulation, of the internal step h (``whole``) or
 * of the shorter ``size`` that ends a communication step. x is only replaced
 * by a finite result; the caller rolls back on failure. */
static int internal_step(ffmu_instance *in, const char *fn, double size, int whole)
{
    const ffmu_model *m = &FFMU_MODEL;
    char hint[160], value[64];
    int k;
    if (!set_xup_arguments(in)) return 0;
    in->arg[3] = &size;
    in->res[0] = in->x_next;
    if (!run_function(in, &m->step, "step")) return 0;
    k = first_diverged(in->x_next, m->nx);
    if (k >= 0) {
        suspect_hint(in, hint, sizeof hint);
        describe_value(in->x_next[k], value, sizeof value);
        ffmu_log_error(in, "%s: state '%s' became %s in the internal step from t=%.9g to t=%.9g%s", fn,
                       name_at(m->state_names, k), value, in->run.time, in->run.time + size, hint);
        return 0;
    }
    memcpy(in->x, in->x_next, (size_t)m->nx * sizeof(double));
    if (whole)
        in->run.steps++;
    else
        in->run.partial_time += size;
    in->run.time = cs_time(&in->run);
    invalidate_caches(in);
    return 1;
}

/* ======================================================================== */
/* The last good point and the validity envelope                            */
/* ======================================================================== */

/* The instance is at a good point: remember x, u, p and the run state. */
static void remember_good_point(ffmu_instance *in)
{
    const ffmu_model *m = &FFMU_MODEL;
    memcpy(in->x_good, in->x, (size_t)m->nx * sizeof(double));
    memcpy(in->u_good, in->u, (size_t)m->nu * sizeof(double));
    memcpy(in->p_good, in->p, (size_t)m->np * sizeof(double));
    in->run_good = in->run;
}

/* A step failed: back to the last good point, in the error state. The
 * outputs and derivatives are recomputed from the restored values when read,
 * which gives the bits they had there. */
static void roll_back(ffmu_instance *in, const char *fn)
{
    const ffmu_model *m = &FFMU_MODEL;
    memcpy(in->x, in->x_good, (size_t)m->nx * sizeof(double));
    memcpy(in->u, in->u_good, (size_t)m->nu * sizeof(double));
    memcpy(in->p, in->p_good, (size_t)m->np * sizeof(double));
    in->run = in->run_good;
    in->run.state = FFMU_ST_ERROR;
    parameters_changed(in);
    ffmu_log_error(in, "%s: rolled back to the last good point t=%.9g: states, inputs and parameters are as they "
                       "were there", fn, in->run.time);
}

/* Compares the envelope quantities of the current outputs with their limits;
 * warns once per quantity (until reset) when one is beyond. */
static void check_envelope(ffmu_instance *in)
{
    const ffmu_model *m = &FFMU_MODEL;
    double value, limit;
    int k, out;
    for (k = 0; k < m->n_envelope; ++k) {
        out = m->envelope_output[k];
        value = in->y[out];
        limit = in->p[m->envelope_limit[k]];
        if (in->envelope_warned[k] || !(magnitude(value) > limit)) continue;
        in->envelope_warned[k] = 1;
        ffmu_log_model_warning(in,
                               "t=%.9g s: %s = %.4g is beyond the validity envelope (|value| <= %s = %.4g): the %s; "
                               "the model assumes small deflections and linear joint springs, so results from here "
                               "on are outside its validity (output envelope.exceeded is 1 while this lasts; "
                               "warned once)",
                               in->run.time, name_at(m->output_names, out), value,
                               name_at(m->parameter_names, m->envelope_limit[k]), limit,
                               name_at(m->envelope_label, k));
    }
}

/* ======================================================================== */
/* Life cycle                                                               */
/* ======================================================================== */

typedef struct {
    ffmu_int arg, res, iw, w;
} work_sizes;

/* Checks one generated function and raises the work sizes to cover it. The
 * arg/res arrays must hold at least the function's inputs and outputs, or the
 * instance would write past them. */
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

/* NULL if the envelope tables index real outputs and parameters. */
static const char *envelope_problem(const ffmu_model *m)
{
    int k;
    if (m->n_envelope < 0) return "the envelope size is negative";
    if (m->n_envelope > 0 && (!m->envelope_output || !m->envelope_limit)) return "the envelope tables are missing";
    for (k = 0; k < m->n_envelope; ++k)
        if (m->envelope_output[k] < 0 || m->envelope_output[k] >= m->ny || m->envelope_limit[k] < 0 ||
            m->envelope_limit[k] >= m->np)
            return "the envelope tables index no output or parameter";
    return NULL;
}

/* NULL if the generated model data is usable, else what is wrong with it. */
static const char *model_problem(work_sizes *ws)
{
    const ffmu_model *m = &FFMU_MODEL;
    ws->arg = ws->res = ws->iw = ws->w = 0;
    if (!m->guid) return "the model has no GUID";
    if (m->nq < 0 || m->nd < 0 || m->nx != 2 * m->nq + m->nd || m->nu < 0 || m->ny < 0 || m->np < 0 || m->nc < 0)
        return "the model sizes are inconsistent";
    if ((m->np > 0 && (!m->parameter_start || !m->parameter_tunable)) || (m->nx > 0 && !m->state_start)
        || (m->nu > 0 && !m->input_start))
        return "the model has no start values";
    if (!isfinite(m->internal_step) || m->internal_step <= 0) return "the internal step is not positive";
    if (!add_function(&m->constants, 1, 1, ws)) return "the model function 'constants' is missing or invalid";
    if (!add_function(&m->step, 4, 1, ws)) return "the model function 'step' is missing or invalid";
    if (!add_function(&m->derivatives, 3, 1, ws)) return "the model function 'derivatives' is missing or invalid";
    if (!add_function(&m->outputs, 3, 1, ws)) return "the model function 'outputs' is missing or invalid";
    if (!add_function(&m->directional, 5, 2, ws)) return "the model function 'directional' is missing or invalid";
    return envelope_problem(m);
}

/* calloc semantics; at least one element so that a size of 0 is no failure. */
static void *allocate(const ffmu_host *host, size_t count, size_t size)
{
    return host->allocate(count ? count : 1, size);
}

static void release(const ffmu_host *host, void *p)
{
    if (p) host->release(p);
}

void ffmu_free(ffmu_instance *in)
{
    ffmu_host host;
    if (!in) return;
    host = in->host; /* in itself is freed last */
    release(&host, in->name);
    release(&host, in->x); /* the start of the block of all doubles */
    release(&host, in->iw);
    release(&host, (void *)in->arg);
    release(&host, in->res);
    release(&host, in->envelope_warned);
    release(&host, in);
}

/* Takes n doubles from the block. */
static double *carve(double **cursor, int n)
{
    double *p = *cursor;
    *cursor += n;
    return p;
}

static ffmu_instance *allocate_instance(const ffmu_host *host, const char *name, const work_sizes *ws)
{
    const ffmu_model *m = &FFMU_MODEL;
    size_t n_doubles = 6 * (size_t)m->nx + 3 * (size_t)m->nu + 2 * (size_t)m->np + (size_t)m->nc +
                       2 * (size_t)m->ny + (size_t)ws->w;
    double *block, *cursor;
    ffmu_instance *in = (ffmu_instance *)host->allocate(1, sizeof *in);
    if (!in) return NULL;
    memset(in, 0, sizeof *in); /* ffmu_free relies on NULL pointers */
    in->host = *host;
    in->name = (char *)allocate(host, strlen(name) + 1, 1);
    block = (double *)allocate(host, n_doubles, sizeof(double));
    in->iw = (ffmu_int *)allocate(host, (size_t)ws->iw, sizeof(ffmu_int));
    in->arg = (const double **)allocate(host, (size_t)ws->arg, sizeof(const double *));
    in->res = (double **)allocate(host, (size_t)ws->res, sizeof(double *));
    in->envelope_warned = (int *)allocate(host, (size_t)m->n_envelope, sizeof(int));
    in->x = block; /* x starts the block: ffmu_free frees the block through it */
    if (!in->name || !block || !in->iw || !in->arg || !in->res || !in->envelope_warned) {
        ffmu_free(in);
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
    in->x_good = carve(&cursor, m->nx);
    in->u_good = carve(&cursor, m->nu);
    in->p_good = carve(&cursor, m->np);
    in->w = carve(&cursor, (int)ws->w);
    return in;
}

void ffmu_reset(ffmu_instance *in)
{
    const ffmu_model *m = &FFMU_MODEL;
    int i;
    for (i = 0; i < m->nx; ++i) in->x[i] = m->state_start[i];
    for (i = 0; i < m->nu; ++i) in->u[i] = m->input_start[i]; /* what holds the arm at its start pose */
    for (i = 0; i < m->np; ++i) in->p[i] = m->parameter_start[i];
    memset(&in->run, 0, sizeof in->run);
    in->run.state = FFMU_ST_INSTANTIATED;
    parameters_changed(in);
    for (i = 0; i < m->n_envelope; ++i) in->envelope_warned[i] = 0;
    remember_good_point(in);
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

ffmu_instance *ffmu_instantiate(const ffmu_host *host, const char *fn, const char *name, ffmu_interface type,
                                const char *token, int logging_on)
{
    const char *problem;
    work_sizes ws;
    ffmu_instance *in;
    if (!host->allocate || !host->release) {
        ffmu_log_host_error(host, name, "%s: memory allocation functions are required", fn);
        return NULL;
    }
    if (!name || !name[0]) {
        ffmu_log_host_error(host, name, "%s: instanceName is NULL or empty", fn);
        return NULL;
    }
    if (type != FFMU_MODEL_EXCHANGE && type != FFMU_CO_SIMULATION) {
        ffmu_log_host_error(host, name, "%s: unknown interface type %d", fn, (int)type);
        return NULL;
    }
    if (!token || !FFMU_MODEL.guid || strcmp(token, FFMU_MODEL.guid) != 0) {
        ffmu_log_host_error(host, name,
                            "%s: GUID '%s' does not match the GUID '%s' of this binary "
                            "(modelDescription.xml and binary belong to different FMUs)",
                            fn, token ? token : "(NULL)", FFMU_MODEL.guid ? FFMU_MODEL.guid : "(NULL)");
        return NULL;
    }
    problem = model_problem(&ws);
    if (problem) {
        ffmu_log_host_error(host, name, "%s: the generated model is broken: %s", fn, problem);
        return NULL;
    }
    in = allocate_instance(host, name, &ws);
    if (!in) {
        ffmu_log_host_error(host, name, "%s: out of memory", fn);
        return NULL;
    }
    in->type = type;
    in->log_categories = logging_on ? (FFMU_LOG_ERROR | FFMU_LOG_WARNING | FFMU_LOG_ALL) : 0;
    in->guid_hash = hash_string(FFMU_MODEL.guid);
    ffmu_reset(in);
    ffmu_log_trace(in, "%s: model '%s', %s, nx=%d nu=%d ny=%d np=%d, internal step %.9g s", fn,
                   FFMU_MODEL.model_name ? FFMU_MODEL.model_name : "?", interface_name(type), FFMU_MODEL.nx,
                   FFMU_MODEL.nu, FFMU_MODEL.ny, FFMU_MODEL.np, FFMU_MODEL.internal_step);
    return in;
}

int ffmu_setup_experiment(ffmu_instance *in, const char *fn, double start_time, int stop_time_defined,
                          double stop_time)
{
    if (!isfinite(start_time)) {
        ffmu_log_error(in, "%s: startTime %g is not finite", fn, start_time);
        return 0;
    }
    if (stop_time_defined && (!isfinite(stop_time) || stop_time < start_time)) {
        ffmu_log_error(in, "%s: stopTime %g is before startTime %g", fn, stop_time, start_time);
        return 0;
    }
    in->run.start_time = in->run.time = start_time;
    in->run.steps = 0;
    in->run.stop_time_defined = stop_time_defined ? 1 : 0;
    in->run.stop_time = stop_time_defined ? stop_time : 0.0;
    return 1;
}

int ffmu_check_start(ffmu_instance *in, const char *fn)
{
    if (!states_finite(in, fn) || !outputs_finite(in, fn)) {
        in->run.state = FFMU_ST_ERROR;
        return 0;
    }
    check_envelope(in);
    remember_good_point(in);
    return 1;
}

/* ======================================================================== */
/* Getting and setting variables                                            */
/* ======================================================================== */

int ffmu_get_real(ffmu_instance *in, const char *fn, const ffmu_vr vr[], size_t nvr, double value[])
{
    const int nq = FFMU_MODEL.nq;
    size_t i;
    int k;
    if (!ffmu_array_ok(in, fn, "vr", vr, nvr) || !ffmu_array_ok(in, fn, "value", value, nvr) ||
        !all_known(in, fn, vr, nvr))
        return 0;
    for (i = 0; i < nvr; ++i) {
        switch (classify(vr[i], &k)) {
        case VK_PARAMETER: value[i] = in->p[k]; break;
        case VK_STATE: value[i] = in->x[k]; break;
        case VK_INPUT: value[i] = in->u[k]; break;
        case VK_OUTPUT:
            if (!compute_outputs(in)) return 0;
            value[i] = in->y[k];
            break;
        case VK_ACCELERATION:
            if (!compute_derivatives(in)) return 0;
            value[i] = in->xdot[nq + k];
            break;
        default: return 0; /* excluded by all_known */
        }
    }
    return 1;
}

/* NULL if the variable may be set in the current state, else why not. */
static const char *set_refusal(const ffmu_instance *in, var_kind kind, int k)
{
    const unsigned st = (unsigned)in->run.state;
    switch (kind) {
    case VK_PARAMETER:
        if (st & FFMU_BEFORE_RUN) return NULL;
        if (!FFMU_MODEL.parameter_tunable[k]) return "it is a fixed parameter: set it before initialization ends";
        if (st & (FFMU_ST_STEP | FFMU_ST_EVENT)) return NULL;
        return "tunable parameters can be set only between steps (co-simulation) or in event mode "
               "(model exchange)";
    case VK_STATE:
        if (st & FFMU_BEFORE_RUN) return NULL;
        return in->type == FFMU_MODEL_EXCHANGE ? "states are set as continuous states after initialization"
                                               : "states can only be set before initialization ends";
    case VK_INPUT: return NULL; /* every state the glue allows */
    case VK_OUTPUT: return "outputs are computed by the model";
    case VK_ACCELERATION: return "accelerations are computed by the model";
    default: return "unknown value reference";
    }
}

int ffmu_set_real(ffmu_instance *in, const char *fn, const ffmu_vr vr[], size_t nvr, const double value[])
{
    char label[160];
    const char *why;
    var_kind kind;
    size_t i;
    int k;
    if (!ffmu_array_ok(in, fn, "vr", vr, nvr) || !ffmu_array_ok(in, fn, "value", value, nvr) ||
        !all_known(in, fn, vr, nvr))
        return 0;
    /* Refuse the whole call before changing anything. */
    for (i = 0; i < nvr; ++i) {
        kind = classify(vr[i], &k); /* separate statement: k must be set before set_refusal reads it */
        why = set_refusal(in, kind, k);
        if (why) {
            ffmu_log_error(in, "%s: cannot set %s in state %s: %s", fn, describe_variable(vr[i], label, sizeof label),
                           ffmu_state_name(in->run.state), why);
            return 0;
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
            ffmu_log_warning(in, "%s: %s set to %s", fn, describe_variable(vr[i], label, sizeof label),
                             nonfinite_word(value[i]));
    }
    /* setting inputs every step must not redo c(p): only parameters clear it */
    if (nvr > 0) invalidate_caches(in);
    return 1;
}

int ffmu_no_variables(ffmu_instance *in, const char *fn, const ffmu_vr vr[], size_t nvr, const void *value,
                      const char *type)
{
    if (!ffmu_array_ok(in, fn, "vr", vr, nvr) || !ffmu_array_ok(in, fn, "value", value, nvr)) return 0;
    if (nvr > 0) {
        ffmu_log_error(in, "%s: unknown value reference %u (the model has no %s variables)", fn, vr[0], type);
        return 0;
    }
    return 1;
}

/* ======================================================================== */
/* Directional derivatives                                                  */
/* ======================================================================== */

/* Unknowns: outputs, derivatives of states and accelerations. The derivative
 * of q_k is qd_k (state nq + k), so the state vr nq + k as an unknown stands
 * for der(q_k) = xdot[k]; q_k itself and discrete states are no unknowns. Returns the index into
 * xdot (*is_output = 0) or y (*is_output = 1), -1 if vr is no unknown. */
static int unknown_index(ffmu_vr vr, int *is_output)
{
    const int nq = FFMU_MODEL.nq;
    int k;
    *is_output = 0;
    switch (classify(vr, &k)) {
    case VK_OUTPUT: *is_output = 1; return k;
    case VK_STATE: return k >= nq && k < 2 * nq ? k - nq : -1; /* a discrete state is no unknown */
    case VK_ACCELERATION: return nq + k;
    default: return -1;
    }
}

int ffmu_directional_derivative(ffmu_instance *in, const char *fn, const ffmu_vr unknowns[], size_t n_unknown,
                                const ffmu_vr knowns[], size_t n_known, const double seed[], double sensitivity[])
{
    const ffmu_model *m = &FFMU_MODEL;
    char label[160];
    size_t i;
    int k, is_output;
    if (!ffmu_array_ok(in, fn, "unknowns", unknowns, n_unknown) || !ffmu_array_ok(in, fn, "knowns", knowns, n_known) ||
        !ffmu_array_ok(in, fn, "seed", seed, n_known) || !ffmu_array_ok(in, fn, "sensitivity", sensitivity, n_unknown))
        return 0;
    for (i = 0; i < n_unknown; ++i) {
        if (unknown_index(unknowns[i], &is_output) < 0) {
            ffmu_log_error(in, "%s: %s cannot be an unknown (use outputs, derivatives of states or accelerations)",
                           fn, describe_variable(unknowns[i], label, sizeof label));
            return 0;
        }
    }
    for (i = 0; i < (size_t)m->nx; ++i) in->dx[i] = 0.0;
    for (i = 0; i < (size_t)m->nu; ++i) in->du[i] = 0.0;
    for (i = 0; i < n_known; ++i) {
        switch (classify(knowns[i], &k)) {
        case VK_STATE: in->dx[k] += seed[i]; break; /* a repeated known adds up, as in J * v */
        case VK_INPUT: in->du[k] += seed[i]; break;
        default:
            ffmu_log_error(in, "%s: %s cannot be a known (use states or inputs)", fn,
                           describe_variable(knowns[i], label, sizeof label));
            return 0;
        }
    }
    if (!set_xup_arguments(in)) return 0;
    in->arg[3] = in->dx;
    in->arg[4] = in->du;
    in->res[0] = in->dxdot;
    in->res[1] = in->dy;
    if (!run_function(in, &m->directional, "directional")) return 0;
    for (i = 0; i < n_unknown; ++i) {
        k = unknown_index(unknowns[i], &is_output);
        sensitivity[i] = is_output ? in->dy[k] : in->dxdot[k];
    }
    return 1;
}

/* ======================================================================== */
/* Model exchange                                                           */
/* ======================================================================== */

/* The dynamics do not depend on time explicitly: the time is only kept for
 * messages and snapshots. */
int ffmu_set_time(ffmu_instance *in, const char *fn, double time)
{
    if (!isfinite(time)) {
        ffmu_log_error(in, "%s: time %g is not finite", fn, time);
        return 0;
    }
    in->run.time = time;
    return 1;
}

int ffmu_set_continuous_states(ffmu_instance *in, const char *fn, const double x[], size_t nx)
{
    if (!ffmu_size_ok(in, fn, "nx", nx, FFMU_MODEL.nx) || !ffmu_array_ok(in, fn, "x", x, nx)) return 0;
    memcpy(in->x, x, nx * sizeof(double));
    invalidate_caches(in);
    return 1;
}

int ffmu_get_continuous_states(ffmu_instance *in, const char *fn, double x[], size_t nx)
{
    if (!ffmu_size_ok(in, fn, "nx", nx, FFMU_MODEL.nx) || !ffmu_array_ok(in, fn, "x", x, nx)) return 0;
    memcpy(x, in->x, nx * sizeof(double));
    return 1;
}

/* A non-finite derivative is a failure of the model: back to the last state
 * whose derivatives were finite, in the error state. */
int ffmu_get_derivatives(ffmu_instance *in, const char *fn, double dx[], size_t nx)
{
    const ffmu_model *m = &FFMU_MODEL;
    char hint[160];
    int k;
    if (!ffmu_size_ok(in, fn, "nx", nx, m->nx) || !ffmu_array_ok(in, fn, "derivatives", dx, nx)) return 0;
    if (!compute_derivatives(in)) {
        roll_back(in, fn);
        return 0;
    }
    k = first_nonfinite(in->xdot, m->nx);
    if (k >= 0) {
        suspect_hint(in, hint, sizeof hint);
        ffmu_log_error(in, "%s: the derivative of state '%s' is %s at t=%.9g%s", fn, name_at(m->state_names, k),
                       nonfinite_word(in->xdot[k]), in->run.time, hint);
        roll_back(in, fn);
        return 0;
    }
    memcpy(dx, in->xdot, nx * sizeof(double));
    remember_good_point(in);
    return 1;
}

int ffmu_completed_integrator_step(ffmu_instance *in, const char *fn)
{
    if (!outputs_finite(in, fn)) {
        roll_back(in, fn);
        return 0;
    }
    check_envelope(in);
    remember_good_point(in);
    return 1;
}

int ffmu_get_nominals(ffmu_instance *in, const char *fn, double nominals[], size_t nx)
{
    size_t i;
    if (!ffmu_size_ok(in, fn, "nx", nx, FFMU_MODEL.nx) || !ffmu_array_ok(in, fn, "x_nominal", nominals, nx))
        return 0;
    for (i = 0; i < nx; ++i) nominals[i] = 1.0;
    return 1;
}

/* ======================================================================== */
/* Co-simulation                                                            */
/* ======================================================================== */

/* Longest communication step accepted, in internal steps: beyond this a
 * double no longer counts steps exactly (and a real-time target would stall). */
#define MAX_STEPS_PER_DOSTEP 1e12

/* The communication point must be the instance's time and the step positive
 * and finite: *n whole internal steps and a shorter last one of *rest (0 when
 * the step is a multiple of h to 1e-9, the fast path). */
static int communication_step_ok(const ffmu_instance *in, const char *fn, double point, double size,
                                 long long *n, double *rest)
{
    const double h = FFMU_MODEL.internal_step;
    const double t = in->run.time;
    double ratio;
    long long steps;
    if (!isfinite(point) || magnitude(point - t) > 1e-9 * (magnitude(t) > 1 ? magnitude(t) : 1)) {
        ffmu_log_error(in, "%s: communication point %.17g does not match the FMU time %.17g", fn, point, t);
        return 0;
    }
    if (!isfinite(size) || size <= 0) {
        ffmu_log_error(in, "%s: communication step size %.17g must be positive", fn, size);
        return 0;
    }
    ratio = size / h;
    if (ratio > MAX_STEPS_PER_DOSTEP) {
        ffmu_log_error(in, "%s: communication step size %.17g is too large (more than %.0f internal steps)", fn,
                       size, MAX_STEPS_PER_DOSTEP);
        return 0;
    }
    steps = (long long)(ratio + 0.5);
    if (steps >= 1 && magnitude(size - (double)steps * h) <= 1e-9 * size) {
        *n = steps;
        *rest = 0.0;
        return 1;
    }
    *n = (long long)ratio; /* ratio > 0: truncation is floor */
    *rest = size - (double)*n * h;
    if (*rest >= h) { /* rounding of size / h just below an integer */
        ++*n;
        *rest = size - (double)*n * h;
    }
    if (*rest < 0) *rest = 0.0;
    return 1;
}

int ffmu_do_step(ffmu_instance *in, const char *fn, double point, double size)
{
    long long n, i;
    double rest;
    if (!communication_step_ok(in, fn, point, size, &n, &rest)) return 0;
    for (i = 0; i < n; ++i) {
        if (!internal_step(in, fn, FFMU_MODEL.internal_step, 1)) {
            roll_back(in, fn);
            return 0;
        }
    }
    if ((rest > 0 && !internal_step(in, fn, rest, 0)) || !outputs_finite(in, fn)) {
        roll_back(in, fn);
        return 0;
    }
    check_envelope(in);
    remember_good_point(in);
    return 1;
}

/* ======================================================================== */
/* FMU state: snapshots and their serialization                             */
/* ======================================================================== */

#define SNAPSHOT_MAGIC 0x46464D55u /* "FFMU" */

typedef struct {
    uint32_t magic;     /* SNAPSHOT_MAGIC while alive, 0 once freed */
    uint32_t guid_hash; /* the model that took it */
    int type, nx, nu, np;
    ffmu_run_state run;
    void (*release)(void *memory); /* of the instance that allocated it */
    double *values;                /* x, u, p: nx + nu + np */
} ffmu_snapshot;

static int value_count(void) { return FFMU_MODEL.nx + FFMU_MODEL.nu + FFMU_MODEL.np; }

/* A snapshot can only be used by instances of the same model and type. */
static int snapshot_usable(const ffmu_instance *in, const ffmu_snapshot *s, const char *fn)
{
    if (s->magic != SNAPSHOT_MAGIC) {
        ffmu_log_error(in, "%s: not an FMU state of a flexfmu FMU (freed already?)", fn);
        return 0;
    }
    if (s->guid_hash != in->guid_hash || s->nx != FFMU_MODEL.nx || s->nu != FFMU_MODEL.nu ||
        s->np != FFMU_MODEL.np) {
        ffmu_log_error(in, "%s: the FMU state belongs to another model (nx=%d nu=%d np=%d)", fn, s->nx, s->nu,
                       s->np);
        return 0;
    }
    if (s->type != (int)in->type) {
        ffmu_log_error(in, "%s: the FMU state was taken in %s, this instance is %s", fn,
                       interface_name((ffmu_interface)s->type), interface_name(in->type));
        return 0;
    }
    return 1;
}

static ffmu_snapshot *new_snapshot(const ffmu_instance *in)
{
    ffmu_snapshot *s = (ffmu_snapshot *)allocate(&in->host, 1, sizeof *s);
    if (!s) return NULL;
    s->values = (double *)allocate(&in->host, (size_t)value_count(), sizeof(double));
    if (!s->values) {
        release(&in->host, s);
        return NULL;
    }
    s->magic = SNAPSHOT_MAGIC;
    s->guid_hash = in->guid_hash;
    s->type = (int)in->type;
    s->nx = FFMU_MODEL.nx;
    s->nu = FFMU_MODEL.nu;
    s->np = FFMU_MODEL.np;
    s->release = in->host.release;
    return s;
}

static void free_snapshot(ffmu_snapshot *s)
{
    void (*free_memory)(void *) = s->release;
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
    remember_good_point(in);
}

int ffmu_get_state(ffmu_instance *in, const char *fn, void **state)
{
    ffmu_snapshot *s;
    if (!ffmu_pointer_ok(in, fn, "FMUstate", state)) return 0;
    s = (ffmu_snapshot *)*state;
    if (s && !snapshot_usable(in, s, fn)) return 0;
    if (!s) s = new_snapshot(in);
    if (!s) {
        ffmu_log_error(in, "%s: out of memory", fn);
        return 0;
    }
    save_snapshot(in, s);
    *state = s;
    return 1;
}

int ffmu_set_state(ffmu_instance *in, const char *fn, const void *state)
{
    const ffmu_snapshot *s = (const ffmu_snapshot *)state;
    if (!ffmu_pointer_ok(in, fn, "FMUstate", s) || !snapshot_usable(in, s, fn)) return 0;
    restore_snapshot(in, s);
    return 1;
}

int ffmu_free_state(ffmu_instance *in, const char *fn, void **state)
{
    if (!ffmu_pointer_ok(in, fn, "FMUstate", state)) return 0;
    if (!*state) return 1; /* like free(NULL) */
    if (!snapshot_usable(in, (const ffmu_snapshot *)*state, fn)) return 0;
    free_snapshot((ffmu_snapshot *)*state);
    *state = NULL;
    return 1;
}

/*
 * Serialized format, version 2 (native byte order; every field is copied
 * with memcpy, so the buffer needs no alignment):
 *   char    tag[8]        "FFMUSTAT"
 *   uint32  version       2
 *   uint32  guid_length   then guid_length bytes of the GUID (no NUL)
 *   int32   fmu_type, machine_state, nx, nu, np, stop_time_defined
 *   int64   steps
 *   float64 start_time, stop_time, time, partial_time
 *   float64 x[nx], u[nu], p[np]
 * Version 1 lacks partial_time (read as 0).
 */
/* The format writes doubles as 8 bytes (compile-time check). */
typedef char ffmu_double_is_8_bytes[sizeof(double) == 8 ? 1 : -1];

static const char SERIAL_TAG[8] = {'F', 'F', 'M', 'U', 'S', 'T', 'A', 'T'};
#define SERIAL_VERSION 2u
#define SERIAL_PREFIX_SIZE (8 + 4 + 4) /* tag, version, guid length */
/* the fields after the GUID, of a version */
#define SERIAL_FIXED_SIZE(version) (6 * 4 + 8 + ((version) >= 2 ? 4 : 3) * 8)

static size_t serialized_size_of(uint32_t version)
{
    return SERIAL_PREFIX_SIZE + strlen(FFMU_MODEL.guid) + SERIAL_FIXED_SIZE(version) + (size_t)value_count() * 8;
}

static size_t serialized_size(void) { return serialized_size_of(SERIAL_VERSION); }

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

int ffmu_serialized_size(ffmu_instance *in, const char *fn, const void *state, size_t *size)
{
    if (!ffmu_pointer_ok(in, fn, "FMUstate", state) || !ffmu_pointer_ok(in, fn, "size", size) ||
        !snapshot_usable(in, (const ffmu_snapshot *)state, fn))
        return 0;
    *size = serialized_size();
    return 1;
}

int ffmu_serialize(ffmu_instance *in, const char *fn, const void *state, unsigned char *bytes, size_t size)
{
    const ffmu_snapshot *s = (const ffmu_snapshot *)state;
    const size_t needed = serialized_size();
    const uint32_t version = SERIAL_VERSION, guid_length = (uint32_t)strlen(FFMU_MODEL.guid);
    byte_writer wr;
    int64_t steps;
    if (!ffmu_pointer_ok(in, fn, "FMUstate", s) || !ffmu_array_ok(in, fn, "serializedState", bytes, size) ||
        !snapshot_usable(in, s, fn))
        return 0;
    if (size < needed) {
        ffmu_log_error(in, "%s: the buffer has %lu bytes, %lu are needed (ask for the serialized size first)", fn,
                       (unsigned long)size, (unsigned long)needed);
        return 0;
    }
    wr.pos = bytes;
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
    put(&wr, &s->run.partial_time, 8);
    put(&wr, s->values, (size_t)value_count() * 8);
    return 1;
}

/* The machine states an instance of the given type can be in. */
static int state_valid_for(int state, ffmu_interface type)
{
    const unsigned own = type == FFMU_CO_SIMULATION ? FFMU_ST_STEP : (FFMU_ST_EVENT | FFMU_ST_CONTINUOUS);
    const unsigned valid = FFMU_ST_INSTANTIATED | FFMU_ST_INITIALIZATION | own | FFMU_ST_TERMINATED | FFMU_ST_ERROR;
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
static int parse_serialized(ffmu_instance *in, const char *fn, const unsigned char *bytes, size_t size,
                            ffmu_run_state *r, double *values)
{
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
        ffmu_log_error(in, "%s: %lu bytes are too few for an FMU state", fn, (unsigned long)size);
        return 0;
    }
    get(&rd, tag, sizeof tag);
    get(&rd, &version, 4);
    get(&rd, &stored_length, 4);
    if (memcmp(tag, SERIAL_TAG, sizeof tag) != 0) {
        ffmu_log_error(in, "%s: the bytes are not a serialized flexfmu FMU state (bad magic tag)", fn);
        return 0;
    }
    if (version != 1u && version != SERIAL_VERSION) {
        ffmu_log_error(in, "%s: serialization format version %lu is not supported (this FMU reads versions 1 "
                           "and %u)", fn, (unsigned long)version, SERIAL_VERSION);
        return 0;
    }
    if (stored_length != guid_length || rd.left < guid_length || memcmp(rd.pos, FFMU_MODEL.guid, guid_length) != 0) {
        printable_copy(rd.pos, stored_length < rd.left ? stored_length : rd.left, seen, sizeof seen);
        ffmu_log_error(in, "%s: the FMU state belongs to the model with GUID '%s', not to '%s'", fn, seen,
                       FFMU_MODEL.guid);
        return 0;
    }
    rd.pos += guid_length;
    rd.left -= guid_length;
    if (rd.left < SERIAL_FIXED_SIZE(version)) {
        ffmu_log_error(in, "%s: the FMU state is truncated (%lu bytes)", fn, (unsigned long)size);
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
    r->partial_time = 0.0;
    if (version >= 2) get(&rd, &r->partial_time, 8);
    if (type != (int)in->type) {
        ffmu_log_error(in, "%s: the FMU state was saved by a %s instance, this one is %s", fn,
                       type == FFMU_CO_SIMULATION    ? "co-simulation"
                       : type == FFMU_MODEL_EXCHANGE ? "model-exchange"
                                                     : "unknown",
                       interface_name(in->type));
        return 0;
    }
    if (!state_valid_for(state, in->type)) {
        ffmu_log_error(in, "%s: invalid machine state %d in the FMU state", fn, state);
        return 0;
    }
    if (nx != FFMU_MODEL.nx || nu != FFMU_MODEL.nu || np != FFMU_MODEL.np) {
        ffmu_log_error(in, "%s: the FMU state has nx=%d nu=%d np=%d, the model nx=%d nu=%d np=%d", fn, nx, nu, np,
                       FFMU_MODEL.nx, FFMU_MODEL.nu, FFMU_MODEL.np);
        return 0;
    }
    expected = serialized_size_of(version);
    if (size != expected) {
        ffmu_log_error(in, "%s: the FMU state has %lu bytes, %lu expected", fn, (unsigned long)size,
                       (unsigned long)expected);
        return 0;
    }
    if (steps < 0 || !isfinite(r->start_time) || !isfinite(r->time) || !isfinite(r->partial_time) ||
        (r->stop_time_defined && !isfinite(r->stop_time))) {
        ffmu_log_error(in, "%s: the FMU state has an invalid time or step count", fn);
        return 0;
    }
    r->state = (ffmu_machine_state)state;
    r->steps = (long long)steps;
    get(&rd, values, (size_t)value_count() * 8);
    return 1;
}

int ffmu_deserialize(ffmu_instance *in, const char *fn, const unsigned char *bytes, size_t size, void **state)
{
    ffmu_snapshot *old, *fresh;
    if (!ffmu_array_ok(in, fn, "serializedState", bytes, size) || !ffmu_pointer_ok(in, fn, "FMUstate", state))
        return 0;
    old = (ffmu_snapshot *)*state;
    if (old && !snapshot_usable(in, old, fn)) return 0;
    fresh = new_snapshot(in);
    if (!fresh) {
        ffmu_log_error(in, "%s: out of memory", fn);
        return 0;
    }
    if (!parse_serialized(in, fn, bytes, size, &fresh->run, fresh->values)) {
        free_snapshot(fresh);
        return 0;
    }
    if (!old) {
        *state = fresh;
        return 1;
    }
    old->run = fresh->run;
    memcpy(old->values, fresh->values, (size_t)value_count() * sizeof(double));
    free_snapshot(fresh);
    return 1;
}
