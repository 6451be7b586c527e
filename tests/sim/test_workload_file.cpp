// The workload file's errors: every malformed input is an input error (exit code 2) whose one
// line names the file, the field and what to write instead; layer kinds by name.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "sim/workload.h"

namespace scalelab::sim {
namespace {

using nlohmann::json;

json valid() {
  return json::parse(R"({
    "format": "scalelab-workload/1", "name": "tiny", "title": "two layers", "unit": "images",
    "input_shape": [1, 4, 4], "encoded_sample_bytes": 16, "sources": ["this test"],
    "layers": [
      {"name": "conv1", "kind": "conv", "forward_flops": 288, "params": 10, "in_elems": 16, "out_elems": 16},
      {"name": "bn1", "kind": "norm", "forward_flops": 64, "params": 2, "in_elems": 16, "out_elems": 16}
    ]})");
}

// Parses j as file "bad.json" and returns the error; fails the test if none or not an input error.
Error error_of(const json& j) {
  try {
    (void)workload_from_json(j, "bad.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input) << e.what();
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
    return e;
  }
  ADD_FAILURE() << "no error for " << j.dump();
  return Error(ErrorKind::runtime, "none");
}

void expect_message(const json& j, const std::vector<std::string>& parts) {
  const std::string what = error_of(j).what();
  EXPECT_TRUE(what.starts_with("bad.json: ")) << what;
  for (const auto& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
}

TEST(WorkloadFile, ValidFileReadsWithItsTotals) {
  const Workload w = workload_from_json(valid(), "tiny.json");
  EXPECT_EQ(w.name, "tiny");
  EXPECT_EQ(w.input_shape, (std::vector<std::size_t>{1, 4, 4}));
  ASSERT_EQ(w.layers.size(), 2u);
  EXPECT_EQ(w.layers[1].kind, LayerKind::norm);
  EXPECT_EQ(w.parameters(), 12u);
  EXPECT_EQ(w.forward_flops(), 352);
  EXPECT_EQ(to_json(workload_from_json(to_json(w), "again")), to_json(w));
}

TEST(WorkloadFile, MissingFieldIsNamed) {
  json j = valid();
  j.erase("layers");
  expect_message(j, {"layers", "missing", "forward order"});
  j = valid();
  j["layers"][1].erase("params");
  expect_message(j, {"layers[1] (bn1).params", "missing", "parameter count"});
}

TEST(WorkloadFile, WrongTypeIsNamed) {
  json j = valid();
  j["layers"][0]["forward_flops"] = "288";
  expect_message(j, {"layers[0] (conv1).forward_flops", "not a number"});
  j = valid();
  j["input_shape"] = "1x4x4";
  expect_message(j, {"input_shape", "not a non-empty list", "[3, 224, 224]"});
  j = valid();
  j["sources"] = json::array({"ok", 3});
  expect_message(j, {"sources[1]", "not a string"});
  j = valid();
  j["layers"][1] = 5;
  expect_message(j, {"layers[1]", "not an object"});
  expect_message(json::array(), {"(top level)", "not a JSON object"});
}

TEST(WorkloadFile, UnknownKindListsTheKinds) {
  json j = valid();
  j["layers"][0]["kind"] = "convolution";
  expect_message(j, {"layers[0] (conv1).kind", "'convolution' is not a layer kind",
                     "conv, matmul, attention, norm, elementwise, pool or embedding"});
}

// A layer's own activation (lib/nn's Conv2D and Dense carry one): "relu", or no field at all.
TEST(WorkloadFile, AnActivationIsReluOrAbsent) {
  json j = valid();
  j["layers"][0]["activation"] = "relu";
  const Workload w = workload_from_json(j, "tiny.json");
  EXPECT_EQ(w.layers[0].activation, "relu");
  EXPECT_EQ(w.layers[1].activation, "");
  EXPECT_EQ(to_json(w)["layers"][0]["activation"], "relu");
  EXPECT_FALSE(to_json(w)["layers"][1].contains("activation"));
  j["layers"][0]["activation"] = "tanh";
  expect_message(j, {"layers[0] (conv1).activation", "'tanh' is not an activation", "\"relu\""});
  j["layers"][0]["activation"] = 1;
  expect_message(j, {"layers[0] (conv1).activation"});
}

TEST(WorkloadFile, NegativeAndFractionalNumbersAreRefused) {
  json j = valid();
  j["layers"][1]["params"] = -2;
  expect_message(j, {"layers[1] (bn1).params", "negative"});
  j = valid();
  j["layers"][0]["in_elems"] = -16.5;
  expect_message(j, {"layers[0] (conv1).in_elems", "negative"});
  j = valid();
  j["encoded_sample_bytes"] = -1;
  expect_message(j, {"encoded_sample_bytes", "negative"});
  j = valid();
  j["layers"][0]["params"] = 2.5;
  expect_message(j, {"layers[0] (conv1).params", "not a whole number"});
  j = valid();
  j["layers"][0]["params"] = 1e30;
  expect_message(j, {"layers[0] (conv1).params", "too large"});
  j = valid();
  j["input_shape"][1] = 0;
  expect_message(j, {"input_shape[1]", "positive dimension"});
  j = valid();
  j["input_shape"] = {28, 28};
  expect_message(j, {"input_shape", "2 dimensions", "[channels, height, width]"});
  j = valid();
  j["unit"] = "sequences";
  expect_message(j, {"input_shape", "3 dimensions", "[tokens]"});
}

// 1e300 FLOPs per sample once gave a 300-digit step time and 0 images/s: a typo or a unit mixed up.
TEST(WorkloadFile, FiguresBeyondAnyNetworkAreRefused) {
  json j = valid();
  j["layers"][0]["forward_flops"] = 1e300;
  expect_message(j, {"layers[0] (conv1).forward_flops", "too large", "1e18"});
  j = valid();
  j["layers"][1]["out_elems"] = 1e19;
  expect_message(j, {"layers[1] (bn1).out_elems", "too large"});
  j = valid();
  j["layers"][0]["forward_flops"] = 7e14;  // GPT-3's forward pass of a 2048-token sequence
  EXPECT_NO_THROW((void)workload_from_json(j, "ok.json"));
}

TEST(WorkloadFile, WrongFormatUnitOrFieldIsNamed) {
  json j = valid();
  j["format"] = "scalelab-machine/1";
  expect_message(j, {"format", "scalelab-workload/1"});
  j = valid();
  j["unit"] = "tokens";
  expect_message(j, {"unit", "images or sequences"});
  j = valid();
  j["layers"][0]["forwad_flops"] = 1;
  expect_message(j, {"layers[0] (conv1).forwad_flops", "unknown field", "forward_flops"});
  j = valid();
  j["layers"] = json::array();
  expect_message(j, {"layers", "non-empty"});
  j = valid();
  j["layers"][1]["name"] = "conv1";
  expect_message(j, {"layers[1].name", "'conv1' is the name of an earlier layer"});
  j = valid();
  j["layers"][0]["name"] = "";
  expect_message(j, {"layers[0].name", "is empty"});
  // Layers of no work at all: the simulator printed 0 images/s and 0% efficiency, exit 0.
  j = valid();
  for (auto& l : j["layers"]) l.update({{"forward_flops", 0}, {"params", 0}, {"in_elems", 0}, {"out_elems", 0}});
  expect_message(j, {"layers", "no layer has FLOPs, parameters or elements"});
}

TEST(WorkloadFile, UnknownCatalogNameListsTheCatalog) {
  try {
    (void)resolve_workload("resnet5");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_EQ(e.parameter(), "workload");
    const std::string what = e.what();
    EXPECT_NE(what.find("'resnet5'"), std::string::npos) << what;
    EXPECT_NE(what.find("resnet50"), std::string::npos) << what;
    EXPECT_NE(what.find("docs/workload-format.md"), std::string::npos) << what;
  }
}

// Files by path: the path is the name in every message.
class WorkloadFileOnDisk : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    dir_ = std::filesystem::temp_directory_path() / ("scalelab_workload_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const auto path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  static std::string what_of(const std::string& path) {
    try {
      (void)resolve_workload(path);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::input) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "no error for " << path;
    return {};
  }
  std::filesystem::path dir_;
};

TEST_F(WorkloadFileOnDisk, ValidFileLoadsByPath) {
  const auto path = write("tiny.json", valid().dump(1));
  EXPECT_EQ(resolve_workload(path).parameters(), 12u);
}

TEST_F(WorkloadFileOnDisk, BrokenJsonNamesTheFile) {
  const auto path = write("broken.json", "{\"format\": \"scalelab-workload/1\", ");
  const std::string what = what_of(path);
  EXPECT_TRUE(what.starts_with(path + ": not valid JSON")) << what;
}

TEST_F(WorkloadFileOnDisk, BadFieldNamesTheFileAndTheField) {
  json j = valid();
  j["layers"][1]["kind"] = "batchnorm";
  const auto path = write("kind.json", j.dump(1));
  const std::string what = what_of(path);
  EXPECT_TRUE(what.starts_with(path + ": layers[1] (bn1).kind: 'batchnorm' is not a layer kind")) << what;
}

TEST_F(WorkloadFileOnDisk, MissingFileNamesThePath) {
  const std::string what = what_of("/nonexistent/workload.json");
  EXPECT_NE(what.find("/nonexistent/workload.json: cannot read"), std::string::npos) << what;
}

TEST(LayerKinds, NamesReadBack) {
  for (LayerKind k : {LayerKind::conv, LayerKind::matmul, LayerKind::attention, LayerKind::norm, LayerKind::elementwise,
                      LayerKind::pool, LayerKind::embedding}) {
    EXPECT_EQ(parse_layer_kind(name_of(k)), k);
  }
  try {
    (void)parse_layer_kind("gemm");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("'gemm' is not a layer kind; use conv, matmul"), std::string::npos) << e.what();
  }
}


// A convolution's and a dense layer's product shape from the workload's own figures.
TEST(WorkloadFile, ProductShapesComeFromTheLayersFigures) {
  // 32 -> 64 channels, 3x3, 24x24 output, no bias: m 64, n 576, k 288.
  const WorkloadLayer conv{"c", LayerKind::conv, 2.0 * 64 * 576 * 288, 64 * 288, 32 * 26 * 26, 64 * 576, ""};
  const auto c = gemm_shape(conv, 128);
  ASSERT_TRUE(c.has_value());
  EXPECT_DOUBLE_EQ(c->m, 64);
  EXPECT_DOUBLE_EQ(c->n, 576);
  EXPECT_DOUBLE_EQ(c->k, 288);
  const WorkloadLayer dense{"d", LayerKind::matmul, 2.0 * 784 * 256, 784 * 256 + 256, 784, 256, "relu"};
  const auto d = gemm_shape(dense, 128);
  ASSERT_TRUE(d.has_value());
  EXPECT_DOUBLE_EQ(d->m, 128);
  EXPECT_DOUBLE_EQ(d->n, 256);
  EXPECT_DOUBLE_EQ(d->k, 784);
  EXPECT_FALSE(gemm_shape({"r", LayerKind::elementwise, 0, 0, 10, 10, ""}, 128).has_value());
  EXPECT_FALSE(gemm_shape({"p", LayerKind::conv, 0, 0, 10, 10, ""}, 128).has_value());  // no figures
}

}  // namespace
}  // namespace scalelab::sim
