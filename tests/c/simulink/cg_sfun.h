/*
 * cg_sfun.h - a stand-in for the header a Simulink Coder build includes at
 * the end of an S-function (simulink.c in a MEX build). The real one hands
 * the S-function's methods to the generated code; this one takes their
 * addresses in a table of the signatures MathWorks documents, so the
 * compiler checks each method's signature and sees every one used.
 */
#ifndef FLEXFMU_TEST_CG_SFUN_H
#define FLEXFMU_TEST_CG_SFUN_H

struct flexfmu_test_sfunction_methods {
    void (*initialize_sizes)(SimStruct *S);
    void (*initialize_sample_times)(SimStruct *S);
    void (*check_parameters)(SimStruct *S);
    void (*process_parameters)(SimStruct *S);
    void (*start)(SimStruct *S);
    void (*outputs)(SimStruct *S, int_T tid);
    void (*update)(SimStruct *S, int_T tid);
    void (*terminate)(SimStruct *S);
};

const struct flexfmu_test_sfunction_methods flexfmu_test_sfunction = {
    mdlInitializeSizes, mdlInitializeSampleTimes, mdlCheckParameters, mdlProcessParameters,
    mdlStart, mdlOutputs, mdlUpdate, mdlTerminate,
};

#endif
