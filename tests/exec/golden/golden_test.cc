// The CPU executor against PyTorch. tools/pytorch_golden.py built fashion-vgg in PyTorch with
// the executor's initial weights (exec/runtime/parameter_init.cc), its dropout masks
// (exec/kernels/dropout_mask.h) and the batch formula of FormulaBatch below, ran 3 steps of
// torch.optim.SGD, and wrote fashion_vgg_golden.json. Here the same net runs through the real
// runtime (plans::build_plan -> exec::Trainer -> the oneDNN backend, 1 rank, data parallel) and
// must agree in fp32 within rtol 1e-4:
//   - the initial parameters, exactly (both sides compute them in float64 and round once);
//   - the gradient of every parameter at step 1, before the update: its sum, sum of squares and
//     32 sampled elements;
//   - the loss of each of the 3 steps (so the momentum update and steps 2-3 are covered too).
//
// Reading the step-1 gradients needs no extra API: the trainer zeroes its gradients after the
// optimizer step, but SGD's momentum buffer starts at the gradient (torch's rule, kept by
// exec/runtime/optimizer.cc: buf_1 = g_1 + weight_decay * p, weight_decay = 0 here), so after
// step 1 optimizer().first_moments()[i] IS the step-1 gradient of parameter i, bit for bit.
// Parameters are registered in layer order, weight (0) before bias (1).
//
// The same test checks the tiny GPT of tools/pytorch_golden_gpt.py (gpt_golden.json, given with
// --golden FILE): token sequences (exec/data/token_sequences.h) in place of the image formula,
// and the output head tied to the token embedding (the table's gradient is the sum of both uses);
// and the small Llama of tools/pytorch_golden_llama.py (llama_golden.json) on the same sequences.
// With --context N (under mpirun -np N) every layer splits the sequence over a `context` axis of N
// ranks, attention's queries included (context parallelism): the parameters stay whole on every
// rank, so the same checks apply on each.

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exec/comm/mesh_communicators.h"
#include "exec/comm/mpi_process.h"
#include "exec/cpu/cpu_backend.h"
#include "exec/data/token_sequences.h"
#include "exec/runtime/batch_source.h"
#include "exec/runtime/trainer.h"
#include "model/dtype.h"
#include "plans/op_sharding.h"
#include "plans/plan_builder.h"
#include "tests/support/test_plans.h"

namespace {

using splitbrain::exec::BatchSource;
using splitbrain::exec::Trainer;
using Json = nlohmann::json;

constexpr double kRelative = 1e-4;  // fp32 against fp32: different kernels, different sum orders
constexpr double kAbsolute = 1e-6;  // floor for values near zero (cancellation in a sum)

std::string golden_path = SPLITBRAIN_GOLDEN_FILE;  // --golden FILE
int context_ranks = 1;                             // --context N

Json load_golden() {
  std::ifstream in(golden_path);
  if (!in) throw std::runtime_error("cannot open " + golden_path);
  return Json::parse(in);
}

// The batch of tools/pytorch_golden.py's batch(): evaluated in double, rounded to float once.
//   image[i][0][h][w] = 0.5 sin(0.37 i + 0.11 h + 0.07 w + 0.5 step) + 0.25 cos(0.05 h w)
//   label[i] = (3 i + step) % 10
class FormulaBatch final : public BatchSource {
 public:
  void images(int64_t step, int64_t first, int64_t count, float* out) override {
    for (int64_t i = first; i < first + count; ++i) {
      for (int64_t h = 0; h < 28; ++h) {
        for (int64_t w = 0; w < 28; ++w) {
          const double x = 0.5 * std::sin(0.37 * static_cast<double>(i) + 0.11 * static_cast<double>(h) +
                                          0.07 * static_cast<double>(w) + 0.5 * static_cast<double>(step)) +
                           0.25 * std::cos(0.05 * static_cast<double>(h * w));
          *out++ = static_cast<float>(x);
        }
      }
    }
  }
  std::vector<int32_t> labels(int64_t step, int64_t first, int64_t count) override {
    std::vector<int32_t> result;
    for (int64_t i = first; i < first + count; ++i) result.push_back(static_cast<int32_t>((3 * i + step) % 10));
    return result;
  }
};

// Token models read the token sequences the GPT script reproduces, seeded as the golden file says.
class TokenBatch final : public BatchSource {
 public:
  TokenBatch(int64_t vocab, int64_t positions, uint64_t seed) : sequences_({vocab, positions, seed}) {}
  void images(int64_t step, int64_t first, int64_t count, float* out) override {
    sequences_.inputs(step, first, count, out);
  }
  std::vector<int32_t> labels(int64_t step, int64_t first, int64_t count) override {
    return sequences_.labels(step, first, count);
  }

 private:
  splitbrain::exec::data::TokenSequences sequences_;
};

// Every layer that can split its positions does, over the mesh's one axis; the rest replicate.
splitbrain::plans::LayerSharding sequence_on_first_axis(const splitbrain::model::Layer& layer) {
  splitbrain::plans::LayerSharding sharding;
  if (splitbrain::plans::role_allowed(layer, splitbrain::plans::ShardRole::spatial)) sharding.spatial = {0};
  return sharding;
}

// A plan of the golden file's model with the golden file's batch and SGD settings: data parallel
// on 1 rank, or the sequence split over `context_ranks`.
splitbrain::plans::Plan golden_plan(const Json& golden) {
  using splitbrain::plans::LayerSharding;
  const std::string model = golden.at("model").get<std::string>();
  const int64_t batch = golden.at("batch").get<int64_t>();
  splitbrain::plans::Plan plan =
      context_ranks > 1 ? splitbrain::plans::build_plan(model, splitbrain::plans::Mesh({{"context", context_ranks}}),
                                                        batch, sequence_on_first_axis)
                        : splitbrain::plans::build_plan(model, splitbrain::plans::Mesh({{"data", 1}}), batch,
                                                        splitbrain::testing_support::batch_on_first_axis);
  plan.optimizer.kind = splitbrain::plans::OptimizerKind::sgd_momentum;
  plan.optimizer.learning_rate = golden.at("learning_rate").get<double>();
  plan.optimizer.momentum = golden.at("momentum").get<double>();
  plan.optimizer.weight_decay = 0.0;
  // A bf16 golden (tools/pytorch_golden_gpt_bf16.py) is PyTorch's emulation of the executor's.
  if (golden.contains("dtype")) plan.dtype = splitbrain::model::parse_dtype(golden.at("dtype").get<std::string>());
  return plan;
}

// One parameter tensor of the run, flattened, with its golden name ("conv1.weight").
struct Tensor {
  std::string name;
  int layer = 0;
  std::vector<float> values;
};

// A parameter tensor's golden name: "<layer>.weight" and "<layer>.bias", or "<layer>.<k>" for a
// layer with more than two tensors (a mixture of experts' router and experts).
std::string golden_name(const std::string& layer, size_t k, size_t tensors) {
  if (tensors > 2) return layer + "." + std::to_string(k);
  return layer + (k == 0 ? ".weight" : ".bias");
}

// The run's parameters (or, with `moments`, their momentum buffers) in registration order.
std::vector<Tensor> tensors(Trainer& trainer, const splitbrain::model::Model& net, bool moments) {
  std::vector<Tensor> out;
  size_t registered = 0;
  for (int v = 0; v < net.size(); ++v) {
    const auto& values = trainer.parameters()[static_cast<size_t>(v)].values;
    for (size_t k = 0; k < values.size(); ++k, ++registered) {
      Tensor t;
      t.name = golden_name(net.layer(v).name, k, values.size());
      t.layer = v;
      t.values = splitbrain::exec::host_copy(
          trainer.device().host_link(), moments ? *trainer.optimizer().first_moments().at(registered) : *values[k]);
      out.push_back(std::move(t));
    }
  }
  return out;
}

// The largest |actual - expected| / tolerance seen (printed: how much margin the run has).
double worst_ratio = 0.0;

// |actual - expected| <= rtol * scale + atol, with the numbers in the failure message.
void expect_close(double actual, double expected, double scale, const std::string& what, double rtol = kRelative,
                  double atol = kAbsolute) {
  const double tolerance = rtol * std::abs(scale) + atol;
  if (tolerance > 0) worst_ratio = std::max(worst_ratio, std::abs(actual - expected) / tolerance);
  EXPECT_LE(std::abs(actual - expected), tolerance)
      << what << ": splitbrain " << actual << ", PyTorch " << expected << " (tolerance " << tolerance << ")";
}

// Checks one tensor against a golden summary {shape, sum, sum_abs, sum_of_squares, samples}.
// The sum may cancel to near zero (fc2's bias gradient sums to 0 exactly in real arithmetic),
// so its tolerance scales with the sum of absolute values: elements each within rtol give a
// sum within rtol * sum|x|. Sums are taken in double, as the script does.
void expect_matches(const Tensor& t, const Json& summary, double rtol, double atol, bool samples = true) {
  int64_t elements = 1;
  for (const Json& d : summary.at("shape")) elements *= d.get<int64_t>();
  ASSERT_EQ(static_cast<int64_t>(t.values.size()), elements) << t.name << ": element count";
  double sum = 0.0, sum_abs = 0.0, sum_of_squares = 0.0;
  for (float x : t.values) {
    sum += x;
    sum_abs += std::abs(static_cast<double>(x));
    sum_of_squares += static_cast<double>(x) * x;
  }
  const double golden_sum_abs = summary.at("sum_abs").get<double>();
  const double golden_squares = summary.at("sum_of_squares").get<double>();
  expect_close(sum, summary.at("sum").get<double>(), golden_sum_abs, t.name + " sum", rtol, atol);
  expect_close(sum_abs, golden_sum_abs, golden_sum_abs, t.name + " sum_abs", rtol, atol);
  // A square doubles the relative error of its element, hence 2 rtol; no absolute floor, so a
  // tensor of tiny values is still compared.
  expect_close(sum_of_squares, golden_squares, golden_squares, t.name + " sum_of_squares", 2 * rtol, 0.0);
  if (!samples) return;
  for (const Json& sample : summary.at("samples")) {
    const auto index = sample.at(0).get<size_t>();
    ASSERT_LT(index, t.values.size()) << t.name;
    const double expected = sample.at(1).get<double>();
    expect_close(t.values[index], expected, expected, t.name + "[" + std::to_string(index) + "]", rtol, atol);
  }
}

class GoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    golden_ = load_golden();
    plan_ = std::make_unique<splitbrain::plans::Plan>(golden_plan(golden_));
    communicators_ = std::make_unique<splitbrain::exec::comm::MeshCommunicators>(plan_->mesh);
    trainer_ = std::make_unique<Trainer>(*plan_, splitbrain::exec::cpu::make_cpu_backend(*communicators_),
                                         golden_.at("seed").get<uint64_t>());
  }
  const splitbrain::model::Model& net() const { return *plan_->model; }
  std::unique_ptr<BatchSource> batches() const {
    if (!net().layer(0).output_is_tokens) return std::make_unique<FormulaBatch>();
    const auto& logits = net().layer(net().layer(net().size() - 1).inputs.at(0));
    return std::make_unique<TokenBatch>(logits.output_shape.back(), net().layer(0).output_shape.at(0),
                                        golden_.at("seed").get<uint64_t>());
  }

  Json golden_;
  std::unique_ptr<splitbrain::plans::Plan> plan_;
  std::unique_ptr<splitbrain::exec::comm::MeshCommunicators> communicators_;
  std::unique_ptr<Trainer> trainer_;
};

// The script's layer indices are the model's topological ones (they key the weights' hashes).
TEST_F(GoldenTest, LayerIndicesAgreeWithTheScript) {
  std::map<std::string, int> index;
  for (int v = 0; v < net().size(); ++v) index[net().layer(v).name] = v;
  ASSERT_FALSE(golden_.at("layer_indices").empty());
  for (const auto& [name, layer] : golden_.at("layer_indices").items()) {
    ASSERT_TRUE(index.count(name)) << "no layer '" << name << "' in " << golden_.at("model");
    EXPECT_EQ(index.at(name), layer.get<int>()) << name;
  }
}

// Both sides compute every initial element in float64 from the same hash and round it to
// float32 once, so samples agree exactly and the sums to double rounding.
TEST_F(GoldenTest, InitialParametersAreExactlyTheScripts) {
  const std::vector<Tensor> params = tensors(*trainer_, net(), false);
  ASSERT_EQ(params.size(), golden_.at("initial_parameters").size());
  for (const Tensor& t : params) {
    SCOPED_TRACE(t.name);
    ASSERT_TRUE(golden_.at("initial_parameters").contains(t.name));
    const Json& summary = golden_.at("initial_parameters").at(t.name);
    expect_matches(t, summary, 1e-12, 0.0);
    for (const Json& sample : summary.at("samples")) {
      EXPECT_EQ(t.values.at(sample.at(0).get<size_t>()), static_cast<float>(sample.at(1).get<double>()))
          << t.name << "[" << sample.at(0) << "]";
    }
  }
}

TEST_F(GoldenTest, LossesAndStepOneGradientsMatchPyTorch) {
  const std::unique_ptr<BatchSource> data = batches();
  const Json& losses = golden_.at("losses");
  ASSERT_EQ(losses.size(), golden_.at("steps").get<size_t>());
  // fp32's kRelative, or the golden's own (bf16: a value may round the other way, 2^-8 of it).
  const double relative = golden_.value("relative_tolerance", kRelative);
  // bf16: a gradient element near zero is the difference of rounded terms, and moves by several
  // times itself when a weight moves by 1e-6 (tools/pytorch_golden_gpt_bf16.py); only the
  // tensors' sums are compared.
  const bool samples = golden_.value("gradient_samples_compared", true);
  worst_ratio = 0.0;
  for (size_t step = 0; step < losses.size(); ++step) {
    const double loss = trainer_->step(*data).loss;
    const double expected = losses[step].get<double>();
    expect_close(loss, expected, expected, "loss of step " + std::to_string(step + 1), relative, 0.0);
    if (step != 0) continue;
    // After step 1 the momentum buffers hold the step-1 gradients (see the top of the file).
    ASSERT_EQ(trainer_->optimizer().steps_taken(), 1);
    const std::vector<Tensor> grads = tensors(*trainer_, net(), true);
    ASSERT_EQ(grads.size(), golden_.at("gradients").size());
    for (const Tensor& g : grads) {
      SCOPED_TRACE(g.name);
      ASSERT_TRUE(golden_.at("gradients").contains(g.name));
      expect_matches(g, golden_.at("gradients").at(g.name), relative, kAbsolute, samples);
    }
  }
  std::printf("largest |splitbrain - PyTorch| / tolerance over losses and gradients: %.3g\n", worst_ratio);
}

}  // namespace

int main(int argc, char** argv) {
  // MPI as `run` starts it (its progress pump), so the tests check that.
  const splitbrain::exec::comm::MpiProcess mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--golden") golden_path = argv[i + 1];
    if (std::string(argv[i]) == "--context") context_ranks = std::stoi(argv[i + 1]);
  }
  const int failed = RUN_ALL_TESTS();
  return failed;
}
