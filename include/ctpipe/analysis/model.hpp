// ctpipe/analysis/model.hpp: a dense transformer's memory in bytes per pipeline rank,
// from the schedule's own timeline (docs/spec.md §3.1).
//
// transformer_model describes the model and its parallelism; layer_split gives each
// stage its layers; stage_activation_bytes() and stage_static_bytes() count one stage's
// bytes (Korthikanti et al. 2022 for the activations, Megatron-LM's 18 bytes per
// parameter for the weights, gradients and optimizer state); memory_of() weighs the
// in-flight activations of each rank, op by op in its list order, by their stages'
// bytes and returns each rank's peak plus its static bytes. Exact rationals throughout
// (tensor parallelism divides). Standard library only; constexpr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include "ctpipe/core/buffer.hpp"
#include "ctpipe/core/costs.hpp"
#include "ctpipe/core/error.hpp"
#include "ctpipe/core/rational.hpp"
#include "ctpipe/core/schedule.hpp"

namespace ctpipe {

namespace detail {
/// The product of whole numbers, overflow checked (rational::mul): a model's sizes
/// multiply into large counts, and an overflow must be an error, never a wrong value.
constexpr std::int64_t product(std::initializer_list<std::int64_t> factors) {
  std::int64_t out = 1;
  for (const std::int64_t x : factors) out = rational::mul(out, x);
  return out;
}
/// The checked sum of whole numbers (rational::add).
constexpr std::int64_t sum(std::initializer_list<std::int64_t> terms) {
  std::int64_t out = 0;
  for (const std::int64_t x : terms) out = rational::add(out, x);
  return out;
}
}  // namespace detail

/// What a backward recomputes instead of keeping (Korthikanti et al. 2022, §4-5).
enum class recompute_mode : std::uint8_t {
  none,       ///< every activation is kept
  selective,  ///< the attention core (softmax, its dropout and mask) is recomputed
  full,       ///< only each layer's input is kept; the backward runs the layer's forward again
};

/// A dense transformer and how it is parallelised besides the pipeline. Sizes are counts
/// (`seq` tokens, `micro_batch` sequences); activations are 16-bit (2 bytes), dropout
/// masks 1 byte, the loss's logits 32-bit. Checked by check_model().
struct transformer_model {
  std::int64_t layers = 0;         ///< L, transformer layers of the whole model
  std::int64_t hidden = 0;         ///< h
  std::int64_t heads = 0;          ///< a, attention heads (h divisible by a)
  std::int64_t kv_heads = 0;       ///< key/value heads (grouped-query attention); 0: a
  std::int64_t ffn = 0;            ///< FFN inner size; 0: 4h
  bool swiglu = false;             ///< SwiGLU FFN (three matrices) instead of GeLU (two)
  std::int64_t vocab = 0;          ///< v
  std::int64_t seq = 0;            ///< s, sequence length
  std::int64_t micro_batch = 1;    ///< b, sequences per micro-batch
  std::int64_t tp = 1;             ///< t, tensor-parallel size
  bool sequence_parallel = false;  ///< Megatron's sequence parallelism (with t > 1)
  recompute_mode recompute = recompute_mode::none;
  std::int64_t dp = 1;                 ///< d, data-parallel size
  bool distributed_optimizer = false;  ///< optimizer state sharded over the d data-parallel ranks
  bool tied_embeddings = false;        ///< the LM head reuses the input embedding's weights

  constexpr std::int64_t kv() const { return kv_heads == 0 ? heads : kv_heads; }
  constexpr std::int64_t ffn_size() const { return ffn == 0 ? 4 * hidden : ffn; }
  friend constexpr bool operator==(const transformer_model&, const transformer_model&) = default;
};

/// The gate on a model. Raises `ctpipe: a model needs layers, hidden, heads, vocab and
/// seq >= 1` (and micro_batch, tp, dp >= 1), `ctpipe: the model's hidden size must be a
/// multiple of its heads`, `ctpipe: the model's heads must be a multiple of its
/// key/value heads`, `ctpipe: the model's key/value heads must be a multiple of its
/// tensor-parallel size` (Megatron-LM splits whole heads over the t ranks).
constexpr void check_model(const transformer_model& m) {
  detail::require(m.layers >= 1 && m.hidden >= 1 && m.heads >= 1 && m.vocab >= 1 && m.seq >= 1 && m.micro_batch >= 1 &&
                      m.tp >= 1 && m.dp >= 1 && m.kv_heads >= 0 && m.ffn >= 0,
                  "ctpipe: a model needs layers, hidden, heads, vocab and seq >= 1 (and micro_batch, tp, dp >= 1)");
  detail::require(m.hidden % m.heads == 0, "ctpipe: the model's hidden size must be a multiple of its heads");
  detail::require(m.heads % m.kv() == 0, "ctpipe: the model's heads must be a multiple of its key/value heads");
  detail::require(m.kv() % m.tp == 0,
                  "ctpipe: the model's key/value heads must be a multiple of its tensor-parallel size");
}

/// Activation bytes one transformer layer keeps for one micro-batch until its backward.
/// The per-tensor accounting of Korthikanti et al. 2022, "Reducing Activation
/// Recomputation in Large Transformer Models", §4.1, with s, b, h, a, t as there:
/// - attention: the QKV input 2sbh, Q 2sbh, K and V 2sbh each scaled by kv/a (grouped
///   query attention keeps fewer), softmax output 2as²b, its dropout mask as²b, the
///   dropout output 2as²b, the output projection's input 2sbh, its dropout mask sbh;
/// - FFN of inner size f: GeLU, the input 2sbh, GeLU's input 2sbf and output 2sbf;
///   SwiGLU, the input 2sbh, the gate's pre-activation 2sbf, its SiLU 2sbf, the up
///   projection 2sbf and their product 2sbf; then the dropout mask sbh;
/// - two LayerNorm inputs, 4sbh.
/// With f = 4h, GeLU and kv = a this is Korthikanti's sbh(34 + 5as/h). Tensor
/// parallelism splits all but the 10sbh of the LayerNorms, dropout masks and linear
/// inputs (sbh(10 + 24/t + 5as/(ht))); sequence parallelism splits those too (/t);
/// selective recompute drops the 5as²b of the attention core (34sbh/t with sequence
/// parallelism); full recompute keeps the layer's input, 2sbh (2sbh/t with sequence
/// parallelism).
constexpr rational layer_activation_bytes(const transformer_model& m) {
  using detail::product;
  const std::int64_t s = m.seq, b = m.micro_batch, h = m.hidden, a = m.heads, f = m.ffn_size();
  const rational sbh{product({s, b, h})};
  const rational t{m.tp};
  if (m.recompute == recompute_mode::full) return m.sequence_parallel ? rational{2} * sbh / t : rational{2} * sbh;
  const rational attention_core =
      m.recompute == recompute_mode::selective ? rational{0} : rational{product({5, a, s, s, b})};
  const rational kv = rational{4} * sbh * rational{m.kv(), a};  // K and V
  const rational ffn{product({m.swiglu ? 8 : 4, s, b, f})};
  const rational replicated = rational{10} * sbh;  // LayerNorms, masks, linear inputs
  const rational split =
      rational{2} * sbh /* Q */ + kv + rational{2} * sbh /* out projection input */ + ffn + attention_core;
  if (m.sequence_parallel) return (replicated + split) / t;
  return replicated + split / t;
}

/// Parameters of one transformer layer: Q and the output projection h² each, K and V
/// h²·kv/a each, the FFN 2hf (GeLU) or 3hf (SwiGLU), two norms 2h each (Megatron-LM's
/// compute_weight_and_optimizer_memory, with LayerNorm's bias).
constexpr std::int64_t layer_parameters(const transformer_model& m) {
  using detail::product;
  const std::int64_t h = m.hidden;
  return detail::sum({product({2, h, h}), product({2, h, h / m.heads * m.kv()}),
                      product({m.swiglu ? 3 : 2, h, m.ffn_size()}), product({4, h})});
}

/// Bytes of weights, gradients and optimizer state per parameter, with mixed-precision
/// Adam: 18 (Megatron-LM: 2 + 4 for the 16-bit weight and 32-bit gradient, 12 for the
/// 32-bit master weight and Adam's two moments), or 6 + 12/d with the distributed
/// optimizer over d data-parallel ranks.
constexpr rational bytes_per_parameter(const transformer_model& m) {
  return m.distributed_optimizer ? rational{6} + rational{12, m.dp} : rational{18};
}

/// Whether stage `s` of `shape` is the first (it holds the input embedding) or the last
/// (the LM head and the loss) stage of its pipeline: stage 0 and S-1, and on the
/// bidirectional placement (DualPipe's two model copies) also P-1 and P, each copy a
/// whole model of its own.
struct stage_role {
  bool first = false;
  bool last = false;
};
constexpr stage_role role_of(const pipeline_shape& shape, int s) {
  const int S = shape.stages();
  const bool two = shape.layout == placement::bidirectional;
  return {s == 0 || (two && s == shape.P), s == S - 1 || (two && s == shape.P - 1)};
}

/// The stages one model copy spans: S, or P on the bidirectional placement (two copies).
constexpr int copy_stages(const pipeline_shape& shape) {
  return shape.layout == placement::bidirectional ? shape.P : shape.stages();
}

/// Stage `s`'s role: `roles[s]` when `roles` is given (S entries: a Megatron-LM layout's
/// stages, whose embedding E and loss L may sit on any stage), else role_of(shape, s).
constexpr stage_role role_at(const pipeline_shape& shape, std::span<const stage_role> roles, int s) {
  return roles.empty() ? role_of(shape, s) : roles[static_cast<std::size_t>(s)];
}

/// The layers of stage `s` of `S` under the even split of `layers` (docs/spec.md §3.1):
/// every stage L/S, and the L mod S extra ones to the stages from 1 on (the first and
/// last carry the embedding and the head). Raises `ctpipe: the model needs at least one
/// layer per stage (L >= S)`.
constexpr std::int64_t even_split(std::int64_t layers, int S, int s) {
  detail::require(layers >= S, "ctpipe: the model needs at least one layer per stage (L >= S)");
  const std::int64_t extra = layers % S;
  return layers / S + (s >= 1 && s <= extra ? 1 : 0);
}

/// Activation bytes stage `s` of `S` keeps for one micro-batch: its layers', plus on the
/// first stage the token ids 8sb (64-bit) and the embedding's dropout mask sbh (/t with
/// sequence parallelism; Megatron-LM's compute_activation_memory counts both), plus on
/// the last the final LayerNorm's input 2sbh and the head's input 2sbh (/t with sequence
/// parallelism) and the loss's 32-bit logits 4sbv/t (Korthikanti et al. 2022, §4.3).
constexpr rational stage_activation_bytes(const transformer_model& m, std::int64_t layers, stage_role role) {
  using detail::product;
  const rational sbh{product({m.seq, m.micro_batch, m.hidden})};
  const rational t{m.tp};
  const rational spread = m.sequence_parallel ? t : rational{1};
  rational out = rational{layers} * layer_activation_bytes(m);
  if (role.first) out = out + rational{product({8, m.seq, m.micro_batch})} + sbh / spread;
  if (role.last) out = out + rational{4} * sbh / spread + rational{product({4, m.seq, m.micro_batch, m.vocab})} / t;
  return out;
}

/// stage_activation_bytes() of stage `s` of `S` stages of one pipeline (the first is 0,
/// the last S-1).
constexpr rational stage_activation_bytes(const transformer_model& m, std::int64_t layers, int s, int S) {
  return stage_activation_bytes(m, layers, stage_role{s == 0, s == S - 1});
}

/// Weight, gradient and optimizer bytes of stage `s` of `S`: its layers' parameters, the
/// input embedding vh on the first stage, the head vh on the last (none when tied and
/// the two are one stage) and its final norm 2h, over t, times bytes_per_parameter().
constexpr rational stage_static_bytes(const transformer_model& m, std::int64_t layers, stage_role role) {
  std::int64_t params = rational::mul(layers, layer_parameters(m));
  const std::int64_t embedding = rational::mul(m.vocab, m.hidden);
  if (role.first) params = rational::add(params, embedding);
  if (role.last) params = detail::sum({params, 2 * m.hidden, m.tied_embeddings && role.first ? 0 : embedding});
  return rational{params, m.tp} * bytes_per_parameter(m);
}

/// stage_static_bytes() of stage `s` of `S` stages of one pipeline.
constexpr rational stage_static_bytes(const transformer_model& m, std::int64_t layers, int s, int S) {
  return stage_static_bytes(m, layers, stage_role{s == 0, s == S - 1});
}

/// memory_of()'s result: per rank its static bytes and its peak bytes (static plus the
/// most activation bytes it holds at once), exact; ranks 0 .. P-1.
class model_memory {
 public:
  constexpr model_memory() = default;
  constexpr rational static_bytes(int r) const { return static_[static_cast<std::size_t>(r)]; }
  constexpr rational peak_bytes(int r) const { return peak_[static_cast<std::size_t>(r)]; }
  constexpr int ranks() const { return static_cast<int>(static_.size()); }

 private:
  friend constexpr model_memory memory_of(schedule_view, const transformer_model&, std::span<const std::int64_t>,
                                          rational, std::span<const rational>, std::span<const stage_role>);
  detail::buffer<rational> static_, peak_;
};

/// The memory of every rank of schedule `v` for `model` with `layers` per stage (S
/// entries; on the bidirectional placement each copy's P entries are a whole model:
/// role_of()) and micro-batch factors `microbatch` (m entries, or none: a factor scales
/// that micro-batch's activation bytes in proportion, docs/spec.md §2.2): each rank runs
/// its list in order; an F (or an overlapped pair's word) adds its stage's activation
/// bytes times its micro-batch's factor, a B frees them, an I frees (1 - gamma) of them
/// and a W gamma (docs/spec.md §3); the peak over the list plus the rank's stages' static
/// bytes. Linear in the number of ops. A micro-batch factor of m entries (or none);
/// `roles` (S entries, or none for role_of()) says which stages hold the embedding and
/// the loss (a Megatron-LM layout); with it a stage may hold 0 layers (Megatron's empty
/// stages). `microbatch`, `layers` and `roles` are read during the call only. Raises
/// check_view(), check_gamma(), check_model() messages and `ctpipe: the layer split needs
/// one entry per stage, each >= 1` (>= 0 with `roles`; `roles` of another length too).
constexpr model_memory memory_of(schedule_view v, const transformer_model& model, std::span<const std::int64_t> layers,
                                 rational gamma, std::span<const rational> microbatch = {},
                                 std::span<const stage_role> roles = {}) {
  check_view(v);
  check_gamma(gamma);
  check_model(model);
  const int S = v.shape.stages();
  detail::require(layers.size() == static_cast<std::size_t>(S) && (roles.empty() || roles.size() == layers.size()),
                  "ctpipe: the layer split needs one entry per stage, each >= 1");
  const std::int64_t least = roles.empty() ? 1 : 0;
  detail::buffer<rational> weight(static_cast<std::size_t>(S));
  model_memory out;
  out.static_ = detail::buffer<rational>(static_cast<std::size_t>(v.shape.P));
  out.peak_ = detail::buffer<rational>(static_cast<std::size_t>(v.shape.P));
  for (int s = 0; s < S; ++s) {
    detail::require(layers[static_cast<std::size_t>(s)] >= least,
                    "ctpipe: the layer split needs one entry per stage, each >= 1");
    const stage_role role = role_at(v.shape, roles, s);
    weight[static_cast<std::size_t>(s)] = stage_activation_bytes(model, layers[static_cast<std::size_t>(s)], role);
    const std::size_t r = static_cast<std::size_t>(v.shape.rank_of(s));
    out.static_[r] = out.static_[r] + stage_static_bytes(model, layers[static_cast<std::size_t>(s)], role);
  }
  const rational share[4] = {rational{1}, rational{-1}, gamma - rational{1}, -gamma};  // F, B, I, W
  for (int r = 0; r < v.shape.P; ++r) {
    rational now{0}, peak{0};
    for (const op o : v.rank(r)) {
      const int kind = o.kind() == op_kind::overlap_f_b ? 0 : static_cast<int>(o.kind());
      if (kind > 3) continue;
      const rational factor = microbatch.empty() ? rational{1} : microbatch[static_cast<std::size_t>(o.microbatch())];
      now = now + share[kind] * weight[static_cast<std::size_t>(o.stage())] * factor;
      peak = max(peak, now);
    }
    out.peak_[static_cast<std::size_t>(r)] = out.static_[static_cast<std::size_t>(r)] + peak;
  }
  return out;
}

/// Forward FLOPs of `layers` transformer layers of `m` for one micro-batch, plus the LM
/// head's on a pipeline's last stage (`last`), in units of 2bsh FLOPs (exact):
/// per layer QKV h + 2h·kv/a, attention scores and values 2s, output projection h, FFN
/// 2f (GeLU) or 3f (SwiGLU); the head v. For the GPT layer, 2bsh(12h + 2s) = 24bsh² +
/// 4bs²h: Narayanan et al. 2021 (SC'21), §5.1. The input embedding, norms and softmax
/// are not counted.
constexpr std::int64_t stage_forward_flops(const transformer_model& m, std::int64_t layers, bool last) {
  const std::int64_t h = m.hidden;
  const std::int64_t layer = detail::sum({2 * h, rational::mul(2, h / m.heads * m.kv()), rational::mul(2, m.seq),
                                          rational::mul(m.swiglu ? 3 : 2, m.ffn_size())});
  return rational::add(rational::mul(layers, layer), last ? m.vocab : 0);
}

/// The op costs a model gives, in units of one rank's average forward (t_f = 1;
/// docs/memory.md): one layer's forward is matmuls M and the attention core C (c =
/// C/(M+C) = 2s / stage_forward_flops() of one layer); a backward is twice the forward,
/// B = 2; its weight gradient W = M, so t_w = 1 - c, and its input gradient the rest,
/// t_i = 1 + c. Recompute runs forwards again in the backward: full recompute adds t_f to
/// t_b and t_i, selective the attention core's c. t_c = 0 (the tool adds the link's).
constexpr costs model_costs(const transformer_model& m) {
  const rational c{rational::mul(2, m.seq), stage_forward_flops(m, 1, false)};
  const rational again = m.recompute == recompute_mode::full        ? rational{1}
                         : m.recompute == recompute_mode::selective ? c
                                                                    : rational{0};
  costs out{};
  out.f = rational{1};
  out.b = rational{2} + again;
  out.i = rational{1} + c + again;
  out.w = rational{1} - c;
  out.c = rational{0};
  return out;
}

/// The forward FLOPs of every stage of `shape` under `layers` per stage (S entries), in
/// units of 2bsh: stage_forward_flops() with the head on each pipeline's last stage
/// (role_of(), or `roles` when given: role_at()). Linear in S.
constexpr std::int64_t model_forward_flops(const transformer_model& m, const pipeline_shape& shape,
                                           std::span<const std::int64_t> layers,
                                           std::span<const stage_role> roles = {}) {
  std::int64_t total = 0;
  for (std::size_t s = 0; s < layers.size(); ++s) {
    total = rational::add(total, stage_forward_flops(m, layers[s], role_at(shape, roles, static_cast<int>(s)).last));
  }
  return total;
}

/// Every stage's factor (cost_scale) under `layers` per stage (S entries) of `shape`,
/// written to `out` (S entries): its forward FLOPs over an average stage's
/// (model_forward_flops() / S), so that the op (kind, s, j) of model_costs() lasts its
/// stage's share of the work; the S factors sum to S. With `roles` (role_at()) the head
/// is on the stage holding the loss; a stage with no layer and no head (a Megatron-LM
/// layout's empty or embedding-only stage) gets the factor 0, which check_scale()
/// admits. Linear in S.
constexpr void model_stage_factors(const transformer_model& m, const pipeline_shape& shape,
                                   std::span<const std::int64_t> layers, std::span<rational> out,
                                   std::span<const stage_role> roles = {}) {
  const std::int64_t total = model_forward_flops(m, shape, layers, roles);
  const std::int64_t S = static_cast<std::int64_t>(layers.size());
  for (std::size_t s = 0; s < layers.size(); ++s) {
    out[s] = rational{
        rational::mul(stage_forward_flops(m, layers[s], role_at(shape, roles, static_cast<int>(s)).last), S), total};
  }
}

/// Bytes of one point-to-point message (an activation or its gradient between stages):
/// 2sbh, over t (each tensor-parallel rank sends its part: Megatron-LM's scatter-gather,
/// or sequence parallelism).
constexpr rational message_bytes(const transformer_model& m) {
  return rational{detail::product({2, m.seq, m.micro_batch, m.hidden}), m.tp};
}

/// A public dense model with its published shape (micro-batch 1, no tensor or data
/// parallelism, no recompute: set those for a run).
struct model_preset {
  const char* name;    ///< as `--model NAME` takes it
  const char* source;  ///< where each number comes from
  transformer_model model;
};

/// The presets of `--model NAME`.
inline constexpr model_preset model_presets[] = {
    {"gpt3-175b",
     "Brown et al. 2020, Language Models are Few-Shot Learners, Table 2.1 (96 layers, d_model 12288, 96 heads, "
     "context 2048; FFN 4 d_model, GeLU); vocabulary 50257, GPT-2's byte-level BPE (Radford et al. 2019)",
     {96, 12288, 96, 0, 0, false, 50257, 2048}},
    {"llama2-7b",
     "Touvron et al. 2023, Llama 2: Open Foundation and Fine-Tuned Chat Models, Table 1 and the released "
     "config.json (32 layers, hidden 4096, 32 heads, FFN 11008 SwiGLU, vocabulary 32000, context 4096)",
     {32, 4096, 32, 0, 11008, true, 32000, 4096}},
    {"llama2-70b",
     "Touvron et al. 2023, Llama 2, Table 1 and the released config.json (80 layers, hidden 8192, 64 heads, "
     "8 key/value heads, FFN 28672 SwiGLU, vocabulary 32000, context 4096)",
     {80, 8192, 64, 8, 28672, true, 32000, 4096}},
};

/// The preset called `name`, or nullptr.
constexpr const model_preset* find_model_preset(std::string_view name) {
  for (const model_preset& p : model_presets) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

}  // namespace ctpipe
