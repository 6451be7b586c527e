// NvmlSampler: GpuSampler over NVML (nvml_sampler.h), with the entry points of nvml_api.h looked
// up by dlsym. Every NVML return code is checked: a reading the GPU does not support becomes
// kNotAvailable ("[N/A]" in the CSV, as nvidia-smi prints), a lost GPU is an error.
#include "monitor/nvml_sampler.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>

#include "core/error.h"
#include "core/file_check.h"
#include "monitor/nvml_api.h"

namespace scalelab::monitor {
namespace {

constexpr nvml::Return kGpuIsLost = 15;  // NVML_ERROR_GPU_IS_LOST

struct Api {
  nvml::InitFn init = nullptr;
  nvml::ShutdownFn shutdown = nullptr;
  nvml::ErrorStringFn error_string = nullptr;
  nvml::SystemStringFn driver_version = nullptr;
  nvml::SystemStringFn nvml_version = nullptr;
  nvml::DeviceGetCountFn device_count = nullptr;
  nvml::DeviceGetHandleByIndexFn device_handle = nullptr;
  nvml::DeviceGetNameFn device_name = nullptr;
  nvml::DeviceGetUtilizationRatesFn utilization = nullptr;
  nvml::DeviceGetMemoryInfoFn memory = nullptr;
  nvml::DeviceGetPowerUsageFn power = nullptr;
  nvml::DeviceGetTemperatureFn temperature = nullptr;
  nvml::DeviceGetNvLinkStateFn nvlink_state = nullptr;
  nvml::DeviceGetFieldValuesFn field_values = nullptr;
};

template <typename Fn>
void bind(void* handle, const std::string& library, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (fn == nullptr) {
    throw_runtime("NVML (" + library + ") lacks " + symbol +
                  ": it is not NVML, or its driver predates R450; install a current NVIDIA driver");
  }
}

// An entry point monitoring can do without: absent, its readings are "[N/A]" / "not exposed".
template <typename Fn>
void bind_optional(void* handle, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
}

class NvmlSampler final : public GpuSampler {
 public:
  NvmlSampler(void* handle, Api api) : handle_(handle), api_(api) {
    if (const nvml::Return rc = api_.init(); rc != nvml::kSuccess) {
      const std::string why = error(rc);
      dlclose(handle_);
      throw_runtime("NVML could not start (nvmlInit: " + why +
                    "): no NVIDIA GPU or driver is usable here; GPU monitoring needs one");
    }
    try {
      open_devices();
    } catch (...) {
      api_.shutdown();
      dlclose(handle_);
      throw;
    }
  }
  ~NvmlSampler() override {
    api_.shutdown();
    dlclose(handle_);
  }
  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;

  const std::vector<GpuDevice>& devices() const override { return devices_; }

  void sample(std::vector<GpuSample>& out) override {
    out.resize(devices_.size());
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      nvml::Device d = handles_[i];
      GpuSample& s = out[i];
      s = GpuSample{};
      s.index = devices_[i].index;
      nvml::Utilization u{};
      if (check(api_.utilization(d, &u), i, "nvmlDeviceGetUtilizationRates")) s.utilization_pct = u.gpu;
      nvml::Memory m{};
      if (check(api_.memory(d, &m), i, "nvmlDeviceGetMemoryInfo")) {
        s.memory_used_mib = static_cast<double>(m.used) / (1 << 20);
        s.memory_total_mib = static_cast<double>(m.total) / (1 << 20);
      }
      unsigned int milliwatts = 0;
      if (api_.power && check(api_.power(d, &milliwatts), i, "nvmlDeviceGetPowerUsage")) s.power_w = milliwatts / 1000.0;
      unsigned int celsius = 0;
      if (api_.temperature && check(api_.temperature(d, nvml::kTemperatureGpu, &celsius), i, "nvmlDeviceGetTemperature")) {
        s.temperature_c = celsius;
      }
    }
  }

  std::vector<NvLinkReading> nvlink() override {
    std::vector<NvLinkReading> readings;
    for (std::size_t i = 0; i < devices_.size(); ++i) readings.push_back(read_nvlink(i));
    return readings;
  }

  std::string description() const override { return description_; }

 private:
  std::string error(nvml::Return rc) const {
    const char* s = api_.error_string ? api_.error_string(rc) : nullptr;
    return (s ? std::string(s) : "NVML error") + " (" + std::to_string(rc) + ")";
  }

  // True on success; false when the GPU cannot report this quantity. A lost GPU is an error.
  bool check(nvml::Return rc, std::size_t device, const char* what) const {
    if (rc == nvml::kSuccess) return true;
    if (rc == kGpuIsLost) {
      throw_runtime("GPU " + std::to_string(devices_[device].index) + ": " + what + " failed: " + error(rc) +
                    "; the GPU fell off the bus: check `nvidia-smi` and the kernel log");
    }
    return false;
  }

  void open_devices() {
    unsigned int count = 0;
    if (const nvml::Return rc = api_.device_count(&count); rc != nvml::kSuccess) {
      throw_runtime("NVML could not count the GPUs (nvmlDeviceGetCount: " + error(rc) + "); check `nvidia-smi`");
    }
    if (count == 0) throw_runtime("NVML sees no GPU on this node; GPU monitoring needs one");
    for (unsigned int i = 0; i < count; ++i) {
      nvml::Device d = nullptr;
      if (const nvml::Return rc = api_.device_handle(i, &d); rc != nvml::kSuccess) {
        throw_runtime("NVML could not open GPU " + std::to_string(i) + " (nvmlDeviceGetHandleByIndex: " + error(rc) +
                      "); check `nvidia-smi` and the permissions of /dev/nvidia*");
      }
      char name[nvml::kDeviceNameBufferSize] = {};
      GpuDevice g;
      g.index = i;
      g.name = api_.device_name(d, name, sizeof name) == nvml::kSuccess ? std::string(name) : "[N/A]";
      devices_.push_back(g);
      handles_.push_back(d);
    }
    char driver[nvml::kVersionBufferSize] = {};
    char version[nvml::kVersionBufferSize] = {};
    description_ = "NVML";
    if (api_.nvml_version && api_.nvml_version(version, sizeof version) == nvml::kSuccess) description_ += std::string(" ") + version;
    if (api_.driver_version && api_.driver_version(driver, sizeof driver) == nvml::kSuccess) description_ += std::string(", driver ") + driver;
  }

  NvLinkReading read_nvlink(std::size_t i) {
    NvLinkReading r;
    r.index = devices_[i].index;
    nvml::Device d = handles_[i];
    if (!api_.nvlink_state || !api_.field_values) {
      r.reason = "this driver's NVML lacks nvmlDeviceGetNvLinkState or nvmlDeviceGetFieldValues";
      return r;
    }
    std::vector<unsigned int> active;
    for (unsigned int link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
      int state = 0;
      const nvml::Return rc = api_.nvlink_state(d, link, &state);
      if (rc == nvml::kInvalidArgument) break;  // past this GPU's last link
      if (rc == nvml::kNotSupported) {
        if (link == 0) r.reason = "this GPU has no NVLink (nvmlDeviceGetNvLinkState: Not Supported)";
        break;
      }
      check(rc, i, "nvmlDeviceGetNvLinkState");
      if (rc == nvml::kSuccess && state == nvml::kFeatureEnabled) active.push_back(link);
    }
    if (active.empty()) {
      if (r.reason.empty()) r.reason = "no active NVLink";
      return r;
    }
    std::vector<nvml::FieldValue> fields(2 * active.size());
    for (std::size_t k = 0; k < active.size(); ++k) {
      fields[2 * k] = nvml::FieldValue{};
      fields[2 * k].fieldId = nvml::kFieldNvLinkThroughputDataTx;
      fields[2 * k].scopeId = active[k];
      fields[2 * k + 1] = nvml::FieldValue{};
      fields[2 * k + 1].fieldId = nvml::kFieldNvLinkThroughputDataRx;
      fields[2 * k + 1].scopeId = active[k];
    }
    if (const nvml::Return rc = api_.field_values(d, static_cast<int>(fields.size()), fields.data());
        rc != nvml::kSuccess) {
      check(rc, i, "nvmlDeviceGetFieldValues");
      r.reason = "NVLink throughput counters not readable (nvmlDeviceGetFieldValues: " + error(rc) + ")";
      return r;
    }
    for (std::size_t k = 0; k < active.size(); ++k) {
      NvLinkCounter c;
      c.link = active[k];
      for (int dir = 0; dir < 2; ++dir) {
        const nvml::FieldValue& f = fields[2 * k + static_cast<std::size_t>(dir)];
        if (f.nvmlReturn != nvml::kSuccess) {
          r.reason = "NVLink " + std::to_string(c.link) + " throughput counter not exposed (" + error(f.nvmlReturn) + ")";
          r.links.clear();
          return r;
        }
        std::uint64_t kib = 0;
        switch (f.valueType) {
          case nvml::kValueTypeUnsignedLongLong: kib = f.value.ullVal; break;
          case 1: kib = f.value.uiVal; break;  // NVML_VALUE_TYPE_UNSIGNED_INT
          case 2: kib = f.value.ulVal; break;  // NVML_VALUE_TYPE_UNSIGNED_LONG
          default:
            r.reason = "NVLink throughput counter of unexpected value type " + std::to_string(f.valueType);
            r.links.clear();
            return r;
        }
        (dir == 0 ? c.tx_bytes : c.rx_bytes) = kib * 1024;  // the counters count KiB
      }
      r.links.push_back(c);
    }
    r.exposed = true;
    return r;
  }

  void* handle_;
  Api api_;
  std::vector<GpuDevice> devices_;
  std::vector<nvml::Device> handles_;
  std::string description_;
};

}  // namespace

std::string nvml_library_name() {
  const char* lib = std::getenv("SCALELAB_NVML_LIBRARY");
  return (lib && *lib) ? std::string(lib) : std::string("libnvidia-ml.so.1");
}

std::unique_ptr<GpuSampler> open_nvml_sampler() {
  const std::string library = nvml_library_name();
  // A path names one file (a FIFO would block dlopen); a bare name is searched as the loader does.
  if (library.find('/') != std::string::npos && is_special_file(library)) {
    throw_input("SCALELAB_NVML_LIBRARY " + library + ": " + kSpecialFileWords + "; give the path of libnvidia-ml.so.1");
  }
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    throw_runtime("NVML not found (" + library + "): install the NVIDIA driver; GPU monitoring needs it");
  }
  Api api;
  try {
    bind(handle, library, "nvmlInit_v2", api.init);
    bind(handle, library, "nvmlShutdown", api.shutdown);
    bind(handle, library, "nvmlErrorString", api.error_string);
    bind_optional(handle, "nvmlSystemGetDriverVersion", api.driver_version);
    bind_optional(handle, "nvmlSystemGetNVMLVersion", api.nvml_version);
    bind(handle, library, "nvmlDeviceGetCount_v2", api.device_count);
    bind(handle, library, "nvmlDeviceGetHandleByIndex_v2", api.device_handle);
    bind(handle, library, "nvmlDeviceGetName", api.device_name);
    bind(handle, library, "nvmlDeviceGetUtilizationRates", api.utilization);
    bind(handle, library, "nvmlDeviceGetMemoryInfo", api.memory);
    bind_optional(handle, "nvmlDeviceGetPowerUsage", api.power);
    bind_optional(handle, "nvmlDeviceGetTemperature", api.temperature);
    bind_optional(handle, "nvmlDeviceGetNvLinkState", api.nvlink_state);
    bind_optional(handle, "nvmlDeviceGetFieldValues", api.field_values);
  } catch (...) {
    dlclose(handle);
    throw;
  }
  return std::make_unique<NvmlSampler>(handle, api);
}

}  // namespace scalelab::monitor
