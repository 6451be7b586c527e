// The workload catalog against published figures: parameter counts exactly where torchvision
// publishes them, BERT-large and GPT-2 XL derived here from their architecture formulas (and
// within 1% of the papers' rounded figures), ResNet-50's forward cost, and the committed files
// equal to what the generator (tools/workloads) writes.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/workload.h"
#include "workloads/networks.h"

namespace scalelab::sim {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(WorkloadCatalog, HoldsTheCoursesNetworksAndEveryOneLoads) {
  const std::vector<std::string> expected = {"alexnet", "bert_large_128", "bert_large_512", "cnn",        "googlenet",
                                             "gpt2_xl", "inception_v3",   "mlp",            "resnet",     "resnet101",
                                             "resnet152", "resnet50",     "trivial",        "vgg16"};
  EXPECT_EQ(workload_names(), expected);
  for (const auto& name : workload_names()) {
    SCOPED_TRACE(name);
    const Workload w = resolve_workload(name);
    EXPECT_EQ(w.name, name);
    EXPECT_FALSE(w.title.empty());
    EXPECT_FALSE(w.sources.empty());
    EXPECT_GT(w.encoded_sample_bytes, 0);
    ASSERT_FALSE(w.layers.empty());
    EXPECT_GT(w.forward_flops(), 0);
    EXPECT_GT(w.parameters(), 0u);
    // The first layer reads one sample: the image's pixels or the sequence's token ids.
    double sample = 1;
    for (auto d : w.input_shape) sample *= double(d);
    EXPECT_EQ(w.layers.front().in_elems, sample);
  }
}

TEST(WorkloadCatalog, TorchvisionParameterCountsAreExact) {
  EXPECT_EQ(resolve_workload("resnet50").parameters(), 25'557'032u);
  EXPECT_EQ(resolve_workload("resnet101").parameters(), 44'549'160u);
  EXPECT_EQ(resolve_workload("resnet152").parameters(), 60'192'808u);
  EXPECT_EQ(resolve_workload("vgg16").parameters(), 138'357'544u);
  EXPECT_EQ(resolve_workload("alexnet").parameters(), 61'100'840u);
  EXPECT_EQ(resolve_workload("googlenet").parameters(), 6'624'904u);  // without the auxiliary classifiers
  EXPECT_EQ(resolve_workload("inception_v3").parameters(), 23'834'568u);  // the catalog's: without AuxLogits
  EXPECT_EQ(workloads::inception_v3(true).parameters(), 27'161'264u);     // torchvision's default, with it
}

// BertModel: embeddings (word, position, token type, LayerNorm), 24 layers of self-attention
// (Q, K, V, output: H x H + H each), LayerNorm, FFN (H x F + F, F x H + H), LayerNorm; the pooler.
TEST(WorkloadCatalog, BertLargeEqualsItsArchitectureFormula) {
  const std::size_t L = 24, H = 1024, F = 4096, V = 30522, P = 512;
  const std::size_t embeddings = V * H + P * H + 2 * H + 2 * H;
  const std::size_t layer = 4 * (H * H + H) + 2 * H + (H * F + F) + (F * H + H) + 2 * H;
  const std::size_t pooler = H * H + H;
  const std::size_t formula = embeddings + L * layer + pooler;
  for (const char* name : {"bert_large_128", "bert_large_512"}) {
    EXPECT_EQ(resolve_workload(name).parameters(), formula) << name;
  }
  EXPECT_NEAR(double(formula), 335e6, 0.01 * 335e6);  // "BERT-large ~335M"
}

// GPT2LMHeadModel: token and position embeddings, 48 blocks (ln_1, c_attn H x 3H + 3H, c_proj
// H x H + H, ln_2, c_fc H x 4H + 4H, c_proj 4H x H + H), ln_f; the LM head shares wte.
TEST(WorkloadCatalog, Gpt2XlEqualsItsArchitectureFormula) {
  const std::size_t L = 48, H = 1600, V = 50257, C = 1024;
  const std::size_t block = 2 * H + (H * 3 * H + 3 * H) + (H * H + H) + 2 * H + (H * 4 * H + 4 * H) + (4 * H * H + H);
  const std::size_t formula = V * H + C * H + L * block + 2 * H;
  EXPECT_EQ(resolve_workload("gpt2_xl").parameters(), formula);
  EXPECT_NEAR(double(formula), 1558e6, 0.01 * 1558e6);  // "GPT-2 XL 1,558M"
}

// He et al. (Table 1) and torchvision's model table give ResNet-50 as about 4.1 billion
// multiply-adds per 224x224 image (torchvision: "GFLOPS 4.09", counting a multiply-add once);
// the catalog counts a multiply-add as 2 FLOPs, so its forward is about 8.2 GFLOP.
TEST(WorkloadCatalog, ResNet50ForwardIsAbout4Point1BillionMultiplyAdds) {
  const double multiply_adds = resolve_workload("resnet50").forward_flops() / 2;
  EXPECT_NEAR(multiply_adds, 4.1e9, 0.05 * 4.1e9);
}

TEST(WorkloadCatalog, SequencesStoreFourByteTokenIds) {
  EXPECT_EQ(resolve_workload("bert_large_128").encoded_sample_bytes, 4 * 128);
  EXPECT_EQ(resolve_workload("bert_large_512").encoded_sample_bytes, 4 * 512);
  EXPECT_EQ(resolve_workload("gpt2_xl").encoded_sample_bytes, 4 * 1024);
}

// The committed files are the generator's output, byte for byte, and the compiled-in catalog
// reads back the same workloads.
TEST(WorkloadCatalog, CommittedFilesEqualTheGeneratorsOutput) {
  const auto generated = workloads::catalog_workloads();
  ASSERT_EQ(generated.size(), workload_names().size());
  for (const Workload& g : generated) {
    SCOPED_TRACE(g.name);
    const std::string path = std::string(SCALELAB_WORKLOADS_DIR) + "/" + g.name + ".json";
    EXPECT_EQ(read_text(path), workloads::workload_file_text(g))
        << path << " differs from the generator's output; run make_workloads data/workloads";
    EXPECT_EQ(to_json(resolve_workload(g.name)), to_json(g));
  }
}

TEST(WorkloadCatalog, ToJsonReadsBackUnchanged) {
  for (const auto& name : workload_names()) {
    const Workload w = resolve_workload(name);
    EXPECT_EQ(to_json(workload_from_json(to_json(w), name)), to_json(w)) << name;
  }
}

}  // namespace
}  // namespace scalelab::sim
