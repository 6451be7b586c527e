// A stand-in for libnvidia-ml.so.1, loaded by the tests through SCALELAB_NVML_LIBRARY so that
// NvmlSampler's dlopen path, return-code handling and unit conversions run where no driver is.
// It exports the entry points of lib/monitor/nvml_api.h with these scripted answers:
//   2 GPUs ("Fake NVML GPU 0", "... 1"); GPU i: utilization 50 + i %, memory 2 GiB used of
//   80 GiB, temperature 40 + i C; GPU 0 draws 300.5 W, GPU 1 does not report power.
//   GPU 0 has NVLinks 0 and 1 active, link 2 inactive, no link 3 (INVALID_ARGUMENT); its data
//   counters after n field reads are tx = 1000 n KiB, rx = 3000 n KiB. GPU 1 has no NVLink.
// Environment: FAKE_NVML_GPUS=N (device count), FAKE_NVML_INIT=rc (nvmlInit_v2's return code),
// FAKE_NVML_LOST_AFTER=N (utilization reports "GPU is lost" after N calls).
// It is a test fixture only: nothing in scalelab ships or loads it.
#include <cstdlib>
#include <cstring>

#include "monitor/nvml_api.h"

namespace nvml = scalelab::monitor::nvml;

namespace {

struct FakeDevice {
  unsigned int index;
};
FakeDevice g_devices[8] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
unsigned long long g_field_reads = 0;
unsigned long long g_utilization_calls = 0;

long env(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::strtol(v, nullptr, 10) : fallback;
}

unsigned int index_of(nvml::Device d) { return reinterpret_cast<FakeDevice*>(d)->index; }

void copy(char* out, unsigned int length, const char* text) {
  std::strncpy(out, text, length);
  out[length - 1] = '\0';
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) nvml::Return nvmlInit_v2() {
  return static_cast<nvml::Return>(env("FAKE_NVML_INIT", 0));
}
__attribute__((visibility("default"))) nvml::Return nvmlShutdown() { return nvml::kSuccess; }
__attribute__((visibility("default"))) const char* nvmlErrorString(nvml::Return rc) {
  switch (rc) {
    case 9: return "Driver Not Loaded";
    case 15: return "GPU is lost";
    default: return "Unknown Error";
  }
}
__attribute__((visibility("default"))) nvml::Return nvmlSystemGetDriverVersion(char* out, unsigned int length) {
  copy(out, length, "999.99");
  return nvml::kSuccess;
}
__attribute__((visibility("default"))) nvml::Return nvmlSystemGetNVMLVersion(char* out, unsigned int length) {
  copy(out, length, "12.999.99");
  return nvml::kSuccess;
}
__attribute__((visibility("default"))) nvml::Return nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = static_cast<unsigned int>(env("FAKE_NVML_GPUS", 2));
  return nvml::kSuccess;
}
__attribute__((visibility("default"))) nvml::Return nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvml::Device* d) {
  if (i >= 8) return nvml::kInvalidArgument;
  *d = reinterpret_cast<nvml::Device>(&g_devices[i]);
  return nvml::kSuccess;
}
__attribute__((visibility("default"))) nvml::Return nvmlDeviceGetName(nvml::Device d, char* out, unsigned int length) {
  char name[64];
  std::strcpy(name, "Fake NVML GPU 0");
  name[std::strlen(name) - 1] = static_cast<char>('0' + index_of(d));
  copy(out, length, name);
  return nvml::kSuccess;
}
__attribute__((visibility("default"))) nvml::Return nvmlDeviceGetUtilizationRates(nvml::Device d, nvml::Utilization* u) {
  const long lost_after = env("FAKE_NVML_LOST_AFTER", -1);
  if (lost_after >= 0 && static_cast<long>(g_utilization_calls++) >= lost_after) return 15;
  u->gpu = 50 + index_of(d);
  u->memory = 10;
  return nvml::kSuccess;
}
__attribute__((visibility("default"))) nvml::Return nvmlDeviceGetMemoryInfo(nvml::Device, nvml::Memory* m) {
  m->total = 80ULL << 30;
  m->used = 2ULL << 30;
  m->free = m->total - m->used;
  return nvml::kSuccess;
}
__attribute__((visibility("default"))) nvml::Return nvmlDeviceGetPowerUsage(nvml::Device d, unsigned int* mw) {
  if (index_of(d) == 1) return nvml::kNotSupported;
  *mw = 300500;
  return nvml::kSuccess;
}
__attribute__((visibility("default"))) nvml::Return nvmlDeviceGetTemperature(nvml::Device d, unsigned int sensor,
                                                                              unsigned int* c) {
  if (sensor != nvml::kTemperatureGpu) return nvml::kInvalidArgument;
  *c = 40 + index_of(d);
  return nvml::kSuccess;
}
__attribute__((visibility("default"))) nvml::Return nvmlDeviceGetNvLinkState(nvml::Device d, unsigned int link,
                                                                              int* active) {
  if (index_of(d) != 0) return nvml::kNotSupported;
  if (link > 2) return nvml::kInvalidArgument;
  *active = link < 2 ? nvml::kFeatureEnabled : 0;
  return nvml::kSuccess;
}
__attribute__((visibility("default"))) nvml::Return nvmlDeviceGetFieldValues(nvml::Device d, int count,
                                                                              nvml::FieldValue* values) {
  if (index_of(d) != 0) return nvml::kNotSupported;
  const unsigned long long n = ++g_field_reads;
  for (int i = 0; i < count; ++i) {
    nvml::FieldValue& f = values[i];
    f.valueType = nvml::kValueTypeUnsignedLongLong;
    if (f.scopeId > 1) {
      f.nvmlReturn = nvml::kInvalidArgument;
    } else if (f.fieldId == nvml::kFieldNvLinkThroughputDataTx) {
      f.nvmlReturn = nvml::kSuccess;
      f.value.ullVal = 1000 * n;
    } else if (f.fieldId == nvml::kFieldNvLinkThroughputDataRx) {
      f.nvmlReturn = nvml::kSuccess;
      f.value.ullVal = 3000 * n;
    } else {
      f.nvmlReturn = nvml::kNotSupported;
    }
  }
  return nvml::kSuccess;
}

}  // extern "C"
