/*
 * fmu_misuse.c - drives a flexfmu FMU binary (fmi2_glue.c + ffmu_instance.c + a generated
 * model) through misuse and valid call sequences and checks the status codes.
 *
 *   fmu_misuse PATH_TO_SO GUID NX NU NY NP [H_INTERNAL] [--cycles N]
 *              [--fixed K] [--threads N] [--verbose]
 *
 * H_INTERNAL  the FMU's internal step (not visible through the API); enables
 *             the checks of communication steps that are fractions of it.
 * --cycles N  instantiate/setup/init/doStep/free cycles at the end (1000), for
 *             valgrind's leak check.
 * --fixed K   parameter K is known to be fixed: setting it after
 *             initialization must fail.
 * --threads N instances run in N parallel threads (4; 0 to skip) and must
 *             give the same results as sequentially.
 * --verbose   print the FMU's log messages ("# ...").
 *
 * Prints "ok ..." or "FAIL ..." per check and finally "N passed, M failed";
 * exits with 1 if any check failed.
 *
 * Build: gcc -std=c99 -Wall -Wextra -Werror -I<fmpy>/c-code -o fmu_misuse fmu_misuse.c -ldl -lpthread
 * For Windows (a .dll, run under Wine in the tests), with MinGW-w64, whose
 * winpthreads provides the threads:
 *   x86_64-w64-mingw32-gcc -std=c99 -Wall -Wextra -Werror -I<fmpy>/c-code -o fmu_misuse.exe fmu_misuse.c -static
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2FunctionTypes.h"
#include "../../flexfmu/targets/c/ffmu_model.h" /* value reference layout */
#include "dynlib.h"                              /* dlopen or LoadLibrary */

/* ------------------------------------------------------------------------ */
/* The FMU's functions                                                      */
/* ------------------------------------------------------------------------ */

typedef struct {
    fmi2GetTypesPlatformTYPE *GetTypesPlatform;
    fmi2GetVersionTYPE *GetVersion;
    fmi2SetDebugLoggingTYPE *SetDebugLogging;
    fmi2InstantiateTYPE *Instantiate;
    fmi2FreeInstanceTYPE *FreeInstance;
    fmi2SetupExperimentTYPE *SetupExperiment;
    fmi2EnterInitializationModeTYPE *EnterInitializationMode;
    fmi2ExitInitializationModeTYPE *ExitInitializationMode;
    fmi2TerminateTYPE *Terminate;
    fmi2ResetTYPE *Reset;
    fmi2GetRealTYPE *GetReal;
    fmi2GetIntegerTYPE *GetInteger;
    fmi2GetBooleanTYPE *GetBoolean;
    fmi2GetStringTYPE *GetString;
    fmi2SetRealTYPE *SetReal;
    fmi2SetIntegerTYPE *SetInteger;
    fmi2SetBooleanTYPE *SetBoolean;
    fmi2SetStringTYPE *SetString;
    fmi2GetFMUstateTYPE *GetFMUstate;
    fmi2SetFMUstateTYPE *SetFMUstate;
    fmi2FreeFMUstateTYPE *FreeFMUstate;
    fmi2SerializedFMUstateSizeTYPE *SerializedFMUstateSize;
    fmi2SerializeFMUstateTYPE *SerializeFMUstate;
    fmi2DeSerializeFMUstateTYPE *DeSerializeFMUstate;
    fmi2GetDirectionalDerivativeTYPE *GetDirectionalDerivative;
    fmi2EnterEventModeTYPE *EnterEventMode;
    fmi2NewDiscreteStatesTYPE *NewDiscreteStates;
    fmi2EnterContinuousTimeModeTYPE *EnterContinuousTimeMode;
    fmi2CompletedIntegratorStepTYPE *CompletedIntegratorStep;
    fmi2SetTimeTYPE *SetTime;
    fmi2SetContinuousStatesTYPE *SetContinuousStates;
    fmi2GetDerivativesTYPE *GetDerivatives;
    fmi2GetEventIndicatorsTYPE *GetEventIndicators;
    fmi2GetContinuousStatesTYPE *GetContinuousStates;
    fmi2GetNominalsOfContinuousStatesTYPE *GetNominalsOfContinuousStates;
    fmi2SetRealInputDerivativesTYPE *SetRealInputDerivatives;
    fmi2GetRealOutputDerivativesTYPE *GetRealOutputDerivatives;
    fmi2DoStepTYPE *DoStep;
    fmi2CancelStepTYPE *CancelStep;
    fmi2GetStatusTYPE *GetStatus;
    fmi2GetRealStatusTYPE *GetRealStatus;
    fmi2GetIntegerStatusTYPE *GetIntegerStatus;
    fmi2GetBooleanStatusTYPE *GetBooleanStatus;
    fmi2GetStringStatusTYPE *GetStringStatus;
} fmi2_api;

static fmi2_api F;
static dynlib library;

/* ------------------------------------------------------------------------ */
/* Settings, counters and the importer's callbacks                          */
/* ------------------------------------------------------------------------ */

static struct {
    const char *guid;
    int nx, nu, ny, np, nq;
    double h;          /* internal step, 0 if unknown */
    double H;          /* communication step of the valid sequences */
    long cycles;
    int fixed;         /* a parameter known to be fixed, -1 if none */
    int threads;
    int verbose;
    int *tunable;      /* found by trying: 1 if settable after initialization */
} cfg;

static int passed, failed;
static long logged_errors, logged_other, outstanding_allocations;

static void test_logger(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status, fmi2String category,
                        fmi2String message, ...)
{
    (void)env;
    if (status == fmi2Error || status == fmi2Fatal)
        logged_errors++;
    else
        logged_other++;
    if (cfg.verbose) printf("# [%s] %s: %s\n", category, instance, message);
}

static void *counting_calloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (p) outstanding_allocations++;
    return p;
}

static void counting_free(void *p)
{
    if (p) outstanding_allocations--;
    free(p);
}

static const fmi2CallbackFunctions CALLBACKS = {test_logger, counting_calloc, counting_free, NULL, NULL};
static const fmi2CallbackFunctions CALLBACKS_NO_LOGGER = {NULL, counting_calloc, counting_free, NULL, NULL};
/* Not counting: used from several threads at once. */
static const fmi2CallbackFunctions CALLBACKS_THREADS = {NULL, calloc, free, NULL, NULL};

/* ------------------------------------------------------------------------ */
/* Checks                                                                   */
/* ------------------------------------------------------------------------ */

static const char *status_name(fmi2Status s)
{
    static const char *const names[] = {"fmi2OK", "fmi2Warning", "fmi2Discard", "fmi2Error", "fmi2Fatal",
                                        "fmi2Pending"};
    return (unsigned)s < 6 ? names[s] : "invalid status";
}

static void check(int ok, const char *fmt, ...)
{
    va_list ap;
    printf(ok ? "ok   " : "FAIL ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    if (ok)
        passed++;
    else
        failed++;
}

/* The call must fail with fmi2Error and say why through the logger. */
#define EXPECT_ERROR(call, what)                                                                                \
    do {                                                                                                         \
        long errors_before_ = logged_errors;                                                                     \
        fmi2Status st_ = (call);                                                                                 \
        check(st_ == fmi2Error && logged_errors > errors_before_, "%s -> fmi2Error, logged (got %s%s)", what,   \
              status_name(st_), logged_errors > errors_before_ ? "" : ", nothing logged");                     \
    } while (0)

/* With no instance there is nobody to log to: only the status counts. */
#define EXPECT_ERROR_UNLOGGED(call, what)                                                                       \
    do {                                                                                                         \
        fmi2Status st_ = (call);                                                                                 \
        check(st_ == fmi2Error, "%s -> fmi2Error (got %s)", what, status_name(st_));                            \
    } while (0)

#define EXPECT_OK(call, what)                                                                                   \
    do {                                                                                                         \
        fmi2Status st_ = (call);                                                                                 \
        check(st_ == fmi2OK, "%s -> fmi2OK (got %s)", what, status_name(st_));                                  \
    } while (0)

static int is_finite(double v) { return v == v && v - v == 0.0; }
static double absolute(double v) { return v < 0 ? -v : v; }

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static fmi2Component instantiate(fmi2Type type, const char *name)
{
    return F.Instantiate(name, type, cfg.guid, "file:///nonexistent", &CALLBACKS, fmi2False, fmi2False);
}

/* Setup at t = 0 and initialization; 1 if all succeeded. */
static int initialize(fmi2Component c)
{
    return F.SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2False, 0.0) == fmi2OK &&
           F.EnterInitializationMode(c) == fmi2OK && F.ExitInitializationMode(c) == fmi2OK;
}

static fmi2Component started(fmi2Type type, const char *name)
{
    fmi2Component c = instantiate(type, name);
    if (c && !initialize(c)) {
        F.FreeInstance(c);
        return NULL;
    }
    return c;
}

/* n steps of cfg.H, accumulating the time as a master does; *t is updated. */
static int steps(fmi2Component c, double *t, int n)
{
    int i;
    for (i = 0; i < n; ++i) {
        if (F.DoStep(c, *t, cfg.H, fmi2True) != fmi2OK) return 0;
        *t += cfg.H;
    }
    return 1;
}

/* Outputs followed by states, for bitwise comparisons. */
static int snapshot_values(fmi2Component c, double *out)
{
    fmi2ValueReference vr;
    int k;
    for (k = 0; k < cfg.ny; ++k) {
        vr = FFMU_VR_OUTPUT + k;
        if (F.GetReal(c, &vr, 1, out + k) != fmi2OK) return 0;
    }
    for (k = 0; k < cfg.nx; ++k) {
        vr = FFMU_VR_STATE + k;
        if (F.GetReal(c, &vr, 1, out + cfg.ny + k) != fmi2OK) return 0;
    }
    return 1;
}

static size_t value_bytes(void) { return (size_t)(cfg.ny + cfg.nx) * sizeof(double); }

static double *new_values(void) { return (double *)calloc((size_t)(cfg.ny + cfg.nx + 1), sizeof(double)); }

/* ------------------------------------------------------------------------ */
/* Loading                                                                  */
/* ------------------------------------------------------------------------ */

static void *load(dynlib lib, const char *name, int *missing)
{
    void *p = dynlib_symbol(lib, name);
    if (!p) {
        printf("FAIL symbol %s not exported\n", name);
        ++*missing;
    }
    return p;
}

#define LOAD(name) F.name = (fmi2##name##TYPE *)load(lib, "fmi2" #name, &missing)

static int load_api(const char *path)
{
    int missing = 0;
    dynlib lib = dynlib_open(path);
    if (!lib) {
        printf("FAIL cannot load %s: %s\n", path, dynlib_error());
        return 0;
    }
    LOAD(GetTypesPlatform);
    LOAD(GetVersion);
    LOAD(SetDebugLogging);
    LOAD(Instantiate);
    LOAD(FreeInstance);
    LOAD(SetupExperiment);
    LOAD(EnterInitializationMode);
    LOAD(ExitInitializationMode);
    LOAD(Terminate);
    LOAD(Reset);
    LOAD(GetReal);
    LOAD(GetInteger);
    LOAD(GetBoolean);
    LOAD(GetString);
    LOAD(SetReal);
    LOAD(SetInteger);
    LOAD(SetBoolean);
    LOAD(SetString);
    LOAD(GetFMUstate);
    LOAD(SetFMUstate);
    LOAD(FreeFMUstate);
    LOAD(SerializedFMUstateSize);
    LOAD(SerializeFMUstate);
    LOAD(DeSerializeFMUstate);
    LOAD(GetDirectionalDerivative);
    LOAD(EnterEventMode);
    LOAD(NewDiscreteStates);
    LOAD(EnterContinuousTimeMode);
    LOAD(CompletedIntegratorStep);
    LOAD(SetTime);
    LOAD(SetContinuousStates);
    LOAD(GetDerivatives);
    LOAD(GetEventIndicators);
    LOAD(GetContinuousStates);
    LOAD(GetNominalsOfContinuousStates);
    LOAD(SetRealInputDerivatives);
    LOAD(GetRealOutputDerivatives);
    LOAD(DoStep);
    LOAD(CancelStep);
    LOAD(GetStatus);
    LOAD(GetRealStatus);
    LOAD(GetIntegerStatus);
    LOAD(GetBooleanStatus);
    LOAD(GetStringStatus);
    library = lib; /* closed at the end, so that valgrind sees nothing left */
    check(missing == 0, "all 44 FMI 2.0 functions are exported");
    return missing == 0;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */
/* ------------------------------------------------------------------------ */

static void test_instantiate(void)
{
    fmi2CallbackFunctions no_alloc = CALLBACKS;
    fmi2Component c;
    long e0;

    check(strcmp(F.GetVersion(), "2.0") == 0, "fmi2GetVersion is \"2.0\"");
    check(strcmp(F.GetTypesPlatform(), "default") == 0, "fmi2GetTypesPlatform is \"default\"");

    e0 = logged_errors;
    c = F.Instantiate("wrong_guid", fmi2CoSimulation, "{00000000-0000-0000-0000-000000000000}", "", &CALLBACKS,
                      fmi2False, fmi2False);
    check(c == NULL && logged_errors > e0, "fmi2Instantiate with a wrong GUID -> NULL, logged");
    if (c) F.FreeInstance(c);

    e0 = logged_errors;
    c = F.Instantiate("null_guid", fmi2CoSimulation, NULL, "", &CALLBACKS, fmi2False, fmi2False);
    check(c == NULL && logged_errors > e0, "fmi2Instantiate with a NULL GUID -> NULL, logged");

    c = F.Instantiate("null_functions", fmi2CoSimulation, cfg.guid, "", NULL, fmi2False, fmi2False);
    check(c == NULL, "fmi2Instantiate with NULL functions -> NULL");

    no_alloc.allocateMemory = NULL;
    e0 = logged_errors;
    c = F.Instantiate("no_allocator", fmi2CoSimulation, cfg.guid, "", &no_alloc, fmi2False, fmi2False);
    check(c == NULL && logged_errors > e0, "fmi2Instantiate without allocateMemory -> NULL, logged");
    no_alloc = CALLBACKS;
    no_alloc.freeMemory = NULL;
    c = F.Instantiate("no_free", fmi2CoSimulation, cfg.guid, "", &no_alloc, fmi2False, fmi2False);
    check(c == NULL, "fmi2Instantiate without freeMemory -> NULL");

    e0 = logged_errors;
    c = F.Instantiate(NULL, fmi2CoSimulation, cfg.guid, "", &CALLBACKS, fmi2False, fmi2False);
    check(c == NULL && logged_errors > e0, "fmi2Instantiate with a NULL instanceName -> NULL, logged");
    c = F.Instantiate("", fmi2CoSimulation, cfg.guid, "", &CALLBACKS, fmi2False, fmi2False);
    check(c == NULL, "fmi2Instantiate with an empty instanceName -> NULL");
    c = F.Instantiate("bad_type", (fmi2Type)7, cfg.guid, "", &CALLBACKS, fmi2False, fmi2False);
    check(c == NULL, "fmi2Instantiate with fmuType 7 -> NULL");

    /* A NULL logger is allowed; errors then just are not reported. */
    c = F.Instantiate("no_logger", fmi2CoSimulation, cfg.guid, NULL, &CALLBACKS_NO_LOGGER, fmi2False, fmi2True);
    check(c != NULL, "fmi2Instantiate with a NULL logger (and NULL resource location) succeeds");
    if (c) {
        EXPECT_ERROR_UNLOGGED(F.DoStep(c, 0.0, cfg.H, fmi2True), "misuse of an instance without logger");
        F.FreeInstance(c);
    }

    F.FreeInstance(NULL);
    check(1, "fmi2FreeInstance(NULL) does not crash");
}

static void test_null_component(void)
{
    fmi2ValueReference vr = FFMU_VR_STATE;
    double v = 0, x[4] = {0};
    fmi2FMUstate s = NULL;
    fmi2Boolean b;
    fmi2EventInfo info;
    size_t size;
    fmi2Status status;
    char bytes[8] = {0};
    int ok = 1;
#define NULL_CASE(call)                                                                                         \
    if ((call) != fmi2Error) {                                                                                   \
        ok = 0;                                                                                                  \
        printf("# NULL component accepted by %s\n", #call);                                                      \
    }
    NULL_CASE(F.SetDebugLogging(NULL, fmi2True, 0, NULL));
    NULL_CASE(F.SetupExperiment(NULL, fmi2False, 0, 0, fmi2False, 0));
    NULL_CASE(F.EnterInitializationMode(NULL));
    NULL_CASE(F.ExitInitializationMode(NULL));
    NULL_CASE(F.Terminate(NULL));
    NULL_CASE(F.Reset(NULL));
    NULL_CASE(F.GetReal(NULL, &vr, 1, &v));
    NULL_CASE(F.SetReal(NULL, &vr, 1, &v));
    NULL_CASE(F.GetInteger(NULL, NULL, 0, NULL));
    NULL_CASE(F.GetBoolean(NULL, NULL, 0, NULL));
    NULL_CASE(F.GetString(NULL, NULL, 0, NULL));
    NULL_CASE(F.SetInteger(NULL, NULL, 0, NULL));
    NULL_CASE(F.SetBoolean(NULL, NULL, 0, NULL));
    NULL_CASE(F.SetString(NULL, NULL, 0, NULL));
    NULL_CASE(F.GetFMUstate(NULL, &s));
    NULL_CASE(F.SetFMUstate(NULL, s));
    NULL_CASE(F.FreeFMUstate(NULL, &s));
    NULL_CASE(F.SerializedFMUstateSize(NULL, s, &size));
    NULL_CASE(F.SerializeFMUstate(NULL, s, bytes, sizeof bytes));
    NULL_CASE(F.DeSerializeFMUstate(NULL, bytes, sizeof bytes, &s));
    NULL_CASE(F.GetDirectionalDerivative(NULL, &vr, 1, &vr, 1, &v, &v));
    NULL_CASE(F.EnterEventMode(NULL));
    NULL_CASE(F.NewDiscreteStates(NULL, &info));
    NULL_CASE(F.EnterContinuousTimeMode(NULL));
    NULL_CASE(F.CompletedIntegratorStep(NULL, fmi2True, &b, &b));
    NULL_CASE(F.SetTime(NULL, 0));
    NULL_CASE(F.SetContinuousStates(NULL, x, 0));
    NULL_CASE(F.GetDerivatives(NULL, x, 0));
    NULL_CASE(F.GetEventIndicators(NULL, x, 0));
    NULL_CASE(F.GetContinuousStates(NULL, x, 0));
    NULL_CASE(F.GetNominalsOfContinuousStates(NULL, x, 0));
    NULL_CASE(F.SetRealInputDerivatives(NULL, NULL, 0, NULL, NULL));
    NULL_CASE(F.GetRealOutputDerivatives(NULL, NULL, 0, NULL, NULL));
    NULL_CASE(F.DoStep(NULL, 0, cfg.H, fmi2True));
    NULL_CASE(F.CancelStep(NULL));
    NULL_CASE(F.GetStatus(NULL, fmi2DoStepStatus, &status));
    NULL_CASE(F.GetRealStatus(NULL, fmi2LastSuccessfulTime, &v));
    NULL_CASE(F.GetIntegerStatus(NULL, fmi2DoStepStatus, (fmi2Integer *)&b));
    NULL_CASE(F.GetBooleanStatus(NULL, fmi2Terminated, &b));
    NULL_CASE(F.GetStringStatus(NULL, fmi2PendingStatus, (fmi2String *)&s));
#undef NULL_CASE
    check(ok, "every function given a NULL component -> fmi2Error");
}

static void test_debug_logging(void)
{
    fmi2Component c = instantiate(fmi2CoSimulation, "logging");
    fmi2String known[2] = {"logStatusError", "logAll"};
    fmi2String unknown[1] = {"logEverything"};
    long before;
    if (!c) {
        check(0, "instantiate for the logging checks");
        return;
    }
    EXPECT_ERROR(F.SetDebugLogging(c, fmi2True, 1, unknown), "fmi2SetDebugLogging with an unknown category");
    EXPECT_ERROR(F.SetDebugLogging(c, fmi2True, 1, NULL), "fmi2SetDebugLogging with NULL categories, n=1");
    EXPECT_OK(F.SetDebugLogging(c, fmi2True, 2, known), "fmi2SetDebugLogging with known categories");
    EXPECT_OK(F.SetDebugLogging(c, fmi2True, 0, NULL), "fmi2SetDebugLogging with nCategories=0 (all)");
    before = logged_other;
    F.SetupExperiment(c, fmi2False, 0, 0, fmi2False, 0);
    check(logged_other > before, "debug logging on: calls are traced under logAll");
    EXPECT_OK(F.SetDebugLogging(c, fmi2False, 0, NULL), "fmi2SetDebugLogging off");
    before = logged_other;
    F.EnterInitializationMode(c);
    F.ExitInitializationMode(c);
    check(logged_other == before, "debug logging off: no trace messages");
    F.FreeInstance(c);
}

static void test_call_sequence_cs(void)
{
    fmi2Component c = instantiate(fmi2CoSimulation, "sequence");
    double x[64];
    double t;
    fmi2EventInfo info;
    if (!c) {
        check(0, "instantiate for the call-sequence checks");
        return;
    }
    EXPECT_ERROR(F.DoStep(c, 0.0, cfg.H, fmi2True), "fmi2DoStep before initialization (instantiated)");
    EXPECT_ERROR(F.ExitInitializationMode(c), "fmi2ExitInitializationMode in instantiated");
    EXPECT_ERROR(F.Terminate(c), "fmi2Terminate in instantiated");
    EXPECT_ERROR(F.GetRealStatus(c, fmi2LastSuccessfulTime, &t), "fmi2GetRealStatus in instantiated");
    EXPECT_OK(F.SetupExperiment(c, fmi2True, 1e-6, 0.0, fmi2True, 10.0), "fmi2SetupExperiment");
    EXPECT_OK(F.EnterInitializationMode(c), "fmi2EnterInitializationMode");
    EXPECT_ERROR(F.DoStep(c, 0.0, cfg.H, fmi2True), "fmi2DoStep in initializationMode");
    EXPECT_ERROR(F.SetupExperiment(c, fmi2False, 0, 0, fmi2False, 0), "fmi2SetupExperiment in initializationMode");
    EXPECT_ERROR(F.EnterInitializationMode(c), "fmi2EnterInitializationMode twice");
    EXPECT_OK(F.ExitInitializationMode(c), "fmi2ExitInitializationMode");
    EXPECT_ERROR(F.SetupExperiment(c, fmi2False, 0, 0, fmi2False, 0), "fmi2SetupExperiment after initialization");
    EXPECT_ERROR(F.ExitInitializationMode(c), "fmi2ExitInitializationMode in stepComplete");
    /* model-exchange functions on a co-simulation instance */
    EXPECT_ERROR(F.GetDerivatives(c, x, (size_t)cfg.nx), "fmi2GetDerivatives on a co-simulation instance");
    EXPECT_ERROR(F.EnterEventMode(c), "fmi2EnterEventMode on a co-simulation instance");
    EXPECT_ERROR(F.NewDiscreteStates(c, &info), "fmi2NewDiscreteStates on a co-simulation instance");
    EXPECT_ERROR(F.SetTime(c, 0.0), "fmi2SetTime on a co-simulation instance");
    EXPECT_OK(F.DoStep(c, 0.0, cfg.H, fmi2True), "fmi2DoStep in stepComplete");
    EXPECT_OK(F.Terminate(c), "fmi2Terminate");
    EXPECT_ERROR(F.DoStep(c, cfg.H, cfg.H, fmi2True), "fmi2DoStep after fmi2Terminate");
    EXPECT_ERROR(F.Terminate(c), "fmi2Terminate twice");
    EXPECT_OK(F.Reset(c), "fmi2Reset after fmi2Terminate");
    check(initialize(c), "initialization after fmi2Reset");
    EXPECT_OK(F.DoStep(c, 0.0, cfg.H, fmi2True), "fmi2DoStep from t=0 after fmi2Reset");
    F.FreeInstance(c);
}

static void test_value_references(void)
{
    fmi2Component c = started(fmi2CoSimulation, "value_refs");
    const fmi2ValueReference bad[] = {0,
                                      FFMU_VR_PARAMETER - 1,
                                      (fmi2ValueReference)(FFMU_VR_PARAMETER + cfg.np),
                                      (fmi2ValueReference)(FFMU_VR_STATE + cfg.nx),
                                      (fmi2ValueReference)(FFMU_VR_ACCELERATION + cfg.nq),
                                      (fmi2ValueReference)(FFMU_VR_INPUT + cfg.nu),
                                      (fmi2ValueReference)(FFMU_VR_OUTPUT + cfg.ny),
                                      6 * FFMU_VR_BLOCK,
                                      0xFFFFFFFFu};
    fmi2ValueReference vr;
    double v = 0;
    fmi2Integer iv = 0;
    fmi2Boolean bv = 0;
    fmi2String sv = NULL;
    size_t i;
    int get_ok = 1, set_ok = 1, n_bad = (int)(sizeof bad / sizeof bad[0]);
    long e0 = logged_errors;
    if (!c) {
        check(0, "instantiate and initialize for the value-reference checks");
        return;
    }
    for (i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        if (F.GetReal(c, &bad[i], 1, &v) != fmi2Error) get_ok = 0;
        if (F.SetReal(c, &bad[i], 1, &v) != fmi2Error) set_ok = 0;
    }
    check(get_ok && logged_errors >= e0 + n_bad, "fmi2GetReal with each of %d unknown value references -> fmi2Error, "
          "logged", n_bad);
    check(set_ok, "fmi2SetReal with each of %d unknown value references -> fmi2Error", n_bad);

    EXPECT_ERROR(F.GetReal(c, NULL, 1, &v), "fmi2GetReal with a NULL vr array and nvr=1");
    EXPECT_ERROR(F.SetReal(c, NULL, 1, &v), "fmi2SetReal with a NULL vr array and nvr=1");
    vr = FFMU_VR_STATE;
    EXPECT_ERROR(F.GetReal(c, &vr, 1, NULL), "fmi2GetReal with a NULL value array and nvr=1");
    EXPECT_ERROR(F.SetReal(c, &vr, 1, NULL), "fmi2SetReal with a NULL value array and nvr=1");
    EXPECT_OK(F.GetReal(c, NULL, 0, NULL), "fmi2GetReal with nvr=0 and NULL arrays");
    EXPECT_OK(F.SetReal(c, NULL, 0, NULL), "fmi2SetReal with nvr=0 and NULL arrays");

    EXPECT_OK(F.GetInteger(c, NULL, 0, NULL), "fmi2GetInteger with nvr=0");
    EXPECT_OK(F.GetBoolean(c, NULL, 0, NULL), "fmi2GetBoolean with nvr=0");
    EXPECT_OK(F.GetString(c, NULL, 0, NULL), "fmi2GetString with nvr=0");
    EXPECT_OK(F.SetInteger(c, NULL, 0, NULL), "fmi2SetInteger with nvr=0");
    EXPECT_OK(F.SetBoolean(c, NULL, 0, NULL), "fmi2SetBoolean with nvr=0");
    EXPECT_OK(F.SetString(c, NULL, 0, NULL), "fmi2SetString with nvr=0");
    vr = FFMU_VR_STATE; /* a Real variable: no Integer/Boolean/String has it */
    EXPECT_ERROR(F.GetInteger(c, &vr, 1, &iv), "fmi2GetInteger of any value reference");
    EXPECT_ERROR(F.GetBoolean(c, &vr, 1, &bv), "fmi2GetBoolean of any value reference");
    EXPECT_ERROR(F.GetString(c, &vr, 1, &sv), "fmi2GetString of any value reference");
    EXPECT_ERROR(F.SetInteger(c, &vr, 1, &iv), "fmi2SetInteger of any value reference");
    EXPECT_ERROR(F.SetBoolean(c, &vr, 1, &bv), "fmi2SetBoolean of any value reference");
    EXPECT_ERROR(F.SetString(c, &vr, 1, &sv), "fmi2SetString of any value reference");
    EXPECT_ERROR(F.GetInteger(c, NULL, 1, &iv), "fmi2GetInteger with a NULL vr array and nvr=1");
    F.FreeInstance(c);
}

/* Which variables can be set when; finds the tunable parameters. */
static void test_set_rules(void)
{
    fmi2Component c = started(fmi2CoSimulation, "set_rules");
    fmi2ValueReference vr, mixed[2];
    double v, before, after, values[2];
    int k, fixed_count = 0;
    if (!c) {
        check(0, "instantiate and initialize for the fmi2SetReal checks");
        return;
    }
    if (cfg.ny > 0) {
        vr = FFMU_VR_OUTPUT;
        v = 1.0;
        EXPECT_ERROR(F.SetReal(c, &vr, 1, &v), "fmi2SetReal of an output");
    }
    if (cfg.nq > 0) {
        vr = FFMU_VR_ACCELERATION;
        v = 1.0;
        EXPECT_ERROR(F.SetReal(c, &vr, 1, &v), "fmi2SetReal of an acceleration");
        vr = FFMU_VR_STATE;
        EXPECT_ERROR(F.SetReal(c, &vr, 1, &v), "fmi2SetReal of a state after initialization (co-simulation)");
    }
    if (cfg.nu > 0 && cfg.ny > 0) {
        /* a failing call changes nothing, not even its valid part */
        mixed[0] = FFMU_VR_INPUT;
        mixed[1] = FFMU_VR_OUTPUT;
        values[0] = 42.0;
        values[1] = 1.0;
        F.GetReal(c, mixed, 1, &before);
        EXPECT_ERROR(F.SetReal(c, mixed, 2, values), "fmi2SetReal of an input and an output together");
        F.GetReal(c, mixed, 1, &after);
        check(before == after, "the input is unchanged by the refused fmi2SetReal (%g)", after);
        v = 0.25;
        EXPECT_OK(F.SetReal(c, mixed, 1, &v), "fmi2SetReal of an input in stepComplete");
    }
    for (k = 0; k < cfg.np; ++k) {
        vr = (fmi2ValueReference)(FFMU_VR_PARAMETER + k);
        F.GetReal(c, &vr, 1, &v);
        cfg.tunable[k] = F.SetReal(c, &vr, 1, &v) == fmi2OK;
        if (!cfg.tunable[k]) fixed_count++;
    }
    printf("# %d of %d parameters are fixed after initialization\n", fixed_count, cfg.np);
    if (cfg.fixed >= 0 && cfg.fixed < cfg.np) {
        vr = (fmi2ValueReference)(FFMU_VR_PARAMETER + cfg.fixed);
        F.GetReal(c, &vr, 1, &before);
        v = before * 2 + 1;
        EXPECT_ERROR(F.SetReal(c, &vr, 1, &v), "fmi2SetReal of fixed parameter --fixed after initialization");
        F.GetReal(c, &vr, 1, &after);
        check(after == before, "the fixed parameter keeps its value");
    }
    F.FreeInstance(c);

    /* before initialization everything but outputs and accelerations is settable */
    c = instantiate(fmi2CoSimulation, "set_rules_2");
    if (c && cfg.np > 0 && cfg.nx > 0) {
        mixed[0] = FFMU_VR_PARAMETER + (cfg.fixed >= 0 ? cfg.fixed : 0);
        mixed[1] = FFMU_VR_STATE;
        F.GetReal(c, mixed, 2, values);
        EXPECT_OK(F.SetReal(c, mixed, 2, values), "fmi2SetReal of a parameter and a state in instantiated");
        F.EnterInitializationMode(c);
        EXPECT_OK(F.SetReal(c, mixed, 2, values), "fmi2SetReal of a parameter and a state in initializationMode");
    }
    if (c) F.FreeInstance(c);
}

static void test_do_step(void)
{
    fmi2Component c = started(fmi2CoSimulation, "do_step");
    double t = 0, last = -1, not_multiple;
    if (!c) {
        check(0, "instantiate and initialize for the fmi2DoStep checks");
        return;
    }
    EXPECT_ERROR(F.DoStep(c, 0.5, cfg.H, fmi2True), "fmi2DoStep from the wrong time (0.5 instead of 0)");
    EXPECT_ERROR(F.DoStep(c, -cfg.H, cfg.H, fmi2True), "fmi2DoStep from a time before the FMU time");
    EXPECT_ERROR(F.DoStep(c, 0.0, 0.0, fmi2True), "fmi2DoStep with step size 0");
    EXPECT_ERROR(F.DoStep(c, 0.0, -cfg.H, fmi2True), "fmi2DoStep with a negative step size");
    EXPECT_ERROR(F.DoStep(c, 0.0, 0.0 / 0.0, fmi2True), "fmi2DoStep with a NaN step size");
    EXPECT_ERROR(F.DoStep(c, 0.0 / 0.0, cfg.H, fmi2True), "fmi2DoStep from a NaN communication point");
    EXPECT_ERROR(F.DoStep(c, 0.0, 1e300, fmi2True), "fmi2DoStep with an absurdly large step");
    /* any positive step works: whole internal steps, then a shorter one */
    if (cfg.h > 0) {
        EXPECT_OK(F.DoStep(c, 0.0, 1.5 * cfg.h, fmi2True), "fmi2DoStep with 1.5 internal steps");
        t = 1.5 * cfg.h;
        EXPECT_OK(F.DoStep(c, t, 0.5 * cfg.h, fmi2True), "fmi2DoStep with half an internal step");
        t += 0.5 * cfg.h;
        EXPECT_OK(F.DoStep(c, t, cfg.h, fmi2True), "fmi2DoStep with exactly one internal step");
        t += cfg.h;
        EXPECT_OK(F.DoStep(c, t * (1 + 1e-12), 3 * cfg.h * (1 - 1e-12), fmi2True),
                  "fmi2DoStep with rounding noise of 1e-12 in time and step size");
        t += 3 * cfg.h;
    }
    /* not a multiple of any plausible internal step (h > 1e-9 s) */
    not_multiple = cfg.H * (1 + 3.3e-7);
    EXPECT_OK(F.DoStep(c, t, not_multiple, fmi2True), "fmi2DoStep with a step size that is no multiple of h");
    t += not_multiple;
    check(steps(c, &t, 3), "3 more fmi2DoStep calls");
    F.GetRealStatus(c, fmi2LastSuccessfulTime, &last);
    check(absolute(last - t) <= 1e-12, "the time is %.17g after the refused calls and the steps (expected %.17g)",
          last, t);
    F.FreeInstance(c);

    /* the time starts at startTime */
    c = instantiate(fmi2CoSimulation, "start_time");
    if (!c) return;
    EXPECT_OK(F.SetupExperiment(c, fmi2False, 0, 12.5, fmi2True, 20.0), "fmi2SetupExperiment with startTime 12.5");
    EXPECT_ERROR(F.SetupExperiment(c, fmi2False, 0, 1.0, fmi2True, 0.5),
                 "fmi2SetupExperiment with stopTime before startTime (state unchanged)");
    F.EnterInitializationMode(c);
    F.ExitInitializationMode(c);
    EXPECT_ERROR(F.DoStep(c, 0.0, cfg.H, fmi2True), "fmi2DoStep from 0 when the experiment starts at 12.5");
    t = 12.5;
    check(steps(c, &t, 3), "3 fmi2DoStep calls from startTime 12.5");
    F.GetRealStatus(c, fmi2LastSuccessfulTime, &last);
    check(absolute(last - t) <= 1e-12, "the time is %.17g (expected %.17g)", last, t);
    F.FreeInstance(c);
}

static void test_status_functions(void)
{
    fmi2Component c = started(fmi2CoSimulation, "status");
    fmi2ValueReference vr = FFMU_VR_INPUT;
    fmi2Integer order = 1, iv;
    fmi2Status st = fmi2Fatal;
    fmi2Boolean bv = fmi2True;
    fmi2String sv;
    double t = 0, v = 0;
    if (!c) {
        check(0, "instantiate and initialize for the status checks");
        return;
    }
    steps(c, &t, 2);
    EXPECT_OK(F.GetRealStatus(c, fmi2LastSuccessfulTime, &v), "fmi2GetRealStatus(fmi2LastSuccessfulTime)");
    check(absolute(v - t) <= 1e-12, "fmi2LastSuccessfulTime is the FMU time %.17g (got %.17g)", t, v);
    EXPECT_OK(F.GetBooleanStatus(c, fmi2Terminated, &bv), "fmi2GetBooleanStatus(fmi2Terminated)");
    check(bv == fmi2False, "fmi2Terminated is false");
    EXPECT_OK(F.GetStatus(c, fmi2DoStepStatus, &st), "fmi2GetStatus(fmi2DoStepStatus)");
    check(st == fmi2OK, "fmi2DoStepStatus is fmi2OK");
    EXPECT_ERROR(F.GetStatus(c, fmi2PendingStatus, &st), "fmi2GetStatus(fmi2PendingStatus)");
    EXPECT_ERROR(F.GetRealStatus(c, fmi2DoStepStatus, &v), "fmi2GetRealStatus(fmi2DoStepStatus)");
    EXPECT_ERROR(F.GetIntegerStatus(c, fmi2DoStepStatus, &iv), "fmi2GetIntegerStatus (no integer status exists)");
    EXPECT_ERROR(F.GetBooleanStatus(c, fmi2LastSuccessfulTime, &bv), "fmi2GetBooleanStatus(fmi2LastSuccessfulTime)");
    EXPECT_ERROR(F.GetStringStatus(c, fmi2PendingStatus, &sv), "fmi2GetStringStatus(fmi2PendingStatus)");
    EXPECT_ERROR(F.GetRealStatus(c, fmi2LastSuccessfulTime, NULL), "fmi2GetRealStatus with a NULL value");
    EXPECT_ERROR(F.CancelStep(c), "fmi2CancelStep");
    EXPECT_ERROR(F.SetRealInputDerivatives(c, &vr, 1, &order, &v), "fmi2SetRealInputDerivatives");
    vr = FFMU_VR_OUTPUT;
    EXPECT_ERROR(F.GetRealOutputDerivatives(c, &vr, 1, &order, &v), "fmi2GetRealOutputDerivatives");
    F.FreeInstance(c);
}

/* Checks the directional derivative of outputs and accelerations with
 * respect to input 0 against central differences. */
static void compare_with_differences(fmi2Component c)
{
    int n = cfg.ny + cfg.nq, k, ok = 1;
    fmi2ValueReference *unknown = (fmi2ValueReference *)calloc((size_t)n + 1, sizeof *unknown);
    double *ad = (double *)calloc((size_t)n + 1, sizeof(double));
    double *plus = (double *)calloc((size_t)n + 1, sizeof(double));
    double *minus = (double *)calloc((size_t)n + 1, sizeof(double));
    fmi2ValueReference input = FFMU_VR_INPUT;
    double u0 = 0, u, eps, one = 1.0, fd, worst = 0;
    if (!unknown || !ad || !plus || !minus) goto done;
    for (k = 0; k < cfg.ny; ++k) unknown[k] = (fmi2ValueReference)(FFMU_VR_OUTPUT + k);
    for (k = 0; k < cfg.nq; ++k) unknown[cfg.ny + k] = (fmi2ValueReference)(FFMU_VR_ACCELERATION + k);
    EXPECT_OK(F.GetDirectionalDerivative(c, unknown, (size_t)n, &input, 1, &one, ad),
              "fmi2GetDirectionalDerivative of all outputs and accelerations w.r.t. input 0");
    F.GetReal(c, &input, 1, &u0);
    eps = 1e-6 * (1 + absolute(u0));
    u = u0 + eps;
    F.SetReal(c, &input, 1, &u);
    F.GetReal(c, unknown, (size_t)n, plus);
    u = u0 - eps;
    F.SetReal(c, &input, 1, &u);
    F.GetReal(c, unknown, (size_t)n, minus);
    F.SetReal(c, &input, 1, &u0);
    for (k = 0; k < n; ++k) {
        fd = (plus[k] - minus[k]) / (2 * eps);
        if (absolute(fd - ad[k]) > 1e-5 * (1 + absolute(fd))) ok = 0;
        if (absolute(fd - ad[k]) > worst) worst = absolute(fd - ad[k]);
    }
    check(ok, "directional derivatives match central differences (largest difference %.3g)", worst);
done:
    free(unknown);
    free(ad);
    free(plus);
    free(minus);
}

static void test_directional(void)
{
    fmi2Component c = instantiate(fmi2CoSimulation, "directional");
    fmi2ValueReference unknown, known;
    double seed = 1.0, result = -1.0;
    if (!c) {
        check(0, "instantiate for the directional-derivative checks");
        return;
    }
    unknown = FFMU_VR_STATE + cfg.nq;
    known = FFMU_VR_STATE + cfg.nq;
    EXPECT_ERROR(F.GetDirectionalDerivative(c, &unknown, 1, &known, 1, &seed, &result),
                 "fmi2GetDirectionalDerivative in instantiated");
    if (!initialize(c)) {
        check(0, "initialize for the directional-derivative checks");
        F.FreeInstance(c);
        return;
    }
    if (cfg.nq > 0) {
        EXPECT_OK(F.GetDirectionalDerivative(c, &unknown, 1, &known, 1, &seed, &result),
                  "fmi2GetDirectionalDerivative d der(q0) / d qd0");
        check(absolute(result - 1.0) < 1e-12, "d der(q0) / d qd0 = 1 (got %.17g)", result);
        unknown = FFMU_VR_STATE; /* q0 itself is no unknown */
        EXPECT_ERROR(F.GetDirectionalDerivative(c, &unknown, 1, &known, 1, &seed, &result),
                     "fmi2GetDirectionalDerivative with the state q0 as unknown");
        unknown = FFMU_VR_ACCELERATION;
        EXPECT_OK(F.GetDirectionalDerivative(c, &unknown, 1, NULL, 0, NULL, &result),
                  "fmi2GetDirectionalDerivative with no knowns");
        check(result == 0.0, "no knowns give a zero derivative (got %g)", result);
        EXPECT_ERROR(F.GetDirectionalDerivative(c, &unknown, 1, &known, 1, NULL, &result),
                     "fmi2GetDirectionalDerivative with NULL dvKnown");
        EXPECT_ERROR(F.GetDirectionalDerivative(c, &unknown, 1, &known, 1, &seed, NULL),
                     "fmi2GetDirectionalDerivative with NULL dvUnknown");
        if (cfg.ny > 0) {
            known = FFMU_VR_OUTPUT;
            EXPECT_ERROR(F.GetDirectionalDerivative(c, &unknown, 1, &known, 1, &seed, &result),
                         "fmi2GetDirectionalDerivative with an output as known");
        }
        if (cfg.np > 0) {
            known = FFMU_VR_PARAMETER;
            EXPECT_ERROR(F.GetDirectionalDerivative(c, &unknown, 1, &known, 1, &seed, &result),
                         "fmi2GetDirectionalDerivative with a parameter as known");
        }
        if (cfg.nu > 0) {
            known = FFMU_VR_STATE;
            unknown = FFMU_VR_INPUT;
            EXPECT_ERROR(F.GetDirectionalDerivative(c, &unknown, 1, &known, 1, &seed, &result),
                         "fmi2GetDirectionalDerivative with an input as unknown");
        }
        known = 12345;
        unknown = FFMU_VR_ACCELERATION;
        EXPECT_ERROR(F.GetDirectionalDerivative(c, &unknown, 1, &known, 1, &seed, &result),
                     "fmi2GetDirectionalDerivative with an unknown value reference");
    }
    if (cfg.nu > 0) compare_with_differences(c);
    F.FreeInstance(c);
}

/* Corrupts one copy of valid bytes and expects fmi2DeSerializeFMUstate to refuse it. */
static void expect_bad_bytes(fmi2Component c, const char *valid, size_t size, size_t offset, const void *patch,
                             size_t patch_size, size_t use_size, const char *what)
{
    char *copy = (char *)malloc(size + 1);
    fmi2FMUstate s = NULL;
    if (!copy) return;
    memcpy(copy, valid, size);
    copy[size] = 0;
    if (patch) memcpy(copy + offset, patch, patch_size);
    EXPECT_ERROR(F.DeSerializeFMUstate(c, copy, use_size, &s), what);
    check(s == NULL, "  ... and leaves the FMUstate pointer NULL");
    free(copy);
}

static void test_fmu_state_misuse(void)
{
    fmi2Component c = started(fmi2CoSimulation, "fmu_state_misuse");
    fmi2Component me = started(fmi2ModelExchange, "fmu_state_misuse_me");
    fmi2FMUstate s = NULL, other = NULL;
    char garbage[256], *bytes = NULL;
    size_t size = 0, i, guid_length = strlen(cfg.guid);
    int32_t bad_int = 12345;
    uint32_t bad_version = 99;
    if (!c || !me) {
        check(0, "instantiate and initialize for the FMU-state checks");
        goto done;
    }
    for (i = 0; i < sizeof garbage; ++i) garbage[i] = (char)(i * 37 + 11);
    EXPECT_ERROR(F.DeSerializeFMUstate(c, garbage, sizeof garbage, &s), "fmi2DeSerializeFMUstate of garbage bytes");
    EXPECT_ERROR(F.DeSerializeFMUstate(c, garbage, 3, &s), "fmi2DeSerializeFMUstate of 3 bytes");
    EXPECT_ERROR(F.DeSerializeFMUstate(c, NULL, 10, &s), "fmi2DeSerializeFMUstate of NULL bytes");
    EXPECT_ERROR(F.DeSerializeFMUstate(c, garbage, sizeof garbage, NULL), "fmi2DeSerializeFMUstate to NULL");
    EXPECT_ERROR(F.SetFMUstate(c, NULL), "fmi2SetFMUstate(NULL)");
    EXPECT_ERROR(F.SetFMUstate(c, (fmi2FMUstate)garbage), "fmi2SetFMUstate of a foreign pointer");
    EXPECT_ERROR(F.GetFMUstate(c, NULL), "fmi2GetFMUstate to NULL");
    EXPECT_OK(F.FreeFMUstate(c, &s), "fmi2FreeFMUstate of a NULL state");
    EXPECT_ERROR(F.FreeFMUstate(c, NULL), "fmi2FreeFMUstate(NULL pointer)");

    EXPECT_OK(F.GetFMUstate(c, &s), "fmi2GetFMUstate");
    EXPECT_ERROR(F.SetFMUstate(me, s), "fmi2SetFMUstate of a co-simulation state in model exchange");
    EXPECT_ERROR(F.SerializedFMUstateSize(c, s, NULL), "fmi2SerializedFMUstateSize to NULL");
    EXPECT_OK(F.SerializedFMUstateSize(c, s, &size), "fmi2SerializedFMUstateSize");
    bytes = (char *)malloc(size + 1);
    if (!bytes) goto done;
    EXPECT_ERROR(F.SerializeFMUstate(c, s, bytes, size - 1), "fmi2SerializeFMUstate into a buffer 1 byte short");
    EXPECT_OK(F.SerializeFMUstate(c, s, bytes, size), "fmi2SerializeFMUstate");

    expect_bad_bytes(c, bytes, size, 0, NULL, 0, size - 1, "fmi2DeSerializeFMUstate of a truncated state");
    expect_bad_bytes(c, bytes, size, 0, NULL, 0, size + 1, "fmi2DeSerializeFMUstate with a trailing byte");
    expect_bad_bytes(c, bytes, size, 0, "X", 1, size, "fmi2DeSerializeFMUstate with a bad magic tag");
    expect_bad_bytes(c, bytes, size, 8, &bad_version, 4, size, "fmi2DeSerializeFMUstate of format version 99");
    expect_bad_bytes(c, bytes, size, 16, "?", 1, size, "fmi2DeSerializeFMUstate with another GUID");
    expect_bad_bytes(c, bytes, size, 16 + guid_length + 4, &bad_int, 4, size,
                     "fmi2DeSerializeFMUstate with an invalid machine state");
    expect_bad_bytes(c, bytes, size, 16 + guid_length + 8, &bad_int, 4, size,
                     "fmi2DeSerializeFMUstate with a wrong nx");
    EXPECT_ERROR(F.DeSerializeFMUstate(me, bytes, size, &other),
                 "fmi2DeSerializeFMUstate of a co-simulation state in model exchange");

    EXPECT_OK(F.FreeFMUstate(c, &s), "fmi2FreeFMUstate");
    check(s == NULL, "fmi2FreeFMUstate sets the pointer to NULL");
done:
    free(bytes);
    if (c) F.FreeInstance(c);
    if (me) F.FreeInstance(me);
}

/* The error state: only inspection, fmi2SetFMUstate, fmi2Reset and
 * fmi2FreeInstance work. */
static void test_error_state(void)
{
    fmi2Component c = instantiate(fmi2CoSimulation, "error_state");
    fmi2ValueReference vr = FFMU_VR_STATE;
    fmi2FMUstate s = NULL;
    double nan = 0.0 / 0.0, v = 0, t = 0, t_before = 0;
    double *good, *after;
    if (!c || cfg.nx == 0) {
        check(c != NULL, "instantiate for the error-state checks");
        if (c) F.FreeInstance(c);
        return;
    }
    good = new_values();
    after = new_values();
    F.SetupExperiment(c, fmi2False, 0, 0, fmi2False, 0);
    F.EnterInitializationMode(c);
    EXPECT_OK(F.SetReal(c, &vr, 1, &nan), "fmi2SetReal of a state to NaN in initializationMode");
    EXPECT_ERROR(F.ExitInitializationMode(c), "fmi2ExitInitializationMode with a NaN state");
    EXPECT_ERROR(F.DoStep(c, 0.0, cfg.H, fmi2True), "fmi2DoStep in the error state");
    EXPECT_OK(F.GetReal(c, &vr, 1, &v), "fmi2GetReal in the error state (diagnostics)");
    check(v != v, "the NaN state can be inspected");
    if (cfg.nu > 0) {
        vr = FFMU_VR_INPUT;
        EXPECT_ERROR(F.SetReal(c, &vr, 1, &v), "fmi2SetReal in the error state");
    }
    EXPECT_ERROR(F.Terminate(c), "fmi2Terminate in the error state (the standard allows only Reset/Free)");
    EXPECT_OK(F.Reset(c), "fmi2Reset in the error state");
    vr = FFMU_VR_STATE;
    F.GetReal(c, &vr, 1, &v);
    check(is_finite(v), "fmi2Reset restores the start value of the state (%g)", v);
    check(initialize(c), "initialization after fmi2Reset from the error state");
    EXPECT_OK(F.DoStep(c, 0.0, cfg.H, fmi2True), "fmi2DoStep after recovery");
    t = cfg.H;

    if (cfg.nu > 0) {
        /* a failing step: NaN input poisons the states */
        EXPECT_OK(F.GetFMUstate(c, &s), "fmi2GetFMUstate before a failing step");
        check(good && after && snapshot_values(c, good), "outputs and states before a failing step");
        vr = FFMU_VR_INPUT;
        EXPECT_OK(F.SetReal(c, &vr, 1, &nan), "fmi2SetReal of input 0 to NaN");
        F.GetRealStatus(c, fmi2LastSuccessfulTime, &t_before);
        EXPECT_ERROR(F.DoStep(c, t, cfg.H, fmi2True), "fmi2DoStep with a NaN input (non-finite state)");
        EXPECT_OK(F.GetRealStatus(c, fmi2LastSuccessfulTime, &v), "fmi2GetRealStatus in the error state");
        check(absolute(v - t_before) < 1e-12, "fmi2LastSuccessfulTime is the time before the failure (%g)", v);
        check(good && after && snapshot_values(c, after) && memcmp(good, after, value_bytes()) == 0,
              "after the failed step the outputs and states are those before it, bit for bit (rolled back)");
        EXPECT_ERROR(F.DoStep(c, t, cfg.H, fmi2True), "fmi2DoStep again in the error state");
        EXPECT_OK(F.SetFMUstate(c, s), "fmi2SetFMUstate in the error state (restart from a saved state)");
        EXPECT_OK(F.DoStep(c, t, cfg.H, fmi2True), "fmi2DoStep after fmi2SetFMUstate left the error state");
        F.FreeFMUstate(c, &s);
    }
    free(good);
    free(after);
    F.FreeInstance(c);
}

static void test_model_exchange(void)
{
    fmi2Component c = instantiate(fmi2ModelExchange, "model_exchange");
    double *x = (double *)calloc((size_t)cfg.nx + 1, sizeof(double));
    double *dx = (double *)calloc((size_t)cfg.nx + 1, sizeof(double));
    fmi2EventInfo info;
    fmi2Boolean enter = fmi2True, terminate = fmi2True;
    fmi2ValueReference vr;
    double t = 0, v = 0, h = 1e-4, nan = 0.0 / 0.0;
    int i, k, ok;
    fmi2Status st;
    if (!c || !x || !dx) {
        check(0, "instantiate model exchange");
        goto done;
    }
    EXPECT_ERROR(F.DoStep(c, 0.0, cfg.H, fmi2True), "fmi2DoStep on a model-exchange instance");
    EXPECT_ERROR(F.GetStatus(c, fmi2DoStepStatus, &st), "fmi2GetStatus on a model-exchange instance");
    EXPECT_OK(F.GetNominalsOfContinuousStates(c, x, (size_t)cfg.nx), "fmi2GetNominalsOfContinuousStates");
    for (k = 0, ok = 1; k < cfg.nx; ++k) ok = ok && x[k] == 1.0;
    check(ok, "all nominals are 1");
    EXPECT_ERROR(F.GetDerivatives(c, dx, (size_t)cfg.nx), "fmi2GetDerivatives in instantiated");
    EXPECT_ERROR(F.SetTime(c, 0.0), "fmi2SetTime in instantiated");
    F.SetupExperiment(c, fmi2False, 0, 0, fmi2False, 0);
    F.EnterInitializationMode(c);
    EXPECT_OK(F.GetDerivatives(c, dx, (size_t)cfg.nx), "fmi2GetDerivatives in initializationMode");
    EXPECT_OK(F.ExitInitializationMode(c), "fmi2ExitInitializationMode (to eventMode)");
    EXPECT_ERROR(F.SetContinuousStates(c, x, (size_t)cfg.nx), "fmi2SetContinuousStates in eventMode");
    EXPECT_ERROR(F.CompletedIntegratorStep(c, fmi2True, &enter, &terminate),
                 "fmi2CompletedIntegratorStep in eventMode");
    EXPECT_ERROR(F.NewDiscreteStates(c, NULL), "fmi2NewDiscreteStates(NULL)");
    memset(&info, 0xFF, sizeof info);
    EXPECT_OK(F.NewDiscreteStates(c, &info), "fmi2NewDiscreteStates");
    check(!info.newDiscreteStatesNeeded && !info.terminateSimulation && !info.nominalsOfContinuousStatesChanged &&
              !info.valuesOfContinuousStatesChanged && !info.nextEventTimeDefined,
          "fmi2NewDiscreteStates reports no events");
    for (k = 0; k < cfg.np; ++k) {
        if (!cfg.tunable[k]) continue;
        vr = (fmi2ValueReference)(FFMU_VR_PARAMETER + k);
        F.GetReal(c, &vr, 1, &v);
        EXPECT_OK(F.SetReal(c, &vr, 1, &v), "fmi2SetReal of a tunable parameter in eventMode");
        break;
    }
    EXPECT_OK(F.EnterContinuousTimeMode(c), "fmi2EnterContinuousTimeMode");
    EXPECT_ERROR(F.EnterContinuousTimeMode(c), "fmi2EnterContinuousTimeMode in continuousTimeMode");
    EXPECT_ERROR(F.GetEventIndicators(c, x, 1), "fmi2GetEventIndicators with ni=1");
    EXPECT_OK(F.GetEventIndicators(c, NULL, 0), "fmi2GetEventIndicators with ni=0");
    EXPECT_ERROR(F.SetContinuousStates(c, x, (size_t)cfg.nx + 1), "fmi2SetContinuousStates with nx+1");
    EXPECT_ERROR(F.SetContinuousStates(c, NULL, (size_t)cfg.nx), "fmi2SetContinuousStates(NULL)");
    EXPECT_ERROR(F.GetDerivatives(c, dx, (size_t)cfg.nx + 1), "fmi2GetDerivatives with nx+1");
    EXPECT_ERROR(F.GetContinuousStates(c, x, 0), "fmi2GetContinuousStates with nx=0");
    EXPECT_ERROR(F.SetTime(c, nan), "fmi2SetTime(NaN)");
    EXPECT_ERROR(F.CompletedIntegratorStep(c, fmi2True, NULL, &terminate),
                 "fmi2CompletedIntegratorStep with NULL enterEventMode");
    for (k = 0; k < cfg.np; ++k) {
        vr = (fmi2ValueReference)(FFMU_VR_PARAMETER + k);
        F.GetReal(c, &vr, 1, &v);
        EXPECT_ERROR(F.SetReal(c, &vr, 1, &v), "fmi2SetReal of a parameter in continuousTimeMode");
        break;
    }
    if (cfg.nx > 0) {
        vr = FFMU_VR_STATE;
        EXPECT_ERROR(F.SetReal(c, &vr, 1, &v), "fmi2SetReal of a state in continuousTimeMode");
    }
    /* explicit Euler, as a simple importer would integrate */
    ok = 1;
    for (i = 0; i < 100 && ok; ++i) {
        ok = F.SetTime(c, t) == fmi2OK && F.GetContinuousStates(c, x, (size_t)cfg.nx) == fmi2OK &&
             F.GetDerivatives(c, dx, (size_t)cfg.nx) == fmi2OK;
        for (k = 0; k < cfg.nx; ++k) x[k] += h * dx[k];
        t += h;
        ok = ok && F.SetTime(c, t) == fmi2OK && F.SetContinuousStates(c, x, (size_t)cfg.nx) == fmi2OK &&
             F.CompletedIntegratorStep(c, fmi2True, &enter, &terminate) == fmi2OK && !enter && !terminate;
    }
    check(ok, "100 explicit Euler steps through the model-exchange interface");
    if (cfg.nq > 0) {
        fmi2ValueReference unknown = FFMU_VR_STATE + cfg.nq, known = FFMU_VR_STATE + cfg.nq;
        double seed = 1, result = 0;
        EXPECT_OK(F.GetDirectionalDerivative(c, &unknown, 1, &known, 1, &seed, &result),
                  "fmi2GetDirectionalDerivative in continuousTimeMode");
        check(absolute(result - 1) < 1e-12, "d der(q0) / d qd0 = 1 in model exchange");
    }
    EXPECT_OK(F.EnterEventMode(c), "fmi2EnterEventMode");
    EXPECT_OK(F.EnterContinuousTimeMode(c), "fmi2EnterContinuousTimeMode again");
    if (cfg.nx > 0) {
        x[0] = nan;
        EXPECT_OK(F.SetContinuousStates(c, x, (size_t)cfg.nx), "fmi2SetContinuousStates with a NaN");
        EXPECT_ERROR(F.GetDerivatives(c, dx, (size_t)cfg.nx), "fmi2GetDerivatives of a NaN state");
        EXPECT_ERROR(F.SetTime(c, t), "fmi2SetTime in the error state");
        EXPECT_OK(F.Reset(c), "fmi2Reset of the model-exchange instance");
        check(initialize(c), "model exchange initializes again after fmi2Reset");
    }
    EXPECT_OK(F.Terminate(c), "fmi2Terminate in eventMode");
    EXPECT_OK(F.GetContinuousStates(c, x, (size_t)cfg.nx), "fmi2GetContinuousStates after fmi2Terminate");
done:
    free(x);
    free(dx);
    if (c) F.FreeInstance(c);
}

static void test_valid_sequence(void)
{
    fmi2Component c = instantiate(fmi2CoSimulation, "valid"), other = NULL;
    fmi2FMUstate s = NULL, s_again = NULL, from_bytes = NULL, in_other = NULL;
    double *a = new_values(), *b = new_values(), *d = new_values(), *e = new_values();
    double t = 0, t_saved, v = 0, fmu_time = -1;
    char *bytes = NULL;
    size_t size = 0;
    int k, finite = 1;
    if (!c || !a || !b || !d || !e) {
        check(0, "instantiate for the valid sequence");
        goto done;
    }
    EXPECT_OK(F.SetupExperiment(c, fmi2False, 0, 0.0, fmi2False, 0), "valid: fmi2SetupExperiment");
    EXPECT_OK(F.EnterInitializationMode(c), "valid: fmi2EnterInitializationMode");
    EXPECT_OK(F.ExitInitializationMode(c), "valid: fmi2ExitInitializationMode");
    check(steps(c, &t, 10), "valid: 10 fmi2DoStep calls of %g s", cfg.H);
    EXPECT_OK(snapshot_values(c, a) ? fmi2OK : fmi2Error, "valid: fmi2GetReal of all outputs and states");
    for (k = 0; k < cfg.ny + cfg.nx; ++k) finite = finite && is_finite(a[k]);
    check(finite, "valid: outputs and states are finite");

    /* get state, step on, restore, step again: bit-identical */
    t_saved = t;
    F.GetRealStatus(c, fmi2LastSuccessfulTime, &fmu_time);
    EXPECT_OK(F.GetFMUstate(c, &s), "valid: fmi2GetFMUstate");
    s_again = s;
    EXPECT_OK(F.GetFMUstate(c, &s_again), "valid: fmi2GetFMUstate into the same state (reuse)");
    check(s_again == s, "valid: the reused FMU state keeps its pointer");
    steps(c, &t, 5);
    snapshot_values(c, a);
    EXPECT_OK(F.SetFMUstate(c, s), "valid: fmi2SetFMUstate");
    F.GetRealStatus(c, fmi2LastSuccessfulTime, &v);
    check(v == fmu_time, "valid: fmi2SetFMUstate restores the FMU time %.17g (got %.17g)", fmu_time, v);
    t = t_saved;
    check(steps(c, &t, 5), "valid: 5 steps after fmi2SetFMUstate");
    snapshot_values(c, b);
    check(memcmp(a, b, value_bytes()) == 0, "valid: get/set FMU state round trip gives bit-identical outputs");

    /* serialize, deserialize, restore, step again: bit-identical */
    EXPECT_OK(F.SerializedFMUstateSize(c, s, &size), "valid: fmi2SerializedFMUstateSize");
    bytes = (char *)malloc(size);
    if (!bytes) goto done;
    EXPECT_OK(F.SerializeFMUstate(c, s, bytes, size), "valid: fmi2SerializeFMUstate");
    EXPECT_OK(F.DeSerializeFMUstate(c, bytes, size, &from_bytes), "valid: fmi2DeSerializeFMUstate");
    EXPECT_OK(F.SetFMUstate(c, from_bytes), "valid: fmi2SetFMUstate of the deserialized state");
    t = t_saved;
    steps(c, &t, 5);
    snapshot_values(c, d);
    check(memcmp(a, d, value_bytes()) == 0, "valid: serialize/deserialize round trip gives bit-identical outputs");
    EXPECT_OK(F.DeSerializeFMUstate(c, bytes, size, &s_again), "valid: fmi2DeSerializeFMUstate into an existing state");
    check(s_again == s, "valid: deserializing into an existing state keeps its pointer");

    /* the bytes move to another instance of the same model */
    other = instantiate(fmi2CoSimulation, "valid_other");
    if (other) {
        EXPECT_OK(F.DeSerializeFMUstate(other, bytes, size, &in_other),
                  "valid: fmi2DeSerializeFMUstate in a new instance");
        EXPECT_OK(F.SetFMUstate(other, in_other), "valid: fmi2SetFMUstate in the new instance (leaves instantiated)");
        t = t_saved;
        check(steps(other, &t, 5), "valid: the new instance continues from the saved point");
        snapshot_values(other, e);
        check(memcmp(a, e, value_bytes()) == 0, "valid: the new instance gives bit-identical outputs");
        EXPECT_OK(F.FreeFMUstate(other, &in_other), "valid: fmi2FreeFMUstate in the new instance");
    }

    EXPECT_OK(F.FreeFMUstate(c, &s), "valid: fmi2FreeFMUstate");
    EXPECT_OK(F.FreeFMUstate(c, &from_bytes), "valid: fmi2FreeFMUstate of the deserialized state");
    EXPECT_OK(F.Terminate(c), "valid: fmi2Terminate");
    EXPECT_OK(snapshot_values(c, b) ? fmi2OK : fmi2Error, "valid: fmi2GetReal after fmi2Terminate");
    F.FreeInstance(c);
    c = NULL;
    check(1, "valid: fmi2FreeInstance");
done:
    free(bytes);
    free(a);
    free(b);
    free(d);
    free(e);
    if (c) F.FreeInstance(c);
    if (other) F.FreeInstance(other);
}

/* Two instances stepped alternately must not disturb each other. */
static void test_independent_instances(void)
{
    fmi2Component c1 = started(fmi2CoSimulation, "one"), c2 = started(fmi2CoSimulation, "two");
    double *a = new_values(), *b = new_values();
    double t = 0;
    fmi2ValueReference vr = FFMU_VR_INPUT;
    double u = 0.5;
    int i, ok = 1;
    if (c1 && c2 && a && b) {
        if (cfg.nu > 0) {
            F.SetReal(c1, &vr, 1, &u);
            F.SetReal(c2, &vr, 1, &u);
        }
        for (i = 0; i < 20 && ok; ++i) {
            ok = F.DoStep(c1, t, cfg.H, fmi2True) == fmi2OK && F.DoStep(c2, t, cfg.H, fmi2True) == fmi2OK;
            t += cfg.H;
        }
        snapshot_values(c1, a);
        snapshot_values(c2, b);
        check(ok && memcmp(a, b, value_bytes()) == 0, "two interleaved instances give bit-identical results");
    } else {
        check(0, "instantiate two instances");
    }
    free(a);
    free(b);
    if (c1) F.FreeInstance(c1);
    if (c2) F.FreeInstance(c2);
}

typedef struct {
    double input;
    int n_steps;
    double *result;
    int ok;
} thread_job;

static void run_job(thread_job *job)
{
    fmi2Component c = F.Instantiate("thread", fmi2CoSimulation, cfg.guid, "", &CALLBACKS_THREADS, fmi2False,
                                    fmi2False);
    fmi2ValueReference vr = FFMU_VR_INPUT;
    double t = 0;
    int i;
    job->ok = c != NULL && initialize(c);
    if (job->ok && cfg.nu > 0) job->ok = F.SetReal(c, &vr, 1, &job->input) == fmi2OK;
    for (i = 0; i < job->n_steps && job->ok; ++i) {
        job->ok = F.DoStep(c, t, cfg.H, fmi2True) == fmi2OK;
        t += cfg.H;
    }
    if (job->ok) job->ok = snapshot_values(c, job->result);
    if (c) F.FreeInstance(c);
}

static void *thread_main(void *arg)
{
    run_job((thread_job *)arg);
    return NULL;
}

/* Instances in parallel threads give the same bits as one after another. */
static void test_threads(int n)
{
    thread_job *seq = (thread_job *)calloc((size_t)n, sizeof *seq);
    thread_job *par = (thread_job *)calloc((size_t)n, sizeof *par);
    pthread_t *ids = (pthread_t *)calloc((size_t)n, sizeof *ids);
    int *running = (int *)calloc((size_t)n, sizeof *running);
    int i, ok = 1, started_ok = 1;
    if (!seq || !par || !ids || !running) goto done;
    for (i = 0; i < n; ++i) {
        seq[i].input = par[i].input = 0.1 * (i + 1);
        seq[i].n_steps = par[i].n_steps = 200;
        seq[i].result = new_values();
        par[i].result = new_values();
        run_job(&seq[i]);
    }
    for (i = 0; i < n; ++i) {
        running[i] = pthread_create(&ids[i], NULL, thread_main, &par[i]) == 0;
        if (!running[i]) started_ok = 0;
    }
    for (i = 0; i < n; ++i)
        if (running[i]) pthread_join(ids[i], NULL);
    for (i = 0; i < n; ++i)
        ok = ok && seq[i].ok == 1 && par[i].ok == 1 && memcmp(seq[i].result, par[i].result, value_bytes()) == 0;
    check(started_ok && ok, "%d instances in parallel threads give the same bits as sequentially", n);
    for (i = 0; i < n; ++i) {
        free(seq[i].result);
        free(par[i].result);
    }
done:
    free(seq);
    free(par);
    free(ids);
    free(running);
}

static void test_cycles(long n)
{
    long i, bad = 0;
    double t;
    fmi2Component c;
    for (i = 0; i < n; ++i) {
        c = started(i % 2 ? fmi2ModelExchange : fmi2CoSimulation, "cycle");
        if (!c) {
            bad++;
            continue;
        }
        t = 0;
        if (!(i % 2) && !steps(c, &t, 1)) bad++;
        F.FreeInstance(c);
    }
    check(bad == 0, "%ld instantiate/setup/init/doStep/free cycles (%ld failed)", n, bad);
}

/* ------------------------------------------------------------------------ */

static int usage(void)
{
    printf("usage: fmu_misuse PATH_TO_SO GUID NX NU NY NP [H_INTERNAL] [--cycles N] [--fixed K] "
           "[--threads N] [--verbose]\n");
    return 2;
}

int main(int argc, char **argv)
{
    int i, positional = 0;
    const char *path = NULL;
    char *end;
    double step;
    cfg.cycles = 1000;
    cfg.fixed = -1;
    cfg.threads = 4;
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--cycles") == 0 && i + 1 < argc)
            cfg.cycles = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--fixed") == 0 && i + 1 < argc)
            cfg.fixed = (int)strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            cfg.threads = (int)strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--verbose") == 0)
            cfg.verbose = 1;
        else {
            switch (positional++) {
            case 0: path = argv[i]; break;
            case 1: cfg.guid = argv[i]; break;
            case 2: cfg.nx = (int)strtol(argv[i], NULL, 10); break;
            case 3: cfg.nu = (int)strtol(argv[i], NULL, 10); break;
            case 4: cfg.ny = (int)strtol(argv[i], NULL, 10); break;
            case 5: cfg.np = (int)strtol(argv[i], NULL, 10); break;
            case 6:
                cfg.h = strtod(argv[i], &end);
                if (*end || cfg.h <= 0) return usage();
                break;
            default: return usage();
            }
        }
    }
    if (positional < 6 || cfg.nx < 0 || cfg.nx % 2 || cfg.nu < 0 || cfg.ny < 0 || cfg.np < 0) return usage();
    cfg.nq = cfg.nx / 2;
    cfg.tunable = (int *)calloc((size_t)cfg.np + 1, sizeof(int));
    /* the valid sequences use steps of 1 ms, or the nearest multiple of h */
    cfg.H = 1e-3;
    if (cfg.h > 0) {
        step = (double)(long long)(1e-3 / cfg.h + 0.5);
        if (step < 1) step = 1;
        cfg.H = step * cfg.h;
        if (cfg.H != 1e-3) printf("# communication step %.17g (1 ms is no multiple of h)\n", cfg.H);
    }

    if (load_api(path)) {
        test_instantiate();
        test_null_component();
        test_debug_logging();
        test_call_sequence_cs();
        test_value_references();
        test_set_rules();
        test_do_step();
        test_status_functions();
        test_directional();
        test_fmu_state_misuse();
        test_error_state();
        test_model_exchange();
        test_valid_sequence();
        test_independent_instances();
        if (cfg.threads > 0) test_threads(cfg.threads);
        test_cycles(cfg.cycles);
        check(outstanding_allocations == 0, "no outstanding allocations at the end (%ld)", outstanding_allocations);
    }
    free(cfg.tunable);
    if (library) dynlib_close(library);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
