// One test per plan validation error, each checking that the message names the file and the
// field, layer or role at fault.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "plans/compiled_plan.h"
#include "plans/plan_error.h"
#include "plans/plan_json.h"
#include "plans/plan_validation.h"
#include "tests/plans/plan_documents.h"

namespace splitbrain::plans {
namespace {

using nlohmann::ordered_json;

// The PlanError message for `document`, checked to contain the file name and every fragment.
void expect_error(const ordered_json& document, std::initializer_list<std::string_view> fragments) {
  std::string message;
  try {
    (void)plan_from_json(document, "bad.json", "");
  } catch (const PlanError& e) {
    message = e.what();
  }
  ASSERT_FALSE(message.empty()) << "no PlanError for " << document.dump();
  EXPECT_EQ(message.rfind("bad.json: ", 0), 0u) << message;
  for (std::string_view fragment : fragments) EXPECT_NE(message.find(fragment), std::string::npos) << message;
}

// The message of the PlanError that `call` throws, or "" (and a test failure) when it throws none.
template <class Call>
std::string message_of(Call call) {
  try {
    call();
  } catch (const PlanError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no PlanError";
  return "";
}

TEST(PlanJsonErrors, MalformedJson) {
  try {
    (void)plan_from_text("{\"format\": \"splitbrain-plan\",\n  \"version\": }", "bad.json", "");
    ADD_FAILURE() << "no PlanError";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json:2:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
  }
}

TEST(PlanJsonErrors, UnknownKeysAnywhere) {
  const auto with = [](std::string_view pointer, const ordered_json& value) {
    ordered_json document = base_plan();
    document[ordered_json::json_pointer(std::string(pointer))] = value;
    return document;
  };
  expect_error(with("/layer", ordered_json::object()), {"layer: unknown key"});
  expect_error(with("/default/channels", ordered_json::array({"model"})), {"default.channels: unknown key"});
  expect_error(with("/layers/fc1/outt", ordered_json::array({"model"})), {"layer 'fc1': outt: unknown key"});
  expect_error(with("/optimizer", ordered_json::parse(R"({"kind": "sgd_momentum", "beta1": 0.9})")),
               {"optimizer.beta1: unknown key"});
  expect_error(with("/options/recompute_all", true), {"options.recompute_all: unknown key"});
  ordered_json pipelined = pipeline_plan();
  pipelined["pipeline"]["stages"] = 2;
  expect_error(pipelined, {"pipeline.stages: unknown key"});
}

TEST(PlanJsonErrors, WrongFormatOrVersion) {
  ordered_json document = base_plan();
  document["format"] = "splitbrain-model";
  expect_error(document, {"format:", "is this a plan file?"});
  document = base_plan();
  document["version"] = 2;
  expect_error(document, {"version:", "version 1", "version 2"});
}

TEST(PlanJsonErrors, UnknownModel) {
  ordered_json document = base_plan();
  document["model"] = "vgg99";
  expect_error(document, {"model:", "vgg99"});
}

TEST(PlanJsonErrors, BatchMustBePositive) {
  ordered_json document = base_plan();
  document["batch"] = 0;
  expect_error(document, {"batch: must be >= 1", "got 0"});
  document["batch"] = -8;
  expect_error(document, {"batch: must be >= 1"});
}

TEST(PlanJsonErrors, UnknownDtype) {
  ordered_json document = base_plan();
  document["dtype"] = "fp8";
  expect_error(document, {"dtype:", "fp8"});
}

TEST(PlanJsonErrors, MeshAxisSizeBelowOne) {
  ordered_json document = base_plan();
  document["mesh"]["model"] = 0;
  expect_error(document, {"mesh.model:", "at least 1 rank"});
  document["mesh"] = ordered_json::object();
  expect_error(document, {"mesh: needs at least one axis"});
}

TEST(PlanJsonErrors, DuplicateMeshAxis) {
  std::string text = base_plan().dump();
  const std::string mesh = R"("mesh":{"data":2,"model":2})";
  text.replace(text.find(mesh), mesh.size(), R"("mesh":{"data":2,"data":2})");
  try {
    (void)plan_from_text(text, "bad.json", "");
    ADD_FAILURE() << "no PlanError";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("mesh: duplicate key 'data'"), std::string::npos) << e.what();
  }
}

TEST(PlanJsonErrors, RoleNamesAnUnknownAxis) {
  ordered_json document = base_plan();
  document["layers"]["fc1"]["out"] = {"modle"};
  expect_error(document, {"layer 'fc1': out: 'modle' is not a mesh axis", "{data: 2, model: 2}"});
  document = base_plan();
  document["default"]["batch"] = {"data", "dta"};
  expect_error(document, {"default.batch: 'dta' is not a mesh axis"});
}

TEST(PlanJsonErrors, AxisUsedTwiceInOneLayer) {
  ordered_json document = base_plan();
  document["layers"]["fc1"] = ordered_json::parse(R"({"batch": ["data"], "out": ["data"]})");
  expect_error(document, {"layer 'fc1': out: axis 'data' is used twice"});
  document["layers"]["fc1"] = ordered_json::parse(R"({"batch": ["model", "model"]})");
  expect_error(document, {"layer 'fc1': batch: axis 'model' is used twice"});
}

TEST(PlanJsonErrors, LayerUsesThePipelineAxis) {
  ordered_json document = pipeline_plan();
  document["layers"] = ordered_json::parse(R"({"fc1": {"batch": ["data"], "out": ["pipe"]}})");
  expect_error(document, {"layer 'fc1': out: axis 'pipe' is the pipeline axis"});
}

TEST(PlanJsonErrors, UnknownLayerName) {
  ordered_json document = base_plan();
  document["layers"]["fc9"] = ordered_json::object();
  expect_error(document, {"layers.fc9: no such layer in model 'fashion-vgg'"});
}

TEST(PlanJsonErrors, LayerWithParametersNeedsAListingOrADefault) {
  ordered_json document = base_plan();
  document.erase("default");
  expect_error(document, {"layer 'data':", "no \"default\""});
}

TEST(PlanJsonErrors, StageStartsOutOfOrder) {
  ordered_json document = pipeline_plan();
  document["mesh"]["pipe"] = 3;
  document["pipeline"]["stage_starts"] = {"fc1", "conv3"};
  expect_error(document, {"pipeline.stage_starts[1]: 'conv3' does not come after 'fc1'"});
  document["pipeline"]["stage_starts"] = {"data", "conv3"};
  expect_error(document, {"pipeline.stage_starts[0]: 'data' does not come after 'data'"});
}

TEST(PlanJsonErrors, StageStartsCountMustMatchThePipeAxis) {
  ordered_json document = pipeline_plan();
  document["pipeline"]["stage_starts"] = {"conv3", "fc1"};
  expect_error(document, {"pipeline.stage_starts: lists 2 layers", "2 stages", "needs 1"});
}

TEST(PlanJsonErrors, StageStartsNamesAnUnknownLayer) {
  ordered_json document = pipeline_plan();
  document["pipeline"]["stage_starts"] = {"conv33"};
  expect_error(document, {"pipeline.stage_starts[0]: no layer 'conv33'"});
}

TEST(PlanJsonErrors, PipelineAxisMustBeAMeshAxis) {
  ordered_json document = pipeline_plan();
  document["pipeline"]["axis"] = "stage";
  expect_error(document, {"pipeline.axis: 'stage' is not a mesh axis"});
}

TEST(PlanJsonErrors, MicroBatchesPositiveAndDividingTheBatch) {
  ordered_json document = pipeline_plan();
  document["pipeline"]["micro_batches"] = 0;
  expect_error(document, {"pipeline.micro_batches: must be between 1 and", "got 0"});
  document["pipeline"]["micro_batches"] = 3;
  expect_error(document, {"pipeline.micro_batches: 3 micro-batches do not divide the batch of 8"});
  // Without a pipeline the same key sits at the top level; a pipelined plan has it once.
  ordered_json plain = base_plan();
  plain["micro_batches"] = 3;
  expect_error(plain, {"micro_batches: 3 micro-batches do not divide the batch of 8"});
  document["pipeline"]["micro_batches"] = 2;
  document["micro_batches"] = 2;
  expect_error(document, {"micro_batches: a pipelined plan gives its micro-batches in \"pipeline\""});
}

TEST(PlanJsonErrors, RecomputeIsABooleanOrSelective) {
  ordered_json document = base_plan();
  document["options"] = {{"recompute", "attention"}};
  expect_error(document, {"options.recompute: must be false, true or \"selective\", got \"attention\""});
}

TEST(PlanJsonErrors, RecomputeBlocksNeedRecomputeAndACount) {
  ordered_json document = base_plan();
  document["options"] = {{"recompute_blocks", 2}};
  expect_error(document,
               {"options.recompute_blocks: recomputes the first blocks of each chunk under \"recompute\": true"});
  document["options"] = {{"recompute", true}, {"recompute_blocks", -1}};
  expect_error(document, {"options.recompute_blocks: must be 0 (every block) or a positive count, got -1"});
}

TEST(PlanJsonErrors, ZeroStageOutsideZeroToThree) {
  ordered_json document = base_plan();
  document["options"] = {{"zero_stage", 4}};
  expect_error(document, {"options.zero_stage: must be 0", "got 4"});
  document["options"] = {{"zero_stage", -1}};
  expect_error(document, {"options.zero_stage:", "got -1"});
}

TEST(PlanJsonErrors, UnknownOptimizerKind) {
  ordered_json document = base_plan();
  document["optimizer"] = {{"kind", "lamb"}};
  expect_error(document, {"optimizer.kind: unknown optimizer 'lamb'", "sgd_momentum, adam"});
}

TEST(PlanJsonErrors, OptimizerSettingOutOfRange) {
  ordered_json document = base_plan();
  document["optimizer"] = {{"kind", "sgd_momentum"}, {"momentum", 1.5}};
  expect_error(document, {"optimizer.momentum: must be in [0, 1)"});
}

TEST(PlanJsonErrors, UnknownSchedule) {
  ordered_json document = pipeline_plan();
  document["pipeline"]["schedule"] = "interleaved";
  expect_error(document, {"pipeline.schedule: unknown schedule 'interleaved'", "gpipe, 1f1b"});
}

TEST(PlanJsonErrors, VirtualStagesOnlyWithTheInterleavedSchedule) {
  ordered_json document = pipeline_plan();
  document["pipeline"]["virtual_stages"] = 2;
  expect_error(document, {"pipeline.virtual_stages: 2 model chunks per stage need", "interleaved_1f1b", "'gpipe'"});
  document = interleaved_plan();
  document["pipeline"]["virtual_stages"] = 1;
  expect_error(document, {"pipeline.virtual_stages: the interleaved_1f1b schedule needs at least 2"});
  document["pipeline"]["virtual_stages"] = 0;
  expect_error(document, {"pipeline.virtual_stages: must be between 1 and 1024", "got 0"});
  document["pipeline"]["virtual_stages"] = "2";
  expect_error(document, {"pipeline.virtual_stages:"});
}

TEST(PlanJsonErrors, InterleavedMicroBatchesAMultipleOfTheStages) {
  ordered_json document = interleaved_plan();
  document["mesh"] = {{"pipe", 4}, {"data", 1}};
  document["pipeline"]["stage_starts"] = {"conv2", "conv3", "conv4", "pool2", "fc1", "relu5", "fc2"};
  document["pipeline"]["micro_batches"] = 2;
  expect_error(document, {"pipeline.micro_batches: the interleaved_1f1b schedule needs a multiple of the 4 pipeline "
                          "stages (as Megatron-LM does), got 2"});
  document["pipeline"]["micro_batches"] = 4;
  EXPECT_NO_THROW((void)plan_from_json(document, "good.json", ""));
}

TEST(PlanJsonErrors, InterleavedChunksFitInAnInt) {
  ordered_json document = interleaved_plan();
  document["mesh"] = {{"pipe", 3000000}};
  document["batch"] = 3000000;
  document["pipeline"]["micro_batches"] = 3000000;
  document["pipeline"]["virtual_stages"] = 1024;
  expect_error(document, {"pipeline.virtual_stages: 3000000 stages x 1024 chunks are more chunks than fit in an int"});
}

TEST(PlanJsonErrors, InterleavedStageStartsNameEveryChunk) {
  ordered_json document = interleaved_plan();
  document["pipeline"]["stage_starts"] = {"conv3"};
  expect_error(document, {"pipeline.stage_starts: lists 1 layers, but 2 stages x 2 virtual stages make 4 model "
                          "chunks, so it needs 3"});
}

TEST(PlanJsonErrors, InterleavedNeedsTwoStages) {
  ordered_json document = interleaved_plan();
  document["mesh"] = {{"pipe", 1}, {"data", 2}};
  expect_error(document, {"pipeline.schedule: the interleaved_1f1b schedule needs a pipeline of at least 2 stages"});
}

TEST(PlanJsonErrors, InterleavedChunksHandOverOnlyToTheNext) {
  ordered_json document = interleaved_plan();
  document["pipeline"]["stage_starts"] = {"conv2", "relu2", "pool1"};
  // A chain: every chunk reads only the one before.
  EXPECT_NO_THROW((void)plan_from_json(document, "good.json", ""));
  // GPT's residual adds read the block's input: chunks cut inside a block leave a tensor read
  // chunks later (h0's first residual, in chunk 3, reads the embeddings' output of chunk 0).
  document["model"] = "gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16";
  document["default"] = ordered_json::object();
  document["pipeline"]["stage_starts"] = {"h0.ln_1", "h0.attn.c_attn", "h0.attn.core"};
  expect_error(document, {"pipeline.stage_starts: layer 'h0.attn.residual' (chunk 3, stage 1) reads 'embed.dropout' "
                          "of chunk 0",
                          "hands a tensor only from a chunk to the next"});
  // Cut between blocks it is fine.
  document["pipeline"]["stage_starts"] = {"h0.ln_1", "h1.ln_1", "ln_f"};
  EXPECT_NO_THROW((void)plan_from_json(document, "good.json", ""));
  // validate_plan and compile_plan say the same of a Plan built in code.
  Plan plan = plan_from_json(document, "test.json", "");
  const int core = plan.model->find("h0.attn.core");
  const int ln_f = plan.model->find("ln_f");
  for (int v = 0; v < plan.model->size(); ++v) {
    int& chunk = plan.stage_of_layer[static_cast<size_t>(v)];
    if (v >= core && v < ln_f) chunk = 2;  // h0.attn.residual reads chunk 0
  }
  EXPECT_NE(message_of([&] {
              validate_plan(plan, "search");
            }).find("search: pipeline.stage_starts: layer 'h0.attn.residual' (chunk 2, stage 0) reads 'embed.dropout'"),
            std::string::npos);
  EXPECT_NE(message_of([&] { (void)compile_plan(plan); }).find("layer 'h0.attn.residual' (chunk 2"), std::string::npos);
}

TEST(PlanJsonErrors, SplitThatDoesNotDivideADimension) {
  // fc2 has 10 outputs: 4 ways does not divide them.
  ordered_json document = base_plan();
  document["layers"]["fc2"] = ordered_json::parse(R"({"out": ["data", "model"]})");
  expect_error(document, {"layer 'fc2': role 'out'"});
  // A batch of 6 does not split 4 ways: the input layer is the first to say so.
  document = base_plan();
  document["batch"] = 6;
  expect_error(document, {"layer 'data': role 'batch'"});
}

TEST(PlanJsonErrors, RoleTheOpCannotTake) {
  ordered_json document = base_plan();
  document["layers"]["relu1"] = ordered_json::parse(R"({"in": ["model"]})");
  expect_error(document, {"layer 'relu1': role 'in'"});
}

TEST(PlanJsonErrors, CheckDeviceCount) {
  const Plan plan = plan_from_json(base_plan(), "test.json", "");
  EXPECT_NO_THROW(check_device_count(plan, 4, "run"));
  EXPECT_EQ(message_of([&] { check_device_count(plan, 3, "run"); }),
            "run: mesh {data: 2, model: 2} has 4 ranks but 3 devices were given");
}

TEST(PlanJsonErrors, ValidatePlanRejectsStagesThatGoBackOrOverflow) {
  // A Plan built in code (by the search, say) passes the same checks as one read from a file.
  Plan plan = plan_from_json(pipeline_plan(), "test.json", "");
  plan.stage_of_layer.back() = 0;  // ..., 1, 1, 0
  EXPECT_NE(message_of([&] { validate_plan(plan, "search"); }).find("search: layer 'loss': stage 0 follows stage 1"),
            std::string::npos);
  plan = plan_from_json(pipeline_plan(), "test.json", "");
  plan.stage_of_layer.back() = 2;  // ..., 1, 2 with only 2 stages
  EXPECT_NE(message_of([&] { validate_plan(plan, "search"); }).find("fill stages 0..2 but the pipeline has 2 stages"),
            std::string::npos);
}

}  // namespace
}  // namespace splitbrain::plans
