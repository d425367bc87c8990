/*
 * simstruc.h - a stand-in for Simulink's header, for compiling flexfmu's
 * S-function (flexfmu/targets/c/ffmu_sfunction.c) where MATLAB is not
 * installed. It declares exactly the SimStruct functions and the MATLAB
 * array functions the S-function uses, with the signatures MathWorks
 * documents for them (Simulink's "SimStruct Functions" reference and
 * MATLAB's C Matrix API), and the types those signatures name. Nothing is
 * defined: compiling against it proves that the S-function's C is
 * well-formed and calls each function as documented, not that Simulink
 * runs it (docs/simulink.md). tests/test_sfunction.py checks that the two
 * lists agree.
 */
#ifndef FLEXFMU_TEST_SIMSTRUC_H
#define FLEXFMU_TEST_SIMSTRUC_H

#include <stdbool.h>
#include <stddef.h>

/* Data types (MATLAB's tmwtypes.h names them; their widths are the usual ones) */
typedef double real_T;
typedef double time_T;
typedef int int_T;
typedef unsigned int uint_T;
typedef unsigned char boolean_T;
typedef char char_T;
typedef double mxDouble;

typedef struct SimStruct_tag SimStruct;   /* opaque: an S-function only passes it on */
typedef struct mxArray_tag mxArray;       /* opaque */

/* An option of ssSetOptions (its value is Simulink's business) */
#define SS_OPTION_EXCEPTION_FREE_CODE 0x1u

/* Dialog parameters */
int_T ssSetNumSFcnParams(SimStruct *S, int_T nSFcnParams);
int_T ssGetNumSFcnParams(SimStruct *S);
int_T ssGetSFcnParamsCount(SimStruct *S);
const mxArray *ssGetSFcnParam(SimStruct *S, int_T index);
void ssSetSFcnParamTunable(SimStruct *S, int_T param, int_T isTunable);

/* Errors */
void ssSetErrorStatus(SimStruct *S, const char_T *msg);
const char_T *ssGetErrorStatus(SimStruct *S);

/* Sizes, ports, states, work vectors, options */
void ssSetNumContStates(SimStruct *S, int_T n);
void ssSetNumDiscStates(SimStruct *S, int_T nDiscStates);
boolean_T ssSetNumInputPorts(SimStruct *S, int_T nInputPorts);
void ssSetInputPortWidth(SimStruct *S, int_T port, int_T width);
void ssSetInputPortDirectFeedThrough(SimStruct *S, int_T port, int_T dirFeed);
void ssSetInputPortRequiredContiguous(SimStruct *S, int_T port, int_T flag);
boolean_T ssSetNumOutputPorts(SimStruct *S, int_T nOutputPorts);
void ssSetOutputPortWidth(SimStruct *S, int_T port, int_T width);
int_T ssSetNumSampleTimes(SimStruct *S, int_T nSampleTimes);
int_T ssSetNumPWork(SimStruct *S, int_T nPWork);
void ssSetOptions(SimStruct *S, uint_T options);

/* Sample times and time */
time_T ssSetSampleTime(SimStruct *S, int_T st_index, time_T period);
time_T ssSetOffsetTime(SimStruct *S, int_T st_index, time_T offset);
time_T ssGetTStart(SimStruct *S);
time_T ssGetT(SimStruct *S);

/* Signals, work vectors, the block */
const real_T *ssGetInputPortRealSignal(SimStruct *S, int_T inputPortIdx);
real_T *ssGetOutputPortRealSignal(SimStruct *S, int_T port);
void **ssGetPWork(SimStruct *S);
const char_T *ssGetPath(SimStruct *S);

/* MATLAB arrays (the dialog parameters), C Matrix API */
bool mxIsEmpty(const mxArray *pm);
bool mxIsDouble(const mxArray *pm);
bool mxIsComplex(const mxArray *pm);
size_t mxGetNumberOfElements(const mxArray *pm);
mxDouble *mxGetPr(const mxArray *pm);

#endif
