/*
 * TensorFlow's <tensorflow/c/c_api_macros.h>: TF_CAPI_EXPORT.
 *
 *   #include <tensorflow/c/c_api_macros.h>   (installed: make install, or the wheel)
 *
 * TensorFlow splits its C API over several headers that c_api.h includes;
 * here every declaration lives in c_api.h and this header includes it, so a
 * program including only this header compiles as against TensorFlow's (it
 * sees the rest of the API too, which costs it nothing). One copy of each
 * declaration means the headers cannot disagree.
 */
#ifndef TENSORWEAVE_C_API_C_API_MACROS_H_
#define TENSORWEAVE_C_API_C_API_MACROS_H_

#include "c_api.h"

#endif /* TENSORWEAVE_C_API_C_API_MACROS_H_ */
