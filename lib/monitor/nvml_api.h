// The few parts of NVML's C API that scalelab uses, declared here because nvml.h ships with the
// driver's development files, not with the CUDA toolkit scalelab builds against, and the library
// itself (libnvidia-ml.so.1) is loaded at run time with dlopen (nvml_sampler.cpp). Only
// nvml_sampler.cpp includes this file.
//
// Declarations follow NVIDIA's NVML API Reference Guide:
//   https://docs.nvidia.com/deploy/nvml-api/ (functions: Initialization and Cleanup, Device Queries,
//   NvLink Methods; structs: structnvmlMemory__t.html, structnvmlFieldValue__t.html; field ids:
//   group__nvmlFieldValueEnums.html). The layouts are the v1 structs every driver since R450
//   accepts: nvmlUtilization_t {gpu, memory}, nvmlMemory_t {total, free, used} in bytes,
//   nvmlFieldValue_t {fieldId, scopeId, timestamp, latencyUsec, valueType, nvmlReturn, value}.
#pragma once

namespace scalelab::monitor::nvml {

using Return = int;  // nvmlReturn_t (a C enum)
inline constexpr Return kSuccess = 0;              // NVML_SUCCESS
inline constexpr Return kInvalidArgument = 2;      // NVML_ERROR_INVALID_ARGUMENT
inline constexpr Return kNotSupported = 3;         // NVML_ERROR_NOT_SUPPORTED

using Device = struct DeviceOpaque*;  // nvmlDevice_t: an opaque handle

struct Utilization {  // nvmlUtilization_t
  unsigned int gpu;     // percent of the last sample period during which a kernel ran
  unsigned int memory;  // percent of that period during which device memory was read or written
};

struct Memory {  // nvmlMemory_t (v1), bytes
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

union Value {  // nvmlValue_t (8 bytes: its widest members are double and unsigned long long)
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
};

struct FieldValue {  // nvmlFieldValue_t
  unsigned int fieldId;
  unsigned int scopeId;  // the link id for the NVLink throughput fields
  long long timestamp;   // microseconds since 1970
  long long latencyUsec;
  int valueType;         // nvmlValueType_t
  Return nvmlReturn;     // check before reading value
  Value value;
};
static_assert(sizeof(FieldValue) == 40, "nvmlFieldValue_t is 40 bytes on LP64");

inline constexpr unsigned int kTemperatureGpu = 0;   // NVML_TEMPERATURE_GPU
inline constexpr int kFeatureEnabled = 1;            // NVML_FEATURE_ENABLED (nvmlEnableState_t)
inline constexpr unsigned int kNvLinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS (R520 and later)
inline constexpr unsigned int kDeviceNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned int kVersionBufferSize = 80;     // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
// Cumulative NVLink data payload per link (scopeId = link id), in KiB.
inline constexpr unsigned int kFieldNvLinkThroughputDataTx = 138;  // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX
inline constexpr unsigned int kFieldNvLinkThroughputDataRx = 139;  // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX
inline constexpr int kValueTypeUnsignedLongLong = 3;               // NVML_VALUE_TYPE_UNSIGNED_LONG_LONG

// The entry points, by their exported names.
using InitFn = Return (*)();                                              // nvmlInit_v2
using ShutdownFn = Return (*)();                                          // nvmlShutdown
using ErrorStringFn = const char* (*)(Return);                            // nvmlErrorString
using SystemStringFn = Return (*)(char*, unsigned int);                   // nvmlSystemGetDriverVersion, nvmlSystemGetNVMLVersion
using DeviceGetCountFn = Return (*)(unsigned int*);                       // nvmlDeviceGetCount_v2
using DeviceGetHandleByIndexFn = Return (*)(unsigned int, Device*);       // nvmlDeviceGetHandleByIndex_v2
using DeviceGetNameFn = Return (*)(Device, char*, unsigned int);          // nvmlDeviceGetName
using DeviceGetUtilizationRatesFn = Return (*)(Device, Utilization*);     // nvmlDeviceGetUtilizationRates
using DeviceGetMemoryInfoFn = Return (*)(Device, Memory*);                // nvmlDeviceGetMemoryInfo
using DeviceGetPowerUsageFn = Return (*)(Device, unsigned int*);          // nvmlDeviceGetPowerUsage (milliwatts)
using DeviceGetTemperatureFn = Return (*)(Device, unsigned int, unsigned int*);  // nvmlDeviceGetTemperature
using DeviceGetNvLinkStateFn = Return (*)(Device, unsigned int, int*);    // nvmlDeviceGetNvLinkState
using DeviceGetFieldValuesFn = Return (*)(Device, int, FieldValue*);      // nvmlDeviceGetFieldValues

}  // namespace scalelab::monitor::nvml
