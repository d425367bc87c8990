/*
 * ffmu_instance.h - one simulation instance of a flexfmu model, independent
 * of the interface it is driven through (FMI 2.0, FMI 3.0, a Simulink
 * S-function, a MEX gateway).
 *
 * Layers
 * ------
 *   per-model code   model_data.c + CasADi functions  (ffmu_model.h: FFMU_MODEL)
 *   instance code    ffmu_instance.c                  (this header)
 *   interface glue   fmi2_glue.c, ...                 (maps an API onto these calls)
 *
 * The glue checks which calls its standard allows in which state (a table of
 * ffmu_call_rule and ffmu_call_allowed), converts its argument types and maps
 * the results back; everything else lives here once: logging, argument
 * checks, value references, model evaluation, stepping, allocation, FMU state
 * snapshots and their serialization.
 *
 * Conventions. Functions that can fail return 1 on success and 0 after
 * logging why. A failure caused by the caller (a wrong argument, value
 * reference or call sequence) leaves the instance unchanged; a numerical
 * failure of the model (a non-finite or diverged state, derivative or
 * output, or a CasADi function reporting failure) puts it in FFMU_ST_ERROR,
 * from where only inspection, restoring a state, resetting and freeing
 * work. Such a failure first rolls the instance back to its last good
 * point (the end of the last successful communication step, or in model
 * exchange the last state whose derivatives were finite): states, inputs,
 * parameters and time are as they were there, so every value read
 * afterwards is that point's, and fmi2GetFMUstate / fmi2Reset work as ever.
 *
 * Validity envelope. After every communication step (co-simulation) and
 * completed integrator step (model exchange) the envelope quantities of the
 * model (ffmu_model.h) are compared with their limits; the first time one
 * is beyond its limit a warning names it and the time (once per quantity
 * until fmi2Reset). The model's own output envelope.exceeded is 1 while
 * any is beyond.
 *
 * Memory and threads. There is no mutable global or static state. An
 * instance owns all its memory, allocated through the host's allocator when
 * it is created: the variable arrays, the caches and the CasADi work arrays.
 * Nothing is allocated while simulating, so a step is real-time friendly,
 * and any number of instances can run in parallel threads.
 */
#ifndef FFMU_INSTANCE_H
#define FFMU_INSTANCE_H

#include <stddef.h>
#include <stdint.h>

#include "ffmu_model.h"

#if defined(__GNUC__)
#define FFMU_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define FFMU_PRINTF(fmt, args)
#endif

/* Statuses, numerically equal to fmi2Status and fmi3Status (OK .. Fatal). */
typedef enum { FFMU_OK = 0, FFMU_WARNING = 1, FFMU_DISCARD = 2, FFMU_ERROR = 3, FFMU_FATAL = 4 } ffmu_status;

/* Interface types, numerically equal to fmi2Type (stored in serialized states). */
typedef enum { FFMU_MODEL_EXCHANGE = 0, FFMU_CO_SIMULATION = 1 } ffmu_interface;

/* A value reference (fmi2ValueReference and fmi3ValueReference alike). */
typedef unsigned int ffmu_vr;

/* Machine states, one bit each so that a call rule can hold a set of them.
 * FFMU_ST_STEP is FMI 2's stepComplete and FMI 3's step mode. */
typedef enum {
    FFMU_ST_INSTANTIATED = 1 << 0,
    FFMU_ST_INITIALIZATION = 1 << 1,
    FFMU_ST_STEP = 1 << 2,       /* co-simulation, between steps */
    FFMU_ST_EVENT = 1 << 3,      /* model exchange */
    FFMU_ST_CONTINUOUS = 1 << 4, /* model exchange */
    FFMU_ST_TERMINATED = 1 << 5,
    FFMU_ST_ERROR = 1 << 6,
    /* Never entered: nothing here can leave the process in an undefined state.
     * Listed to complete the standards' machines; no rule allows it. */
    FFMU_ST_FATAL = 1 << 7
} ffmu_machine_state;

#define FFMU_ALL_STATES 0xFFu
#define FFMU_ALIVE (FFMU_ALL_STATES & ~(unsigned)FFMU_ST_FATAL)
#define FFMU_FROM_INIT_ON (FFMU_ALIVE & ~(unsigned)FFMU_ST_INSTANTIATED)
#define FFMU_RUNNING ((unsigned)FFMU_ST_STEP | FFMU_ST_EVENT | FFMU_ST_CONTINUOUS)
#define FFMU_BEFORE_RUN ((unsigned)FFMU_ST_INSTANTIATED | FFMU_ST_INITIALIZATION)

/* Interface types a call belongs to. */
#define FFMU_FOR_ME 1u
#define FFMU_FOR_CS 2u
#define FFMU_FOR_BOTH (FFMU_FOR_ME | FFMU_FOR_CS)

/* Where a call of an interface is legal: its name (for messages), the
 * interface types it belongs to and the set of states that allow it. */
typedef struct {
    const char *name;
    unsigned types;
    unsigned states;
} ffmu_call_rule;

/* What the host (importer) provides, adapted by the glue. ``log`` formats
 * nothing: it passes the finished message to the importer's ``logger``
 * (kept as a generic function pointer and cast back by the glue's adapter).
 * ``log`` may be NULL: then nothing is logged. */
typedef struct ffmu_host ffmu_host;
struct ffmu_host {
    void *(*allocate)(size_t count, size_t size); /* calloc semantics */
    void (*release)(void *memory);
    void (*log)(const ffmu_host *host, const char *instance_name, ffmu_status status, const char *category,
                const char *message);
    void (*logger)(void);
    void *environment;
};

/* Everything about where the simulation is, apart from the variable values;
 * copied as a whole into and out of FMU state snapshots. */
typedef struct {
    ffmu_machine_state state;
    double start_time;
    double stop_time; /* recorded, not enforced */
    int stop_time_defined;
    double time;     /* ME: last set time; CS: start_time + steps * h + partial_time */
    long long steps; /* CS: whole internal steps done since start_time */
    double partial_time; /* CS: the shorter last steps of communication steps that are no multiple of h, s */
} ffmu_run_state;

typedef struct {
    ffmu_host host; /* a copy: the importer may free its structures */
    char *name;
    ffmu_interface type;
    unsigned log_categories; /* FFMU_LOG_* bits switched on by debug logging */
    uint32_t guid_hash;      /* identifies snapshots of this model */
    ffmu_run_state run;

    double *x, *u, *p;  /* states [q; qd], inputs, parameters followed by their constants c(p) */
    double *xdot, *y;   /* caches, valid while the flags are set */
    int xdot_valid, y_valid;
    int constants_valid; /* c(p) in p[np..np+nc) matches p[0..np) */
    double *x_next;     /* result of one internal step (CasADi's res must not alias arg) */
    double *dx, *du, *dxdot, *dy; /* seeds and results of directional derivatives */

    /* The last good point, where a failed step rolls back to: x, u and p (without c) and the run state. */
    double *x_good, *u_good, *p_good;
    ffmu_run_state run_good;
    int *envelope_warned; /* n_envelope flags: the envelope warning of quantity k was logged */

    /* CasADi work arrays, sized as the maximum over the model's functions */
    const double **arg;
    double **res;
    ffmu_int *iw;
    double *w;
} ffmu_instance;

/* ---- logging ------------------------------------------------------------ */

enum { FFMU_LOG_ERROR = 1, FFMU_LOG_WARNING = 2, FFMU_LOG_ALL = 4 };
#define FFMU_LOG_CATEGORY_COUNT 3
extern const char *const FFMU_LOG_CATEGORY_NAMES[FFMU_LOG_CATEGORY_COUNT];

/* Errors are always logged; warnings and traces when their category is on. */
void ffmu_log_error(const ffmu_instance *in, const char *fmt, ...) FFMU_PRINTF(2, 3);
void ffmu_log_warning(const ffmu_instance *in, const char *fmt, ...) FFMU_PRINTF(2, 3);
void ffmu_log_trace(const ffmu_instance *in, const char *fmt, ...) FFMU_PRINTF(2, 3);
/* A warning about the model's validity: always logged, as errors are (it comes once per quantity and run). */
void ffmu_log_model_warning(const ffmu_instance *in, const char *fmt, ...) FFMU_PRINTF(2, 3);
/* Before an instance exists. */
void ffmu_log_host_error(const ffmu_host *host, const char *instance_name, const char *fmt, ...) FFMU_PRINTF(3, 4);

/* Switches the named categories (all of them when count is 0) on or off;
 * an unknown name fails the whole call. */
int ffmu_set_debug_logging(ffmu_instance *in, const char *fn, int on, size_t count, const char *const names[]);

/* ---- argument checks ---------------------------------------------------- */

/* The entry check of every call: instance, interface type and state. */
int ffmu_call_allowed(ffmu_instance *in, const ffmu_call_rule *rule);
int ffmu_array_ok(const ffmu_instance *in, const char *fn, const char *array, const void *pointer, size_t count);
int ffmu_pointer_ok(const ffmu_instance *in, const char *fn, const char *argument, const void *pointer);
int ffmu_size_ok(const ffmu_instance *in, const char *fn, const char *argument, size_t given, int expected);
const char *ffmu_state_name(unsigned state);

/* ---- life cycle ----------------------------------------------------------- */

/* Checks the arguments and the generated model, then allocates an instance
 * at its start values; NULL (logged through host) on failure. ``token`` is
 * the GUID / instantiation token the importer read from the model
 * description. */
ffmu_instance *ffmu_instantiate(const ffmu_host *host, const char *fn, const char *name, ffmu_interface type,
                                const char *token, int logging_on);
void ffmu_free(ffmu_instance *in);
/* Back to the start values and FFMU_ST_INSTANTIATED (logging settings kept). */
void ffmu_reset(ffmu_instance *in);
int ffmu_setup_experiment(ffmu_instance *in, const char *fn, double start_time, int stop_time_defined,
                          double stop_time);
/* The start point must be finite before the importer relies on it. */
int ffmu_check_start(ffmu_instance *in, const char *fn);

/* ---- variables -------------------------------------------------------------- */

int ffmu_get_real(ffmu_instance *in, const char *fn, const ffmu_vr vr[], size_t nvr, double value[]);
/* All-or-nothing: every value reference is checked before anything changes. */
int ffmu_set_real(ffmu_instance *in, const char *fn, const ffmu_vr vr[], size_t nvr, const double value[]);
/* The model has only Real variables: a call of another type with nvr > 0 fails. */
int ffmu_no_variables(ffmu_instance *in, const char *fn, const ffmu_vr vr[], size_t nvr, const void *value,
                      const char *type);
/* Unknowns: outputs, derivatives of states and accelerations; knowns: states and inputs. */
int ffmu_directional_derivative(ffmu_instance *in, const char *fn, const ffmu_vr unknowns[], size_t n_unknown,
                                const ffmu_vr knowns[], size_t n_known, const double seed[], double sensitivity[]);

/* ---- model exchange ------------------------------------------------------- */

int ffmu_set_time(ffmu_instance *in, const char *fn, double time);
int ffmu_set_continuous_states(ffmu_instance *in, const char *fn, const double x[], size_t nx);
int ffmu_get_continuous_states(ffmu_instance *in, const char *fn, double x[], size_t nx);
int ffmu_get_derivatives(ffmu_instance *in, const char *fn, double dx[], size_t nx);
int ffmu_get_nominals(ffmu_instance *in, const char *fn, double nominals[], size_t nx);
/* An accepted integrator step: the envelope is checked and the point becomes the last good one. */
int ffmu_completed_integrator_step(ffmu_instance *in, const char *fn);

/* ---- co-simulation ---------------------------------------------------------- */

/* Advances from ``point`` (which must be the current time) by ``size`` > 0:
 * the whole internal steps it holds, then one shorter step for the rest
 * when ``size`` is no multiple of h (a multiple within 1e-9 takes only whole
 * steps). After a failure the instance is back at its last good point, the
 * end of the previous step (states, inputs and parameters as they were
 * there, and its time), in FFMU_ST_ERROR. */
int ffmu_do_step(ffmu_instance *in, const char *fn, double point, double size);

/* ---- FMU state snapshots ---------------------------------------------------- */

/* *state is NULL (a new snapshot is allocated) or one returned before (reused). */
int ffmu_get_state(ffmu_instance *in, const char *fn, void **state);
int ffmu_set_state(ffmu_instance *in, const char *fn, const void *state);
int ffmu_free_state(ffmu_instance *in, const char *fn, void **state);
int ffmu_serialized_size(ffmu_instance *in, const char *fn, const void *state, size_t *size);
int ffmu_serialize(ffmu_instance *in, const char *fn, const void *state, unsigned char *bytes, size_t size);
/* Parses into a new snapshot, or overwrites *state (only once all is valid). */
int ffmu_deserialize(ffmu_instance *in, const char *fn, const unsigned char *bytes, size_t size, void **state);

#endif
