/*
 * fmi3_glue.c - the FMI 3.0 interface (co-simulation and model exchange in
 * one binary) of every flexfmu FMU, written once for any FFMU_MODEL.
 *
 * Like fmi2_glue.c, this file knows FMI 3.0 and nothing about robots: each
 * fmi3 function checks its call against the FMI 3.0 state machine (the CALL
 * RULES below), converts its arguments and calls the interface-independent
 * instance code (ffmu_instance.h), whose 1/0 result becomes fmi3OK/fmi3Error.
 * An fmi3Instance is an ffmu_instance; its host allocates with calloc/free
 * (FMI 3 has no memory callbacks) and logs through the importer's
 * logMessage.
 *
 * What FMI 3.0 adds over the instance code:
 *   - the independent variable "time" (value reference 0, below every block
 *     of ffmu_model.h): readable with fmi3GetFloat64, never settable;
 *   - nValues arguments: every variable is a scalar, so nValues must equal
 *     the number of value references;
 *   - fmi3DoStep's outputs: no events, no early return, no termination, and
 *     lastSuccessfulTime is the instance's time (also after a failed step);
 *   - the standard requires every fmi3 function to exist: those for
 *     capabilities the model does not have (clocks, scheduled execution,
 *     configuration mode, event mode in co-simulation, adjoint derivatives,
 *     variable dependencies at run time, types other than Float64) log why
 *     and return fmi3Error, or succeed when asked for nothing.
 */

#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"
#include "ffmu_instance.h"

/* The value reference types agree, so arrays can be passed on as they are. */
typedef char ffmu_vr_is_fmi3_vr[sizeof(ffmu_vr) == sizeof(fmi3ValueReference) ? 1 : -1];

#define TIME_VR 0u /* the independent variable; see fmi3_xml.py */

/*
 * CALL RULES: where each FMI 3.0 function may be called (FMI 3.0, sections
 * 2.3, 3.2 and 4.2). Co-simulation runs without event mode
 * (hasEventMode="false"): ExitInitializationMode goes straight to step mode
 * (FFMU_ST_STEP), so a CS instance is never in event or continuous-time mode
 * and an ME instance never in step mode, and one set serves both types. The
 * same deliberate, read-only extensions as the FMI 2 glue: getters also in
 * instantiated and error. Per-variable rules of fmi3SetFloat64 are in the
 * instance code.
 */
#define ST(name) ((unsigned)FFMU_ST_##name)
static const ffmu_call_rule
    R_SetDebugLogging = {"fmi3SetDebugLogging", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_EnterInitializationMode = {"fmi3EnterInitializationMode", FFMU_FOR_BOTH, ST(INSTANTIATED)},
    R_ExitInitializationMode = {"fmi3ExitInitializationMode", FFMU_FOR_BOTH, ST(INITIALIZATION)},
    R_EnterEventMode = {"fmi3EnterEventMode", FFMU_FOR_ME, ST(EVENT) | ST(CONTINUOUS)},
    R_Terminate = {"fmi3Terminate", FFMU_FOR_BOTH, FFMU_RUNNING},
    R_Reset = {"fmi3Reset", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_GetFloat64 = {"fmi3GetFloat64", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_SetFloat64 = {"fmi3SetFloat64", FFMU_FOR_BOTH, FFMU_BEFORE_RUN | FFMU_RUNNING},
    R_GetFMUState = {"fmi3GetFMUState", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_SetFMUState = {"fmi3SetFMUState", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_FreeFMUState = {"fmi3FreeFMUState", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_SerializedFMUStateSize = {"fmi3SerializedFMUStateSize", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_SerializeFMUState = {"fmi3SerializeFMUState", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_DeserializeFMUState = {"fmi3DeserializeFMUState", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_GetDirectionalDerivative = {"fmi3GetDirectionalDerivative", FFMU_FOR_BOTH, FFMU_FROM_INIT_ON},
    R_UpdateDiscreteStates = {"fmi3UpdateDiscreteStates", FFMU_FOR_BOTH, ST(EVENT)},
    /* model exchange */
    R_EnterContinuousTimeMode = {"fmi3EnterContinuousTimeMode", FFMU_FOR_ME, ST(EVENT)},
    R_CompletedIntegratorStep = {"fmi3CompletedIntegratorStep", FFMU_FOR_ME, ST(CONTINUOUS)},
    R_SetTime = {"fmi3SetTime", FFMU_FOR_ME, ST(EVENT) | ST(CONTINUOUS)},
    R_SetContinuousStates = {"fmi3SetContinuousStates", FFMU_FOR_ME, ST(CONTINUOUS)},
    R_GetContinuousStateDerivatives = {"fmi3GetContinuousStateDerivatives", FFMU_FOR_ME, FFMU_FROM_INIT_ON},
    R_GetEventIndicators = {"fmi3GetEventIndicators", FFMU_FOR_ME, FFMU_FROM_INIT_ON},
    R_GetContinuousStates = {"fmi3GetContinuousStates", FFMU_FOR_ME, FFMU_ALIVE},
    R_GetNominalsOfContinuousStates = {"fmi3GetNominalsOfContinuousStates", FFMU_FOR_ME, FFMU_ALIVE},
    R_GetNumberOfEventIndicators = {"fmi3GetNumberOfEventIndicators", FFMU_FOR_ME, FFMU_ALIVE},
    R_GetNumberOfContinuousStates = {"fmi3GetNumberOfContinuousStates", FFMU_FOR_ME, FFMU_ALIVE},
    /* co-simulation */
    R_EnterStepMode = {"fmi3EnterStepMode", FFMU_FOR_CS, ST(EVENT)}, /* never: there is no event mode */
    R_GetOutputDerivatives = {"fmi3GetOutputDerivatives", FFMU_FOR_CS, ST(STEP) | ST(TERMINATED) | ST(ERROR)},
    R_DoStep = {"fmi3DoStep", FFMU_FOR_CS, ST(STEP)};

static fmi3Status status(int ok) { return ok ? fmi3OK : fmi3Error; }

/* ---- the host: the importer's callback --------------------------------------- */

/* Passes a finished message to the importer's fmi3LogMessageCallback (which
 * takes no instance name: the environment identifies the instance). */
static void log_to_importer(const ffmu_host *host, const char *instance_name, ffmu_status st, const char *category,
                            const char *message)
{
    fmi3LogMessageCallback log_message = (fmi3LogMessageCallback)host->logger;
    (void)instance_name;
    if (log_message) log_message(host->environment, (fmi3Status)st, category, message);
}

static ffmu_host host_of(fmi3InstanceEnvironment environment, fmi3LogMessageCallback log_message)
{
    ffmu_host host;
    host.allocate = calloc;
    host.release = free;
    host.log = log_to_importer;
    host.logger = (void (*)(void))log_message;
    host.environment = environment;
    return host;
}

/* ---- helpers -------------------------------------------------------------------- */

/* Every variable is a scalar: as many values as value references. */
static int scalars_ok(const ffmu_instance *in, const char *fn, size_t n_vr, size_t n_values)
{
    if (n_values != n_vr) {
        ffmu_log_error(in, "%s: nValues = %lu, but the %lu variables asked for are scalars", fn,
                       (unsigned long)n_values, (unsigned long)n_vr);
        return 0;
    }
    return 1;
}

static int names_time(const fmi3ValueReference vr[], size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i)
        if (vr[i] == TIME_VR) return 1;
    return 0;
}

/* A call of a capability the model does not have: allowed anywhere, logs why, fails. */
static fmi3Status unsupported(fmi3Instance instance, const char *fn, const char *why)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    const ffmu_call_rule rule = {fn, FFMU_FOR_BOTH, FFMU_ALIVE};
    if (!ffmu_call_allowed(in, &rule)) return fmi3Error;
    ffmu_log_error(in, "%s: %s", fn, why);
    return fmi3Error;
}

/* Where getters and setters of other types than Float64 are allowed: as fmi3GetFloat64, fmi3SetFloat64. */
#define GETTER_STATES FFMU_ALIVE
#define SETTER_STATES (FFMU_BEFORE_RUN | FFMU_RUNNING)

/* A getter or setter of a type the model has no variables of: succeeds only when asked for nothing. */
static fmi3Status no_variables(fmi3Instance instance, const char *fn, unsigned states, const fmi3ValueReference vr[],
                               size_t nvr, const void *values, const char *type)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    const ffmu_call_rule rule = {fn, FFMU_FOR_BOTH, states};
    if (!ffmu_call_allowed(in, &rule)) return fmi3Error;
    return status(ffmu_no_variables(in, fn, vr, nvr, values, type));
}

#define NO_CLOCKS "the model has no clocks"

/* ---- common functions ------------------------------------------------------------ */

const char *fmi3GetVersion(void) { return fmi3Version; }

fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn, size_t nCategories,
                               const fmi3String categories[])
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_SetDebugLogging)) return fmi3Error;
    return status(ffmu_set_debug_logging(in, R_SetDebugLogging.name, loggingOn, nCategories, categories));
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                          fmi3String resourcePath, fmi3Boolean visible, fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment instanceEnvironment,
                                          fmi3LogMessageCallback logMessage)
{
    ffmu_host host = host_of(instanceEnvironment, logMessage);
    (void)resourcePath; /* the model needs no resources */
    (void)visible;      /* there is nothing to show */
    return ffmu_instantiate(&host, "fmi3InstantiateModelExchange", instanceName, FFMU_MODEL_EXCHANGE,
                            instantiationToken, loggingOn);
}

fmi3Instance fmi3InstantiateCoSimulation(fmi3String instanceName, fmi3String instantiationToken,
                                         fmi3String resourcePath, fmi3Boolean visible, fmi3Boolean loggingOn,
                                         fmi3Boolean eventModeUsed, fmi3Boolean earlyReturnAllowed,
                                         const fmi3ValueReference requiredIntermediateVariables[],
                                         size_t nRequiredIntermediateVariables,
                                         fmi3InstanceEnvironment instanceEnvironment,
                                         fmi3LogMessageCallback logMessage,
                                         fmi3IntermediateUpdateCallback intermediateUpdate)
{
    const char *fn = "fmi3InstantiateCoSimulation";
    ffmu_host host = host_of(instanceEnvironment, logMessage);
    (void)resourcePath;
    (void)visible;
    (void)earlyReturnAllowed; /* a step always runs to its end */
    (void)requiredIntermediateVariables;
    (void)intermediateUpdate; /* never called: providesIntermediateUpdate is false */
    if (eventModeUsed) {
        ffmu_log_host_error(&host, instanceName, "%s: eventModeUsed is true, but the FMU has no event mode "
                                                 "(hasEventMode=\"false\")", fn);
        return NULL;
    }
    if (nRequiredIntermediateVariables > 0) {
        ffmu_log_host_error(&host, instanceName, "%s: %lu intermediate variables requested, but the FMU provides "
                                                 "no intermediate update", fn,
                            (unsigned long)nRequiredIntermediateVariables);
        return NULL;
    }
    return ffmu_instantiate(&host, fn, instanceName, FFMU_CO_SIMULATION, instantiationToken, loggingOn);
}

fmi3Instance fmi3InstantiateScheduledExecution(fmi3String instanceName, fmi3String instantiationToken,
                                               fmi3String resourcePath, fmi3Boolean visible, fmi3Boolean loggingOn,
                                               fmi3InstanceEnvironment instanceEnvironment,
                                               fmi3LogMessageCallback logMessage,
                                               fmi3ClockUpdateCallback clockUpdate,
                                               fmi3LockPreemptionCallback lockPreemption,
                                               fmi3UnlockPreemptionCallback unlockPreemption)
{
    ffmu_host host = host_of(instanceEnvironment, logMessage);
    (void)instantiationToken;
    (void)resourcePath;
    (void)visible;
    (void)loggingOn;
    (void)clockUpdate;
    (void)lockPreemption;
    (void)unlockPreemption;
    ffmu_log_host_error(&host, instanceName, "fmi3InstantiateScheduledExecution: the FMU offers co-simulation and "
                                             "model exchange, not scheduled execution");
    return NULL;
}

void fmi3FreeInstance(fmi3Instance instance) { ffmu_free((ffmu_instance *)instance); }

fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean toleranceDefined, fmi3Float64 tolerance,
                                       fmi3Float64 startTime, fmi3Boolean stopTimeDefined, fmi3Float64 stopTime)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    (void)toleranceDefined; /* fixed-step integration: there is no tolerance to apply */
    (void)tolerance;
    if (!ffmu_call_allowed(in, &R_EnterInitializationMode)) return fmi3Error;
    if (!ffmu_setup_experiment(in, R_EnterInitializationMode.name, startTime, stopTimeDefined, stopTime))
        return fmi3Error;
    in->run.state = FFMU_ST_INITIALIZATION;
    return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance instance)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_ExitInitializationMode)) return fmi3Error;
    if (!ffmu_check_start(in, R_ExitInitializationMode.name)) return fmi3Error;
    in->run.state = in->type == FFMU_CO_SIMULATION ? FFMU_ST_STEP : FFMU_ST_EVENT;
    return fmi3OK;
}

fmi3Status fmi3EnterEventMode(fmi3Instance instance)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_EnterEventMode)) return fmi3Error;
    in->run.state = FFMU_ST_EVENT;
    return fmi3OK;
}

fmi3Status fmi3Terminate(fmi3Instance instance)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_Terminate)) return fmi3Error;
    in->run.state = FFMU_ST_TERMINATED;
    return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance instance)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_Reset)) return fmi3Error;
    ffmu_reset(in); /* debug logging settings are kept */
    return fmi3OK;
}

/* ---- getting and setting variables ------------------------------------------------ */

fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                          size_t nValueReferences, fmi3Float64 values[], size_t nValues)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    const char *fn = R_GetFloat64.name;
    size_t i;
    if (!ffmu_call_allowed(in, &R_GetFloat64)) return fmi3Error;
    if (!scalars_ok(in, fn, nValueReferences, nValues) ||
        !ffmu_array_ok(in, fn, "valueReferences", valueReferences, nValueReferences) ||
        !ffmu_array_ok(in, fn, "values", values, nValues))
        return fmi3Error;
    if (!names_time(valueReferences, nValueReferences))
        return status(ffmu_get_real(in, fn, valueReferences, nValueReferences, values));
    for (i = 0; i < nValueReferences; ++i) {
        if (valueReferences[i] == TIME_VR)
            values[i] = in->run.time;
        else if (!ffmu_get_real(in, fn, &valueReferences[i], 1, &values[i]))
            return fmi3Error;
    }
    return fmi3OK;
}

fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                          size_t nValueReferences, const fmi3Float64 values[], size_t nValues)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    const char *fn = R_SetFloat64.name;
    if (!ffmu_call_allowed(in, &R_SetFloat64)) return fmi3Error;
    if (!scalars_ok(in, fn, nValueReferences, nValues) ||
        !ffmu_array_ok(in, fn, "valueReferences", valueReferences, nValueReferences))
        return fmi3Error;
    if (names_time(valueReferences, nValueReferences)) {
        ffmu_log_error(in, "%s: 'time' (vr %u) is the independent variable and cannot be set", fn, TIME_VR);
        return fmi3Error;
    }
    return status(ffmu_set_real(in, fn, valueReferences, nValueReferences, values));
}

/* The getters and setters of the types the model has no variables of. */
#define NO_VARIABLES(Type, Name, states, constness)                                                                \
    fmi3Status fmi3##Name##Type(fmi3Instance instance, const fmi3ValueReference valueReferences[],                 \
                                size_t nValueReferences, constness fmi3##Type values[], size_t nValues)           \
    {                                                                                                              \
        (void)nValues;                                                                                             \
        return no_variables(instance, "fmi3" #Name #Type, states, valueReferences, nValueReferences, values, #Type); \
    }
#define GETTER_AND_SETTER(Type)                              \
    NO_VARIABLES(Type, Get, GETTER_STATES, /* mutable */)    \
    NO_VARIABLES(Type, Set, SETTER_STATES, const)

GETTER_AND_SETTER(Float32)
GETTER_AND_SETTER(Int8)
GETTER_AND_SETTER(UInt8)
GETTER_AND_SETTER(Int16)
GETTER_AND_SETTER(UInt16)
GETTER_AND_SETTER(Int32)
GETTER_AND_SETTER(UInt32)
GETTER_AND_SETTER(Int64)
GETTER_AND_SETTER(UInt64)
GETTER_AND_SETTER(Boolean)
GETTER_AND_SETTER(String)

fmi3Status fmi3GetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, size_t valueSizes[], fmi3Binary values[], size_t nValues)
{
    (void)valueSizes;
    (void)nValues;
    return no_variables(instance, "fmi3GetBinary", GETTER_STATES, valueReferences, nValueReferences, values,
                        "Binary");
}

fmi3Status fmi3SetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, const size_t valueSizes[], const fmi3Binary values[],
                         size_t nValues)
{
    (void)valueSizes;
    (void)nValues;
    return no_variables(instance, "fmi3SetBinary", SETTER_STATES, valueReferences, nValueReferences, values,
                        "Binary");
}

fmi3Status fmi3GetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, fmi3Clock values[])
{
    return no_variables(instance, "fmi3GetClock", GETTER_STATES, valueReferences, nValueReferences, values, "Clock");
}

fmi3Status fmi3SetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, const fmi3Clock values[])
{
    return no_variables(instance, "fmi3SetClock", SETTER_STATES, valueReferences, nValueReferences, values, "Clock");
}

/* ---- dependencies, FMU state, derivatives ------------------------------------------------- */

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance instance, fmi3ValueReference valueReference,
                                               size_t *nDependencies)
{
    (void)valueReference;
    (void)nDependencies;
    return unsupported(instance, "fmi3GetNumberOfVariableDependencies",
                       "not provided: the dependencies are in modelDescription.xml (ModelStructure) and do not change");
}

fmi3Status fmi3GetVariableDependencies(fmi3Instance instance, fmi3ValueReference dependent,
                                       size_t elementIndicesOfDependent[], fmi3ValueReference independents[],
                                       size_t elementIndicesOfIndependents[], fmi3DependencyKind dependencyKinds[],
                                       size_t nDependencies)
{
    (void)dependent;
    (void)elementIndicesOfDependent;
    (void)independents;
    (void)elementIndicesOfIndependents;
    (void)dependencyKinds;
    (void)nDependencies;
    return unsupported(instance, "fmi3GetVariableDependencies",
                       "not provided: the dependencies are in modelDescription.xml (ModelStructure) and do not change");
}

fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState *FMUState)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_GetFMUState)) return fmi3Error;
    return status(ffmu_get_state(in, R_GetFMUState.name, FMUState));
}

fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState FMUState)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_SetFMUState)) return fmi3Error;
    return status(ffmu_set_state(in, R_SetFMUState.name, FMUState));
}

fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState *FMUState)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_FreeFMUState)) return fmi3Error;
    return status(ffmu_free_state(in, R_FreeFMUState.name, FMUState));
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState FMUState, size_t *size)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_SerializedFMUStateSize)) return fmi3Error;
    return status(ffmu_serialized_size(in, R_SerializedFMUStateSize.name, FMUState, size));
}

fmi3Status fmi3SerializeFMUState(fmi3Instance instance, fmi3FMUState FMUState, fmi3Byte serializedState[],
                                 size_t size)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_SerializeFMUState)) return fmi3Error;
    return status(ffmu_serialize(in, R_SerializeFMUState.name, FMUState, serializedState, size));
}

fmi3Status fmi3DeserializeFMUState(fmi3Instance instance, const fmi3Byte serializedState[], size_t size,
                                   fmi3FMUState *FMUState)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_DeserializeFMUState)) return fmi3Error;
    return status(ffmu_deserialize(in, R_DeserializeFMUState.name, serializedState, size, FMUState));
}

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                        size_t nUnknowns, const fmi3ValueReference knowns[], size_t nKnowns,
                                        const fmi3Float64 seed[], size_t nSeed, fmi3Float64 sensitivity[],
                                        size_t nSensitivity)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    const char *fn = R_GetDirectionalDerivative.name;
    if (!ffmu_call_allowed(in, &R_GetDirectionalDerivative)) return fmi3Error;
    if (!scalars_ok(in, fn, nKnowns, nSeed) || !scalars_ok(in, fn, nUnknowns, nSensitivity)) return fmi3Error;
    return status(ffmu_directional_derivative(in, fn, unknowns, nUnknowns, knowns, nKnowns, seed, sensitivity));
}

fmi3Status fmi3GetAdjointDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[], size_t nUnknowns,
                                    const fmi3ValueReference knowns[], size_t nKnowns, const fmi3Float64 seed[],
                                    size_t nSeed, fmi3Float64 sensitivity[], size_t nSensitivity)
{
    (void)unknowns;
    (void)nUnknowns;
    (void)knowns;
    (void)nKnowns;
    (void)seed;
    (void)nSeed;
    (void)sensitivity;
    (void)nSensitivity;
    return unsupported(instance, "fmi3GetAdjointDerivative",
                       "not provided (providesAdjointDerivatives is false; use fmi3GetDirectionalDerivative)");
}

/* ---- configuration mode, clocks, discrete states ------------------------------------- */

#define NO_STRUCTURAL "the model has no structural parameters, so there is no configuration mode"

fmi3Status fmi3EnterConfigurationMode(fmi3Instance instance)
{
    return unsupported(instance, "fmi3EnterConfigurationMode", NO_STRUCTURAL);
}

fmi3Status fmi3ExitConfigurationMode(fmi3Instance instance)
{
    return unsupported(instance, "fmi3ExitConfigurationMode", NO_STRUCTURAL);
}

fmi3Status fmi3GetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                  size_t nValueReferences, fmi3Float64 intervals[],
                                  fmi3IntervalQualifier qualifiers[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)intervals;
    (void)qualifiers;
    return unsupported(instance, "fmi3GetIntervalDecimal", NO_CLOCKS);
}

fmi3Status fmi3GetIntervalFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                   size_t nValueReferences, fmi3UInt64 counters[], fmi3UInt64 resolutions[],
                                   fmi3IntervalQualifier qualifiers[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)counters;
    (void)resolutions;
    (void)qualifiers;
    return unsupported(instance, "fmi3GetIntervalFraction", NO_CLOCKS);
}

fmi3Status fmi3GetShiftDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                               size_t nValueReferences, fmi3Float64 shifts[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)shifts;
    return unsupported(instance, "fmi3GetShiftDecimal", NO_CLOCKS);
}

fmi3Status fmi3GetShiftFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                size_t nValueReferences, fmi3UInt64 counters[], fmi3UInt64 resolutions[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)counters;
    (void)resolutions;
    return unsupported(instance, "fmi3GetShiftFraction", NO_CLOCKS);
}

fmi3Status fmi3SetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                  size_t nValueReferences, const fmi3Float64 intervals[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)intervals;
    return unsupported(instance, "fmi3SetIntervalDecimal", NO_CLOCKS);
}

fmi3Status fmi3SetIntervalFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                   size_t nValueReferences, const fmi3UInt64 counters[],
                                   const fmi3UInt64 resolutions[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)counters;
    (void)resolutions;
    return unsupported(instance, "fmi3SetIntervalFraction", NO_CLOCKS);
}

fmi3Status fmi3SetShiftDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                               size_t nValueReferences, const fmi3Float64 shifts[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)shifts;
    return unsupported(instance, "fmi3SetShiftDecimal", NO_CLOCKS);
}

fmi3Status fmi3SetShiftFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                size_t nValueReferences, const fmi3UInt64 counters[],
                                const fmi3UInt64 resolutions[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)counters;
    (void)resolutions;
    return unsupported(instance, "fmi3SetShiftFraction", NO_CLOCKS);
}

fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance instance)
{
    return unsupported(instance, "fmi3EvaluateDiscreteStates",
                       "the model has no discrete states (providesEvaluateDiscreteStates is false)");
}

/* The model has no events: nothing changes and no event is scheduled. */
fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation, fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged, fmi3Boolean *nextEventTimeDefined,
                                    fmi3Float64 *nextEventTime)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    const char *fn = R_UpdateDiscreteStates.name;
    if (!ffmu_call_allowed(in, &R_UpdateDiscreteStates)) return fmi3Error;
    if (!ffmu_pointer_ok(in, fn, "discreteStatesNeedUpdate", discreteStatesNeedUpdate) ||
        !ffmu_pointer_ok(in, fn, "terminateSimulation", terminateSimulation) ||
        !ffmu_pointer_ok(in, fn, "nominalsOfContinuousStatesChanged", nominalsOfContinuousStatesChanged) ||
        !ffmu_pointer_ok(in, fn, "valuesOfContinuousStatesChanged", valuesOfContinuousStatesChanged) ||
        !ffmu_pointer_ok(in, fn, "nextEventTimeDefined", nextEventTimeDefined) ||
        !ffmu_pointer_ok(in, fn, "nextEventTime", nextEventTime))
        return fmi3Error;
    *discreteStatesNeedUpdate = *terminateSimulation = *nominalsOfContinuousStatesChanged = fmi3False;
    *valuesOfContinuousStatesChanged = *nextEventTimeDefined = fmi3False;
    *nextEventTime = 0.0;
    return fmi3OK;
}

/* ---- model exchange ------------------------------------------------------------------ */

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_EnterContinuousTimeMode)) return fmi3Error;
    in->run.state = FFMU_ST_CONTINUOUS;
    return fmi3OK;
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode, fmi3Boolean *terminateSimulation)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    const char *fn = R_CompletedIntegratorStep.name;
    (void)noSetFMUStatePriorToCurrentPoint; /* snapshots never depend on the past */
    if (!ffmu_call_allowed(in, &R_CompletedIntegratorStep)) return fmi3Error;
    if (!ffmu_pointer_ok(in, fn, "enterEventMode", enterEventMode) ||
        !ffmu_pointer_ok(in, fn, "terminateSimulation", terminateSimulation))
        return fmi3Error;
    *enterEventMode = fmi3False;
    *terminateSimulation = fmi3False;
    return status(ffmu_completed_integrator_step(in, fn)); /* the validity envelope, the last good point */
}

fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_SetTime)) return fmi3Error;
    return status(ffmu_set_time(in, R_SetTime.name, time));
}

fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 continuousStates[],
                                   size_t nContinuousStates)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_SetContinuousStates)) return fmi3Error;
    return status(ffmu_set_continuous_states(in, R_SetContinuousStates.name, continuousStates, nContinuousStates));
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 derivatives[],
                                             size_t nContinuousStates)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_GetContinuousStateDerivatives)) return fmi3Error;
    return status(ffmu_get_derivatives(in, R_GetContinuousStateDerivatives.name, derivatives, nContinuousStates));
}

fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 eventIndicators[], size_t nEventIndicators)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    (void)eventIndicators;
    if (!ffmu_call_allowed(in, &R_GetEventIndicators)) return fmi3Error;
    return status(ffmu_size_ok(in, R_GetEventIndicators.name, "nEventIndicators", nEventIndicators, 0));
}

fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 continuousStates[], size_t nContinuousStates)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_GetContinuousStates)) return fmi3Error;
    return status(ffmu_get_continuous_states(in, R_GetContinuousStates.name, continuousStates, nContinuousStates));
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 nominals[],
                                             size_t nContinuousStates)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_GetNominalsOfContinuousStates)) return fmi3Error;
    return status(ffmu_get_nominals(in, R_GetNominalsOfContinuousStates.name, nominals, nContinuousStates));
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *nEventIndicators)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_GetNumberOfEventIndicators)) return fmi3Error;
    if (!ffmu_pointer_ok(in, R_GetNumberOfEventIndicators.name, "nEventIndicators", nEventIndicators))
        return fmi3Error;
    *nEventIndicators = 0;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *nContinuousStates)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_GetNumberOfContinuousStates)) return fmi3Error;
    if (!ffmu_pointer_ok(in, R_GetNumberOfContinuousStates.name, "nContinuousStates", nContinuousStates))
        return fmi3Error;
    *nContinuousStates = (size_t)FFMU_MODEL.nx;
    return fmi3OK;
}

/* ---- co-simulation --------------------------------------------------------------------- */

/* Refused by its rule: co-simulation never enters event mode. */
fmi3Status fmi3EnterStepMode(fmi3Instance instance)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    if (!ffmu_call_allowed(in, &R_EnterStepMode)) return fmi3Error;
    in->run.state = FFMU_ST_STEP;
    return fmi3OK;
}

/* maxOutputDerivativeOrder = 0: an empty call is harmless and succeeds. */
fmi3Status fmi3GetOutputDerivatives(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences, const fmi3Int32 orders[], fmi3Float64 values[],
                                    size_t nValues)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    (void)valueReferences;
    (void)orders;
    (void)values;
    (void)nValues;
    if (!ffmu_call_allowed(in, &R_GetOutputDerivatives)) return fmi3Error;
    if (nValueReferences == 0) return fmi3OK;
    ffmu_log_error(in, "fmi3GetOutputDerivatives: not supported (maxOutputDerivativeOrder is 0)");
    return fmi3Error;
}

fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 currentCommunicationPoint,
                      fmi3Float64 communicationStepSize, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                      fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation, fmi3Boolean *earlyReturn,
                      fmi3Float64 *lastSuccessfulTime)
{
    ffmu_instance *in = (ffmu_instance *)instance;
    const char *fn = R_DoStep.name;
    int ok;
    (void)noSetFMUStatePriorToCurrentPoint; /* snapshots never depend on the past */
    if (!ffmu_call_allowed(in, &R_DoStep)) return fmi3Error;
    if (!ffmu_pointer_ok(in, fn, "eventHandlingNeeded", eventHandlingNeeded) ||
        !ffmu_pointer_ok(in, fn, "terminateSimulation", terminateSimulation) ||
        !ffmu_pointer_ok(in, fn, "earlyReturn", earlyReturn) ||
        !ffmu_pointer_ok(in, fn, "lastSuccessfulTime", lastSuccessfulTime))
        return fmi3Error;
    ok = ffmu_do_step(in, fn, currentCommunicationPoint, communicationStepSize);
    *eventHandlingNeeded = *terminateSimulation = *earlyReturn = fmi3False;
    *lastSuccessfulTime = in->run.time; /* a failed step keeps the time of the last good state */
    return status(ok);
}

/* ---- scheduled execution ---------------------------------------------------------------- */

fmi3Status fmi3ActivateModelPartition(fmi3Instance instance, fmi3ValueReference clockReference,
                                      fmi3Float64 activationTime)
{
    (void)clockReference;
    (void)activationTime;
    return unsupported(instance, "fmi3ActivateModelPartition", "the FMU offers no scheduled execution");
}
