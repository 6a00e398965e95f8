// The file of cuDNN algorithm choices that calibrate writes and run adopts: what is written reads
// back the same, and a file that is not one is refused naming the file and the field. No GPU
// needed: only the file is exercised.

#include "exec/cuda/conv_algorithm_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "model/errors.h"

namespace splitbrain::exec::cuda {
namespace {

class ConvAlgorithmFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::temp_directory_path() /
              ("sb-conv-algorithms-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  std::string write_text(const std::string& text) const {
    const std::string path = (folder_ / "choices.json").string();
    std::ofstream(path) << text;
    return path;
  }
  // The message of the InputError reading `text` throws ("" when it reads).
  std::string refusal(const std::string& text) const {
    try {
      read_conv_algorithm_file(write_text(text));
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  std::filesystem::path folder_;
};

const char* kValid = R"({"format": "splitbrain-conv-algorithms", "version": 1, "gpu": "GPU X",
  "choices": {"64,3,": {"forward": 1, "forward_workspace_bytes": 0, "backward_data": 1,
  "backward_data_workspace_bytes": 256, "backward_filter": 0, "backward_filter_workspace_bytes": 1024}}})";

TEST_F(ConvAlgorithmFileTest, WhatIsWrittenReadsBack) {
  ConvAlgorithmFile written;
  written.gpu = "NVIDIA H100 80GB HBM3";
  written.choices["64,3,32,32,64,"] = {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                       4096,
                                       CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
                                       0,
                                       CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3,
                                       1 << 20};
  written.choices["8,512,2,2,512,"] = {CUDNN_CONVOLUTION_FWD_ALGO_GEMM,     0, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, 0,
                                       CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, 0};
  const std::string path = (folder_ / "written.json").string();
  write_conv_algorithm_file(path, written);
  const ConvAlgorithmFile read = read_conv_algorithm_file(path);
  EXPECT_EQ(read.gpu, written.gpu);
  ASSERT_EQ(read.choices.size(), written.choices.size());
  for (const auto& [key, chosen] : written.choices) {
    const ConvAlgorithms& back = read.choices.at(key);
    EXPECT_EQ(back.forward, chosen.forward) << key;
    EXPECT_EQ(back.forward_workspace_bytes, chosen.forward_workspace_bytes) << key;
    EXPECT_EQ(back.backward_data, chosen.backward_data) << key;
    EXPECT_EQ(back.backward_data_workspace_bytes, chosen.backward_data_workspace_bytes) << key;
    EXPECT_EQ(back.backward_filter, chosen.backward_filter) << key;
    EXPECT_EQ(back.backward_filter_workspace_bytes, chosen.backward_filter_workspace_bytes) << key;
  }
}

TEST_F(ConvAlgorithmFileTest, AFileThatIsNotOneIsRefusedNamingTheField) {
  EXPECT_EQ(refusal(kValid), "");
  EXPECT_NE(refusal("{").find("not JSON"), std::string::npos);
  EXPECT_NE(refusal(R"({"format": "splitbrain-plan", "version": 1})").find(": format: "), std::string::npos);
  std::string text = kValid;
  EXPECT_NE(refusal(text.replace(text.find("\"version\": 1"), 12, "\"version\": 2")).find(": version: "),
            std::string::npos);
  text = kValid;
  EXPECT_NE(refusal(text.replace(text.find("\"forward\": 1"), 12, "\"forward\": 99")).find("choices.64,3,.forward: "),
            std::string::npos);
  text = kValid;
  const std::string without_bytes = text.replace(text.find("\"forward_workspace_bytes\": 0, "), 30, "");
  EXPECT_NE(refusal(without_bytes).find("choices.64,3,.forward_workspace_bytes: missing"), std::string::npos);
  text = kValid;
  EXPECT_NE(refusal(text.replace(text.find("\"gpu\": \"GPU X\","), 15, "")).find(": gpu: missing"), std::string::npos);
}

}  // namespace
}  // namespace splitbrain::exec::cuda
