// The device catalog and the roofline: every catalog device loads with its datasheet figures, a
// layer takes the longer of its compute and memory times, TF32 and AMP fall back to the FP32 peak
// where a device has no such units, every GPU model of the machine catalog names a device, and a
// bad device file or name is one line that says what to fix.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "sim/device.h"
#include "topo/catalog.h"

namespace scalelab::sim {
namespace {

const std::vector<std::string> kCatalog = {"a100-pcie-80gb", "a100-sxm4-40gb", "a100-sxm4-80gb", "geforce-rtx-3090", "geforce-rtx-4090", "h100-sxm5-80gb", "h200-sxm-141gb", "k80",
                                           "mi250x-gcd",     "p100-pcie-16gb", "p100-sxm2",      "v100-pcie-16gb", "v100-sxm2-16gb",
                                           "v100-sxm2-32gb", "v100-sxm3-32gb"};

TEST(DeviceCatalog, EveryDeviceLoadsWithPeaksFractionsAndSources) {
  EXPECT_EQ(device_names(), kCatalog);
  for (const auto& name : device_names()) {
    SCOPED_TRACE(name);
    const DeviceSpec d = resolve_device(name);
    EXPECT_EQ(d.name, name);
    EXPECT_EQ(d.kind, "gpu");
    EXPECT_GT(d.fp32_tflops, 0);
    EXPECT_GT(d.mem_bw_GBps, 0);
    EXPECT_GT(d.memory_GiB, 0);
    EXPECT_FALSE(d.sources.empty());
    // Tensor units, where present, are at least as fast as the FP32 pipes (GeForce cards' TF32
    // with FP32 accumulation runs at their FP32 rate).
    if (d.tf32_tflops > 0) {
      EXPECT_GE(d.tf32_tflops, d.fp32_tflops);
    }
    if (d.amp_tflops > 0) {
      EXPECT_GT(d.amp_tflops, d.fp32_tflops);
    }
    for (std::size_t k = 0; k < kLayerKinds; ++k) {
      EXPECT_GT(d.efficiency[k].compute, 0);
      EXPECT_LE(d.efficiency[k].compute, 1);
      EXPECT_GT(d.efficiency[k].memory, 0);
      EXPECT_LE(d.efficiency[k].memory, 1);
    }
  }
}

TEST(DeviceCatalog, DatasheetFiguresAsPublished) {
  const DeviceSpec v100 = resolve_device("v100-sxm2-16gb");
  EXPECT_DOUBLE_EQ(v100.fp32_tflops, 15.7);
  EXPECT_DOUBLE_EQ(v100.amp_tflops, 125);
  EXPECT_DOUBLE_EQ(v100.mem_bw_GBps, 900);
  const DeviceSpec a100 = resolve_device("a100-sxm4-80gb");
  EXPECT_DOUBLE_EQ(a100.tf32_tflops, 156);
  EXPECT_DOUBLE_EQ(a100.amp_tflops, 312);
  EXPECT_DOUBLE_EQ(a100.mem_bw_GBps, 2039);
  EXPECT_DOUBLE_EQ(resolve_device("a100-sxm4-40gb").mem_bw_GBps, 1555);
  EXPECT_DOUBLE_EQ(resolve_device("h100-sxm5-80gb").amp_tflops, 989.4);
  // One GK210 and one MI250X GCD: half the board's or package's figures.
  EXPECT_DOUBLE_EQ(resolve_device("k80").mem_bw_GBps, 480.0 / 2);
  EXPECT_DOUBLE_EQ(resolve_device("mi250x-gcd").amp_tflops, 383.0 / 2);
}

// A device with round numbers, so each expectation is the formula written out.
DeviceSpec toy() {
  DeviceSpec d;
  d.name = "toy";
  d.fp32_tflops = 10;
  d.amp_tflops = 80;
  d.mem_bw_GBps = 100;
  d.efficiency.fill({0.5, 0.8});
  return d;
}

TEST(Roofline, ComputeBoundLayerTakesFlopsOverPeakTimesFraction) {
  const DeviceSpec d = toy();
  const double flops = 1e12, bytes = 1e9;
  const double compute_s = flops / (10e12 * 0.5), memory_s = bytes / (100e9 * 0.8);
  ASSERT_GT(compute_s, memory_s);
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::conv, flops, bytes, Precision::fp32), compute_s);
}

TEST(Roofline, MemoryBoundLayerTakesBytesOverBandwidthTimesFraction) {
  const DeviceSpec d = toy();
  const double flops = 1e9, bytes = 1e11;
  const double compute_s = flops / (10e12 * 0.5), memory_s = bytes / (100e9 * 0.8);
  ASSERT_GT(memory_s, compute_s);
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::elementwise, flops, bytes, Precision::fp32), memory_s);
}

TEST(Roofline, FasterPrecisionCanTurnAComputeBoundLayerMemoryBound) {
  const DeviceSpec d = toy();
  const double flops = 1e12, bytes = 1e10;
  const double memory_s = bytes / (100e9 * 0.8);
  const double fp32_s = flops / (10e12 * 0.5), amp_s = flops / (80e12 * 0.5);
  ASSERT_GT(fp32_s, memory_s);  // compute-bound in fp32 ...
  ASSERT_LT(amp_s, memory_s);   // ... memory-bound on the tensor cores
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::matmul, flops, bytes, Precision::fp32), fp32_s);
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::matmul, flops, bytes, Precision::amp), memory_s);
}

TEST(Roofline, TensorCoresReachTheirOwnFractionOfTheTensorPeak) {
  DeviceSpec d = toy();
  d.efficiency[static_cast<std::size_t>(LayerKind::conv)] = {0.6, 0.8, 0.2};
  const double flops = 1e12;
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::conv, flops, 0, Precision::fp32), flops / (10e12 * 0.6));
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::conv, flops, 0, Precision::amp), flops / (80e12 * 0.2));
  // No TF32 peak here: tf32 runs on the CUDA cores at the FP32 fraction.
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::conv, flops, 0, Precision::tf32), flops / (10e12 * 0.6));
}

TEST(Roofline, ALayerWithNothingToDoTakesNoTime) {
  const DeviceSpec d = toy();
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::elementwise, 0, 0, Precision::fp32), 0.0);
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::matmul, 0, 0, Precision::amp), 0.0);
}

TEST(Roofline, EachKindUsesItsOwnFractions) {
  DeviceSpec d = toy();
  d.efficiency[static_cast<std::size_t>(LayerKind::conv)] = {0.25, 0.8};
  const double flops = 1e12;
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::conv, flops, 0, Precision::fp32), flops / (10e12 * 0.25));
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::matmul, flops, 0, Precision::fp32), flops / (10e12 * 0.5));
}

TEST(Precision, Tf32AndAmpFallBackToTheFp32PeakWithoutTensorUnits) {
  const DeviceSpec v100 = resolve_device("v100-sxm2-16gb");  // tensor cores for FP16, none for TF32
  EXPECT_DOUBLE_EQ(v100.peak_flops(Precision::tf32), 15.7e12);
  EXPECT_DOUBLE_EQ(v100.peak_flops(Precision::amp), 125e12);
  const DeviceSpec k80 = resolve_device("k80");  // neither
  EXPECT_DOUBLE_EQ(k80.peak_flops(Precision::amp), k80.fp32_tflops * 1e12);
  EXPECT_DOUBLE_EQ(k80.peak_flops(Precision::tf32), k80.fp32_tflops * 1e12);
  const DeviceSpec a100 = resolve_device("a100-sxm4-40gb");  // both
  EXPECT_DOUBLE_EQ(a100.peak_flops(Precision::fp32), 19.5e12);
  EXPECT_DOUBLE_EQ(a100.peak_flops(Precision::tf32), 156e12);
  EXPECT_DOUBLE_EQ(a100.peak_flops(Precision::amp), 312e12);
}

TEST(Precision, NamesParseAndAnUnknownOneIsAUsageErrorAboutPrecision) {
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::amp}) EXPECT_EQ(parse_precision(name_of(p)), p);
  EXPECT_DOUBLE_EQ(activation_bytes(Precision::fp32), 4);
  EXPECT_DOUBLE_EQ(activation_bytes(Precision::tf32), 4);
  EXPECT_DOUBLE_EQ(activation_bytes(Precision::amp), 2);
  try {
    (void)parse_precision("fp8");
    FAIL() << "fp8 parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_EQ(e.parameter(), "precision");
    EXPECT_NE(std::string(e.what()).find("fp8"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("amp"), std::string::npos);
  }
}

TEST(DeviceForModel, TheMachineCatalogsGpuModelsNameCatalogDevices) {
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"Tesla V100-SXM2-16GB", "v100-sxm2-16gb"}, {"Tesla V100-SXM2-32GB", "v100-sxm2-32gb"},
      {"Tesla V100-PCIE-16GB", "v100-pcie-16gb"}, {"Tesla V100-SXM3-32GB", "v100-sxm3-32gb"},
      {"A100-SXM4-40GB", "a100-sxm4-40gb"},       {"H100-SXM5-80GB", "h100-sxm5-80gb"},
      {"AMD MI250X GCD", "mi250x-gcd"},           {"NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"},
      {"NVIDIA H100 80GB HBM3", "h100-sxm5-80gb"}, {"Tesla K80", "k80"},
      {"NVIDIA H200", "h200-sxm-141gb"},           {"H200-SXM-141GB", "h200-sxm-141gb"},
      {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"}};
  for (const auto& [model, device] : expected) EXPECT_EQ(device_for_model(model).name, device) << model;
  // Every GPU of every catalog machine, so a new machine file needs its device here too.
  std::set<std::string> models;
  for (const auto& entry : topo::catalog()) {
    for (const auto& dev : topo::resolve_machine(entry.name).devices) {
      if (dev.kind == topo::DeviceKind::gpu) models.insert(dev.model);
    }
  }
  EXPECT_GE(models.size(), 7u);
  for (const auto& m : models) EXPECT_NO_THROW((void)device_for_model(m)) << m;
}

void expect_one_line_input_error(const std::function<void()>& f, const std::vector<std::string>& words) {
  try {
    f();
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::input) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    for (const auto& w : words) EXPECT_NE(what.find(w), std::string::npos) << "'" << w << "' not in: " << what;
  }
}

TEST(DeviceForModel, AnUnknownModelIsAnInputErrorListingTheCatalog) {
  expect_one_line_input_error([] { (void)device_for_model("GeForce GTX 1080"); },
                              {"GeForce GTX 1080", "v100-sxm2-16gb", "data/devices"});
  // From a machine file: the file and the GPU open the line, which names --machine.
  try {
    (void)device_for_model("H100", "box.json, GPU gpu0");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "machine");
    EXPECT_NE(std::string(e.what()).find("box.json, GPU gpu0: model 'H100'"), std::string::npos) << e.what();
  }
}

TEST(DeviceFile, UnknownNamesAndMissingFilesAreOneLineInputErrors) {
  expect_one_line_input_error([] { (void)resolve_device("v200"); }, {"v200", "a100-sxm4-40gb", "device file"});
  expect_one_line_input_error([] { (void)resolve_device("/nonexistent/gpu.json"); }, {"/nonexistent/gpu.json"});
}

// Writes a catalog device's JSON, changed by `edit`, to a temporary file and returns its path.
std::string edited_file(const std::string& tag, const std::function<void(nlohmann::json&)>& edit) {
  std::ifstream in(std::string(SCALELAB_SOURCE_DIR) + "/data/devices/v100-sxm2-16gb.json");
  nlohmann::json j = nlohmann::json::parse(in);
  edit(j);
  const auto path = std::filesystem::temp_directory_path() / ("scalelab-test-device-" + tag + ".json");
  std::ofstream(path) << j.dump(2);
  return path.string();
}

TEST(DeviceFile, AValidFileLoadsByPath) {
  const std::string path = edited_file("valid", [](nlohmann::json& j) { j["name"] = "my-gpu"; });
  EXPECT_EQ(resolve_device(path).name, "my-gpu");
}

TEST(DeviceFile, MalformedFilesNameTheFileTheFieldAndTheFix) {
  struct Case {
    std::string tag;
    std::function<void(nlohmann::json&)> edit;
    std::vector<std::string> words;
  };
  const std::vector<Case> cases = {
      {"no-peak", [](nlohmann::json& j) { j.erase("fp32_tflops"); }, {"fp32_tflops", "missing", "datasheet"}},
      {"negative-bw", [](nlohmann::json& j) { j["memory_bandwidth_GBps"] = -1; }, {"memory_bandwidth_GBps", "-1", "more than 0"}},
      {"text-peak", [](nlohmann::json& j) { j["amp_tflops"] = "125"; }, {"amp_tflops", "number"}},
      {"fraction-above-1", [](nlohmann::json& j) { j["efficiency"]["conv"]["compute"] = 1.5; }, {"efficiency.conv", "compute", "1.5"}},
      {"unknown-kind", [](nlohmann::json& j) { j["efficiency"]["convolution"] = j["efficiency"]["conv"]; },
       {"efficiency.convolution", "not a layer kind", "matmul"}},
      {"no-source", [](nlohmann::json& j) { j["efficiency"]["conv"].erase("source"); }, {"efficiency.conv", "source"}},
      {"no-default", [](nlohmann::json& j) { j["efficiency"].erase("default"); }, {"efficiency", "default"}},
      {"no-sources", [](nlohmann::json& j) { j["sources"] = nlohmann::json::array(); }, {"sources", "datasheets"}},
      {"unknown-field", [](nlohmann::json& j) { j["fp64_tflops"] = 7.8; }, {"fp64_tflops", "unknown field"}},
      {"bad-kind", [](nlohmann::json& j) { j["kind"] = "tpu"; }, {"kind", "tpu", "gpu"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.tag);
    const std::string path = edited_file(c.tag, c.edit);
    auto words = c.words;
    words.push_back(path);
    expect_one_line_input_error([&] { (void)resolve_device(path); }, words);
  }
  const auto broken = std::filesystem::temp_directory_path() / "scalelab-test-device-not-json.json";
  std::ofstream(broken) << "{ \"name\": ";
  expect_one_line_input_error([&] { (void)resolve_device(broken.string()); }, {broken.string(), "not valid JSON"});
}

TEST(DeviceFile, AnEntryInheritsWhatItLeavesOutFromTheDefault) {
  const std::string path = edited_file("inherit", [](nlohmann::json& j) {
    j["efficiency"]["default"] = {{"compute", 0.4}, {"memory", 0.9}, {"source", "test"}};
    j["efficiency"]["conv"] = {{"compute", 0.3}, {"source", "test"}};
  });
  const DeviceSpec d = resolve_device(path);
  EXPECT_DOUBLE_EQ(d.of(LayerKind::conv).compute, 0.3);
  EXPECT_DOUBLE_EQ(d.of(LayerKind::conv).memory, 0.9);
  EXPECT_DOUBLE_EQ(d.of(LayerKind::pool).compute, 0.4);
}

}  // namespace
}  // namespace scalelab::sim
