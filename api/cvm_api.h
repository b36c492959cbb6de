/**
 * @file cvm_api.h
 * @brief Upstream CVM's C API (CortexFoundation/cvm-runtime include/cvm/c_api.h), as a
 * drop-in: the same names, signatures and status numbers, implemented by cvm-lite.
 *
 * Status: 0 SUCCEED, 1 ERROR_LOGIC (the model or the input is invalid), 2
 * ERROR_RUNTIME. The library initialises itself on first use. Device types: 0 CPU,
 * 1 GPU (the "cuda" device when a CUDA plugin is loaded, a runtime error otherwise),
 * 2 FORMAL (runs on the CPU: the CPU results are the reference); others are a
 * runtime error. CVMAPIGetVersion and CVMAPIGetPreprocessMethod write a NUL-terminated
 * string of at most 32 bytes (upstream's own buffer size). The message for the last
 * failure of the calling thread is cvml_last_error() (cvml.h).
 *
 * NULL pointer arguments (the net's out-pointer included) are runtime errors.
 *
 * Threads: a net may be shared between threads. CVMAPIInference holds the net's lock
 * for the whole call (input in, run, output out), so concurrent inferences on one net
 * run one after the other, each with correct outputs; the getters only read what the
 * load fixed. Different nets run in parallel. CVMAPIFreeModel must not overlap any
 * other call on the same net. (Upstream's Predict on a shared model is not safe.)
 *
 * This header compiles as C99 and as C++.
 */
#ifndef CVML_CVM_API_H
#define CVML_CVM_API_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(CVML_BUILDING_LIBRARY)
#define CVM_API_DLL __declspec(dllexport)
#elif defined(_WIN32)
#define CVM_API_DLL
#else
#define CVM_API_DLL __attribute__((visibility("default")))
#endif

enum CVMStatus { SUCCEED = 0, ERROR_LOGIC = 1, ERROR_RUNTIME = 2 };

CVM_API_DLL int CVMAPILoadModel(const char* graph_json, int graph_strlen, const char* param_bytes,
                                int param_strlen, void** net, int device_type, int device_id);
CVM_API_DLL int CVMAPIFreeModel(void* net);
CVM_API_DLL int CVMAPIInference(void* net, char* input_data, int input_len, char* output_data);

CVM_API_DLL int CVMAPIGetVersion(void* net, char* version);
CVM_API_DLL int CVMAPIGetPreprocessMethod(void* net, char* method);

CVM_API_DLL int CVMAPIGetInputLength(void* net, unsigned long long* size);
CVM_API_DLL int CVMAPIGetOutputLength(void* net, unsigned long long* size);
CVM_API_DLL int CVMAPIGetInputTypeSize(void* net, unsigned long long* size);
CVM_API_DLL int CVMAPIGetOutputTypeSize(void* net, unsigned long long* size);

CVM_API_DLL int CVMAPIGetStorageSize(void* net, unsigned long long* gas);
CVM_API_DLL int CVMAPIGetGasFromModel(void* net, unsigned long long* gas);
CVM_API_DLL int CVMAPIGetGasFromGraphFile(const char* graph_json, unsigned long long* gas);

#ifdef __cplusplus
}
#endif

#endif /* CVML_CVM_API_H */
