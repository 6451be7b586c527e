// The catalog's transformers (see networks.h), one entry per projection, attention, norm and
// elementwise step, named as the Hugging Face implementations name their modules.
#include "workloads/builder.h"
#include "workloads/networks.h"

namespace scalelab::workloads {

sim::Workload bert_large(std::size_t seq) {
  constexpr std::size_t kLayers = 24, kHidden = 1024, kHeads = 16, kFfn = 4096, kVocab = 30522, kPositions = 512;
  const std::string s = std::to_string(seq);
  sim::Workload w;
  w.name = "bert_large_" + s;
  w.title = "BERT-large encoder with pooler (no pre-training heads), sequence " + s;
  w.unit = "sequences";
  w.input_shape = {seq};
  w.encoded_sample_bytes = 4.0 * double(seq);  // int32 token ids
  w.sources = {"Devlin et al. 2019, BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding "
               "(NAACL): BERT-large, L=24, H=1024, A=16, 340M parameters",
               "Hugging Face bert-large-uncased config.json (hidden_size 1024, intermediate_size 4096, "
               "max_position_embeddings 512, type_vocab_size 2, vocab_size 30522)",
               "transformers/models/bert/modeling_bert.py (BertModel: embeddings, encoder, pooler)"};
  Builder b(w);
  const std::size_t n = seq * kHidden;
  b.embedding("embeddings.word_embeddings", kVocab, kHidden, seq);
  b.embedding("embeddings.position_embeddings", kPositions, kHidden, seq);
  b.embedding("embeddings.token_type_embeddings", 2, kHidden, seq);
  b.token_elementwise("embeddings.add", n, 3);
  b.layer_norm("embeddings.LayerNorm", seq, kHidden);
  b.token_elementwise("embeddings.dropout", n);
  for (std::size_t l = 0; l < kLayers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    b.token_matmul(p + "attention.self.query", seq, kHidden, kHidden);
    b.token_matmul(p + "attention.self.key", seq, kHidden, kHidden);
    b.token_matmul(p + "attention.self.value", seq, kHidden, kHidden);
    b.attention(p + "attention.self.attention", seq, kHidden, kHeads);
    b.token_matmul(p + "attention.output.dense", seq, kHidden, kHidden);
    b.token_elementwise(p + "attention.output.dropout", n);
    b.token_elementwise(p + "attention.output.add", n, 2);
    b.layer_norm(p + "attention.output.LayerNorm", seq, kHidden);
    b.token_matmul(p + "intermediate.dense", seq, kHidden, kFfn);
    b.token_elementwise(p + "intermediate.gelu", seq * kFfn);
    b.token_matmul(p + "output.dense", seq, kFfn, kHidden);
    b.token_elementwise(p + "output.dropout", n);
    b.token_elementwise(p + "output.add", n, 2);
    b.layer_norm(p + "output.LayerNorm", seq, kHidden);
  }
  b.token_matmul("pooler.dense", 1, kHidden, kHidden);  // the first token only
  b.token_elementwise("pooler.tanh", kHidden);
  return w;
}

sim::Workload gpt2_xl() {
  constexpr std::size_t kLayers = 48, kHidden = 1600, kHeads = 25, kContext = 1024, kVocab = 50257;
  sim::Workload w;
  w.name = "gpt2_xl";
  w.title = "GPT-2 XL (1.5B), context 1024, LM head tied to the token embedding";
  w.unit = "sequences";
  w.input_shape = {kContext};
  w.encoded_sample_bytes = 4.0 * kContext;  // int32 token ids
  w.sources = {"Radford et al. 2019, Language Models are Unsupervised Multitask Learners (OpenAI): 48 layers, "
               "d_model 1600, 1542M parameters as counted there",
               "Hugging Face gpt2-xl config.json (n_layer 48, n_embd 1600, n_head 25, n_ctx 1024, n_positions 1024, "
               "vocab_size 50257)",
               "transformers/models/gpt2/modeling_gpt2.py (GPT2LMHeadModel: lm_head tied to wte)"};
  Builder b(w);
  const std::size_t seq = kContext, n = seq * kHidden;
  b.embedding("transformer.wte", kVocab, kHidden, seq);
  b.embedding("transformer.wpe", kContext, kHidden, seq);
  b.token_elementwise("transformer.add", n, 2);
  b.token_elementwise("transformer.drop", n);
  for (std::size_t l = 0; l < kLayers; ++l) {
    const std::string p = "transformer.h." + std::to_string(l) + ".";
    b.layer_norm(p + "ln_1", seq, kHidden);
    b.token_matmul(p + "attn.c_attn", seq, kHidden, 3 * kHidden);
    b.attention(p + "attn.attention", seq, kHidden, kHeads);
    b.token_matmul(p + "attn.c_proj", seq, kHidden, kHidden);
    b.token_elementwise(p + "attn.resid_dropout", n);
    b.token_elementwise(p + "add_1", n, 2);
    b.layer_norm(p + "ln_2", seq, kHidden);
    b.token_matmul(p + "mlp.c_fc", seq, kHidden, 4 * kHidden);
    b.token_elementwise(p + "mlp.gelu", seq * 4 * kHidden);
    b.token_matmul(p + "mlp.c_proj", seq, 4 * kHidden, kHidden);
    b.token_elementwise(p + "mlp.dropout", n);
    b.token_elementwise(p + "add_2", n, 2);
  }
  b.layer_norm("transformer.ln_f", seq, kHidden);
  b.token_matmul("lm_head", seq, kHidden, kVocab, false, true);  // weights shared with wte: no parameters of its own
  return w;
}

}  // namespace scalelab::workloads
