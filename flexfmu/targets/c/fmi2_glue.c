/*
 * fmi2_glue.c - the FMI 2.0 interface (co-simulation and model exchange in
 * one binary) of every flexfmu FMU, written once for any FFMU_MODEL.
 *
 * This file knows FMI 2.0 and nothing about robots or about how an instance
 * computes: each fmi2 function checks its call against the FMI 2.0 state
 * machine (the CALL RULES below), converts its arguments and calls the
 * interface-independent instance code (ffmu_instance.h), whose 1/0 result
 * becomes fmi2OK/fmi2Error. An fmi2Component is an ffmu_instance; the
 * importer's callbacks become its host (memory functions as they are, the
 * logger through an adapter).
 */

#include <string.h>

#include "fmi2Functions.h"
#include "ffmu_instance.h"

/* The value reference types agree, so arrays can be passed on as they are. */
typedef char ffmu_vr_is_fmi2_vr[sizeof(ffmu_vr) == sizeof(fmi2ValueReference) ? 1 : -1];

/*
 * CALL RULES: where each FMI function may be called (FMI 2.0, sections 3.2.3
 * and 4.2.4). A CS instance never is in event or continuous-time mode and an
 * ME instance never is in stepComplete (FFMU_ST_STEP), so one set serves both
 * types. Deliberate extensions of the standard, all read-only and harmless:
 * Get* also in instantiated (start values); fmi2GetContinuousStates also in
 * instantiated; fmi2Get*Status also in error (fmi2LastSuccessfulTime is what a
 * master wants to know after a failed step). Per-variable rules of
 * fmi2SetReal are in the instance code.
 */
#define ST(name) ((unsigned)FFMU_ST_##name)
static const ffmu_call_rule
    R_SetDebugLogging = {"fmi2SetDebugLogging", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_SetupExperiment = {"fmi2SetupExperiment", FFMU_FOR_BOTH, ST(INSTANTIATED)},
    R_EnterInitializationMode = {"fmi2EnterInitializationMode", FFMU_FOR_BOTH, ST(INSTANTIATED)},
    R_ExitInitializationMode = {"fmi2ExitInitializationMode", FFMU_FOR_BOTH, ST(INITIALIZATION)},
    R_Terminate = {"fmi2Terminate", FFMU_FOR_BOTH, FFMU_RUNNING},
    R_Reset = {"fmi2Reset", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_GetReal = {"fmi2GetReal", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_GetInteger = {"fmi2GetInteger", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_GetBoolean = {"fmi2GetBoolean", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_GetString = {"fmi2GetString", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_SetReal = {"fmi2SetReal", FFMU_FOR_BOTH, FFMU_BEFORE_RUN | FFMU_RUNNING},
    R_SetInteger = {"fmi2SetInteger", FFMU_FOR_BOTH, FFMU_BEFORE_RUN | ST(STEP) | ST(EVENT)},
    R_SetBoolean = {"fmi2SetBoolean", FFMU_FOR_BOTH, FFMU_BEFORE_RUN | ST(STEP) | ST(EVENT)},
    R_SetString = {"fmi2SetString", FFMU_FOR_BOTH, FFMU_BEFORE_RUN | ST(STEP) | ST(EVENT)},
    R_GetFMUstate = {"fmi2GetFMUstate", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_SetFMUstate = {"fmi2SetFMUstate", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_FreeFMUstate = {"fmi2FreeFMUstate", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_SerializedFMUstateSize = {"fmi2SerializedFMUstateSize", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_SerializeFMUstate = {"fmi2SerializeFMUstate", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_DeSerializeFMUstate = {"fmi2DeSerializeFMUstate", FFMU_FOR_BOTH, FFMU_ALIVE},
    R_GetDirectionalDerivative = {"fmi2GetDirectionalDerivative", FFMU_FOR_BOTH, FFMU_FROM_INIT_ON},
    /* model exchange */
    R_EnterEventMode = {"fmi2EnterEventMode", FFMU_FOR_ME, ST(EVENT) | ST(CONTINUOUS)},
    R_NewDiscreteStates = {"fmi2NewDiscreteStates", FFMU_FOR_ME, ST(EVENT)},
    R_EnterContinuousTimeMode = {"fmi2EnterContinuousTimeMode", FFMU_FOR_ME, ST(EVENT)},
    R_CompletedIntegratorStep = {"fmi2CompletedIntegratorStep", FFMU_FOR_ME, ST(CONTINUOUS)},
    R_SetTime = {"fmi2SetTime", FFMU_FOR_ME, ST(EVENT) | ST(CONTINUOUS)},
    R_SetContinuousStates = {"fmi2SetContinuousStates", FFMU_FOR_ME, ST(CONTINUOUS)},
    R_GetDerivatives = {"fmi2GetDerivatives", FFMU_FOR_ME, FFMU_FROM_INIT_ON},
    R_GetEventIndicators = {"fmi2GetEventIndicators", FFMU_FOR_ME, FFMU_FROM_INIT_ON},
    R_GetContinuousStates = {"fmi2GetContinuousStates", FFMU_FOR_ME, FFMU_ALIVE},
    R_GetNominalsOfContinuousStates = {"fmi2GetNominalsOfContinuousStates", FFMU_FOR_ME, FFMU_ALIVE},
    /* co-simulation */
    R_SetRealInputDerivatives = {"fmi2SetRealInputDerivatives", FFMU_FOR_CS, FFMU_BEFORE_RUN | ST(STEP)},
    R_GetRealOutputDerivatives = {"fmi2GetRealOutputDerivatives", FFMU_FOR_CS, ST(STEP) | ST(TERMINATED) | ST(ERROR)},
    R_DoStep = {"fmi2DoStep", FFMU_FOR_CS, ST(STEP)},
    R_CancelStep = {"fmi2CancelStep", FFMU_FOR_CS, FFMU_ALIVE}, /* always refused, see fmi2CancelStep */
    R_GetStatus = {"fmi2GetStatus", FFMU_FOR_CS, ST(STEP) | ST(TERMINATED) | ST(ERROR)},
    R_GetRealStatus = {"fmi2GetRealStatus", FFMU_FOR_CS, ST(STEP) | ST(TERMINATED) | ST(ERROR)},
    R_GetIntegerStatus = {"fmi2GetIntegerStatus", FFMU_FOR_CS, ST(STEP) | ST(TERMINATED) | ST(ERROR)},
    R_GetBooleanStatus = {"fmi2GetBooleanStatus", FFMU_FOR_CS, ST(STEP) | ST(TERMINATED) | ST(ERROR)},
    R_GetStringStatus = {"fmi2GetStringStatus", FFMU_FOR_CS, ST(STEP) | ST(TERMINATED) | ST(ERROR)};

static fmi2Status status(int ok) { return ok ? fmi2OK : fmi2Error; }

/* ---- the host: the importer's callbacks ------------------------------------- */

/* Passes a finished message to the importer's fmi2CallbackLogger. */
static void log_to_importer(const ffmu_host *host, const char *instance_name, ffmu_status st, const char *category,
                            const char *message)
{
    fmi2CallbackLogger logger = (fmi2CallbackLogger)host->logger;
    if (logger) logger(host->environment, instance_name, (fmi2Status)st, category, message);
}

static ffmu_host host_of(const fmi2CallbackFunctions *cb)
{
    ffmu_host host;
    host.allocate = cb->allocateMemory;
    host.release = cb->freeMemory;
    host.log = log_to_importer;
    host.logger = (void (*)(void))cb->logger;
    host.environment = cb->componentEnvironment;
    return host;
}

/* ---- common functions -------------------------------------------------------- */

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }

const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[])
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_SetDebugLogging)) return fmi2Error;
    return status(ffmu_set_debug_logging(in, R_SetDebugLogging.name, loggingOn, nCategories, categories));
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn)
{
    ffmu_host host;
    (void)fmuResourceLocation; /* the model needs no resources */
    (void)visible;             /* there is nothing to show */
    if (!functions) return NULL; /* no logger to tell */
    host = host_of(functions);
    /* ffmu_interface has fmi2Type's values; ffmu_instantiate rejects others */
    return ffmu_instantiate(&host, "fmi2Instantiate", instanceName, (ffmu_interface)fmuType, fmuGUID, loggingOn);
}

void fmi2FreeInstance(fmi2Component c) { ffmu_free((ffmu_instance *)c); }

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    ffmu_instance *in = (ffmu_instance *)c;
    (void)toleranceDefined; /* fixed-step integration: there is no tolerance to apply */
    (void)tolerance;
    if (!ffmu_call_allowed(in, &R_SetupExperiment)) return fmi2Error;
    return status(ffmu_setup_experiment(in, R_SetupExperiment.name, startTime, stopTimeDefined, stopTime));
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_EnterInitializationMode)) return fmi2Error;
    in->run.state = FFMU_ST_INITIALIZATION;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_ExitInitializationMode)) return fmi2Error;
    if (!ffmu_check_start(in, R_ExitInitializationMode.name)) return fmi2Error;
    in->run.state = in->type == FFMU_CO_SIMULATION ? FFMU_ST_STEP : FFMU_ST_EVENT;
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_Terminate)) return fmi2Error;
    in->run.state = FFMU_ST_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_Reset)) return fmi2Error;
    ffmu_reset(in); /* debug logging settings are kept */
    return fmi2OK;
}

/* ---- getting and setting variables ------------------------------------------ */

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[])
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_GetReal)) return fmi2Error;
    return status(ffmu_get_real(in, R_GetReal.name, vr, nvr, value));
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Real value[])
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_SetReal)) return fmi2Error;
    return status(ffmu_set_real(in, R_SetReal.name, vr, nvr, value));
}

static fmi2Status no_variables(fmi2Component c, const ffmu_call_rule *rule, const fmi2ValueReference vr[],
                               size_t nvr, const void *value, const char *type)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, rule)) return fmi2Error;
    return status(ffmu_no_variables(in, rule->name, vr, nvr, value, type));
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Integer value[])
{
    return no_variables(c, &R_GetInteger, vr, nvr, value, "Integer");
}

fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Boolean value[])
{
    return no_variables(c, &R_GetBoolean, vr, nvr, value, "Boolean");
}

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2String value[])
{
    return no_variables(c, &R_GetString, vr, nvr, value, "String");
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Integer value[])
{
    return no_variables(c, &R_SetInteger, vr, nvr, value, "Integer");
}

fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Boolean value[])
{
    return no_variables(c, &R_SetBoolean, vr, nvr, value, "Boolean");
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2String value[])
{
    return no_variables(c, &R_SetString, vr, nvr, value, "String");
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown_ref[], size_t nUnknown,
                                        const fmi2ValueReference vKnown_ref[], size_t nKnown,
                                        const fmi2Real dvKnown[], fmi2Real dvUnknown[])
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_GetDirectionalDerivative)) return fmi2Error;
    return status(ffmu_directional_derivative(in, R_GetDirectionalDerivative.name, vUnknown_ref, nUnknown,
                                              vKnown_ref, nKnown, dvKnown, dvUnknown));
}

/* ---- FMU state ---------------------------------------------------------------- */

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_GetFMUstate)) return fmi2Error;
    return status(ffmu_get_state(in, R_GetFMUstate.name, FMUstate));
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate FMUstate)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_SetFMUstate)) return fmi2Error;
    return status(ffmu_set_state(in, R_SetFMUstate.name, FMUstate));
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_FreeFMUstate)) return fmi2Error;
    return status(ffmu_free_state(in, R_FreeFMUstate.name, FMUstate));
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate FMUstate, size_t *size)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_SerializedFMUstateSize)) return fmi2Error;
    return status(ffmu_serialized_size(in, R_SerializedFMUstateSize.name, FMUstate, size));
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate FMUstate, fmi2Byte serializedState[], size_t size)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_SerializeFMUstate)) return fmi2Error;
    return status(ffmu_serialize(in, R_SerializeFMUstate.name, FMUstate, (unsigned char *)serializedState, size));
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte serializedState[], size_t size,
                                   fmi2FMUstate *FMUstate)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_DeSerializeFMUstate)) return fmi2Error;
    return status(ffmu_deserialize(in, R_DeSerializeFMUstate.name, (const unsigned char *)serializedState, size,
                                   FMUstate));
}

/* ---- model exchange -------------------------------------------------------------- */

fmi2Status fmi2EnterEventMode(fmi2Component c)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_EnterEventMode)) return fmi2Error;
    in->run.state = FFMU_ST_EVENT;
    return fmi2OK;
}

/* The model has no events: nothing changes and no event is scheduled. */
fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *eventInfo)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_NewDiscreteStates)) return fmi2Error;
    if (!ffmu_pointer_ok(in, R_NewDiscreteStates.name, "eventInfo", eventInfo)) return fmi2Error;
    memset(eventInfo, 0, sizeof *eventInfo);
    return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_EnterContinuousTimeMode)) return fmi2Error;
    in->run.state = FFMU_ST_CONTINUOUS;
    return fmi2OK;
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation)
{
    ffmu_instance *in = (ffmu_instance *)c;
    const char *fn = R_CompletedIntegratorStep.name;
    (void)noSetFMUStatePriorToCurrentPoint; /* snapshots never depend on the past */
    if (!ffmu_call_allowed(in, &R_CompletedIntegratorStep)) return fmi2Error;
    if (!ffmu_pointer_ok(in, fn, "enterEventMode", enterEventMode) ||
        !ffmu_pointer_ok(in, fn, "terminateSimulation", terminateSimulation))
        return fmi2Error;
    *enterEventMode = fmi2False;
    *terminateSimulation = fmi2False;
    return status(ffmu_completed_integrator_step(in, fn)); /* the validity envelope, the last good point */
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_SetTime)) return fmi2Error;
    return status(ffmu_set_time(in, R_SetTime.name, time));
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_SetContinuousStates)) return fmi2Error;
    return status(ffmu_set_continuous_states(in, R_SetContinuousStates.name, x, nx));
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real derivatives[], size_t nx)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_GetDerivatives)) return fmi2Error;
    return status(ffmu_get_derivatives(in, R_GetDerivatives.name, derivatives, nx));
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real eventIndicators[], size_t ni)
{
    ffmu_instance *in = (ffmu_instance *)c;
    (void)eventIndicators;
    if (!ffmu_call_allowed(in, &R_GetEventIndicators)) return fmi2Error;
    return status(ffmu_size_ok(in, R_GetEventIndicators.name, "ni (number of event indicators)", ni, 0));
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_GetContinuousStates)) return fmi2Error;
    return status(ffmu_get_continuous_states(in, R_GetContinuousStates.name, x, nx));
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_GetNominalsOfContinuousStates)) return fmi2Error;
    return status(ffmu_get_nominals(in, R_GetNominalsOfContinuousStates.name, x_nominal, nx));
}

/* ---- co-simulation ------------------------------------------------------------------ */

/* canInterpolateInputs = false: derivatives of inputs are not accepted (an
 * empty call is harmless and succeeds). */
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[])
{
    ffmu_instance *in = (ffmu_instance *)c;
    (void)vr;
    (void)order;
    (void)value;
    if (!ffmu_call_allowed(in, &R_SetRealInputDerivatives)) return fmi2Error;
    if (nvr == 0) return fmi2OK;
    ffmu_log_error(in, "fmi2SetRealInputDerivatives: not supported (canInterpolateInputs is false)");
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
    if (!ffmu_call_allowed(in, &R_GetRealOutputDerivatives)) return fmi2Error;
    if (nvr == 0) return fmi2OK;
    ffmu_log_error(in, "fmi2GetRealOutputDerivatives: not supported (MaxOutputDerivativeOrder is 0)");
    return fmi2Error;
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint, fmi2Real communicationStepSize,
                      fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    ffmu_instance *in = (ffmu_instance *)c;
    (void)noSetFMUStatePriorToCurrentPoint; /* snapshots never depend on the past */
    if (!ffmu_call_allowed(in, &R_DoStep)) return fmi2Error;
    return status(ffmu_do_step(in, R_DoStep.name, currentCommunicationPoint, communicationStepSize));
}

/* fmi2DoStep never returns fmi2Pending, so there is nothing to cancel. */
fmi2Status fmi2CancelStep(fmi2Component c)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_CancelStep)) return fmi2Error;
    ffmu_log_error(in, "fmi2CancelStep: asynchronous stepping is not supported (fmi2DoStep never returns fmi2Pending)");
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
    ffmu_log_error(in, "%s: %s (%d) is not available from this function or not meaningful for this FMU", function,
                   status_kind_name(s), (int)s);
    return fmi2Error;
}

/* fmi2DoStepStatus: the status of the last fmi2DoStep, which is always finished. */
fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_GetStatus)) return fmi2Error;
    if (!ffmu_pointer_ok(in, R_GetStatus.name, "value", value)) return fmi2Error;
    if (s != fmi2DoStepStatus) return wrong_status_kind(in, R_GetStatus.name, s);
    *value = in->run.state == FFMU_ST_ERROR ? fmi2Error : fmi2OK;
    return fmi2OK;
}

/* fmi2LastSuccessfulTime: the time of the last good state (a failed step
 * keeps the time there). */
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_GetRealStatus)) return fmi2Error;
    if (!ffmu_pointer_ok(in, R_GetRealStatus.name, "value", value)) return fmi2Error;
    if (s != fmi2LastSuccessfulTime) return wrong_status_kind(in, R_GetRealStatus.name, s);
    *value = in->run.time;
    return fmi2OK;
}

/* FMI 2.0 defines no integer status. */
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_GetIntegerStatus)) return fmi2Error;
    if (!ffmu_pointer_ok(in, R_GetIntegerStatus.name, "value", value)) return fmi2Error;
    return wrong_status_kind(in, R_GetIntegerStatus.name, s);
}

/* fmi2Terminated: the FMU never asks to stop the simulation. */
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_GetBooleanStatus)) return fmi2Error;
    if (!ffmu_pointer_ok(in, R_GetBooleanStatus.name, "value", value)) return fmi2Error;
    if (s != fmi2Terminated) return wrong_status_kind(in, R_GetBooleanStatus.name, s);
    *value = fmi2False;
    return fmi2OK;
}

/* fmi2PendingStatus is only meaningful after fmi2Pending, which never happens. */
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value)
{
    ffmu_instance *in = (ffmu_instance *)c;
    if (!ffmu_call_allowed(in, &R_GetStringStatus)) return fmi2Error;
    if (!ffmu_pointer_ok(in, R_GetStringStatus.name, "value", value)) return fmi2Error;
    return wrong_status_kind(in, R_GetStringStatus.name, s);
}
