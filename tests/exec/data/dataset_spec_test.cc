// The --data argument: each accepted form, and unknown or malformed ones as InputErrors that list
// the choices.

#include "exec/data/dataset_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exec/data/fashion_mnist.h"
#include "model/errors.h"

namespace splitbrain::exec::data {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string input_error_of(std::string_view text) {
  try {
    parse_dataset_spec(text);
  } catch (const InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no InputError for '" << text << "'";
  return "";
}

TEST(DatasetSpec, FashionMnistDefaultsToThePackageFolder) {
  const DatasetSpec spec = parse_dataset_spec("fashion-mnist");
  EXPECT_EQ(spec.kind, DatasetKind::kFashionMnist);
  EXPECT_EQ(spec.directory, std::filesystem::path(kDefaultFashionMnistDir));
  EXPECT_EQ(parse_dataset_spec("fashion-mnist:/data/fm").directory, std::filesystem::path("/data/fm"));
}

TEST(DatasetSpec, Cifar10NeedsAFolder) {
  const DatasetSpec spec = parse_dataset_spec("cifar10:/data/cifar");
  EXPECT_EQ(spec.kind, DatasetKind::kCifar10);
  EXPECT_EQ(spec.directory, std::filesystem::path("/data/cifar"));
  EXPECT_THAT(input_error_of("cifar10"), HasSubstr("cifar10 needs its folder"));
}

TEST(DatasetSpec, SyntheticDefaultsAndOptions) {
  const DatasetSpec plain = parse_dataset_spec("synthetic");
  EXPECT_EQ(plain.kind, DatasetKind::kSynthetic);
  EXPECT_EQ(plain.synthetic.classes, 10);
  EXPECT_EQ(plain.synthetic.shape, (SampleShape{1, 28, 28}));
  const DatasetSpec spec =
      parse_dataset_spec("synthetic:classes=100,shape=3x32x32,samples=50000,test-samples=7,seed=9");
  EXPECT_EQ(spec.synthetic.classes, 100);
  EXPECT_EQ(spec.synthetic.shape, (SampleShape{3, 32, 32}));
  EXPECT_EQ(spec.synthetic.train_samples, 50000);
  EXPECT_EQ(spec.synthetic.test_samples, 7);
  EXPECT_EQ(spec.synthetic.seed, 9u);
  const auto test = open_dataset(spec, Split::kTest);
  EXPECT_EQ(test->sample_count(), 7);
  EXPECT_EQ(test->sample_shape(), (SampleShape{3, 32, 32}));
}

TEST(DatasetSpec, SyntheticTakesTheCallersDefaultsWhereTheTextIsSilent) {
  SyntheticOptions model_defaults;
  model_defaults.classes = 1000;
  model_defaults.shape = {3, 224, 224};
  const DatasetSpec plain = parse_dataset_spec("synthetic", model_defaults);
  EXPECT_EQ(plain.synthetic.classes, 1000);
  EXPECT_EQ(plain.synthetic.shape, (SampleShape{3, 224, 224}));
  const DatasetSpec shaped = parse_dataset_spec("synthetic:shape=1x8x8", model_defaults);
  EXPECT_EQ(shaped.synthetic.shape, (SampleShape{1, 8, 8}));
  EXPECT_EQ(shaped.synthetic.classes, 1000);
}

TEST(DatasetSpec, UnknownNameListsTheChoices) {
  EXPECT_THAT(input_error_of("mnist"), AllOf(HasSubstr("unknown data 'mnist'"), HasSubstr("fashion-mnist"),
                                             HasSubstr("cifar10:DIR"), HasSubstr("synthetic")));
}

TEST(DatasetSpec, MalformedSyntheticOptionsAreNamed) {
  EXPECT_THAT(input_error_of("synthetic:colour=red"), HasSubstr("unknown synthetic option 'colour'"));
  EXPECT_THAT(input_error_of("synthetic:shape=32x32"), HasSubstr("shape=32x32 must be CxHxW"));
  EXPECT_THAT(input_error_of("synthetic:classes=ten"), HasSubstr("classes=ten is not a whole non-negative number"));
  EXPECT_THAT(input_error_of("synthetic:classes=1"), HasSubstr("classes=1 (need at least 2)"));
  EXPECT_THAT(input_error_of("synthetic:seed=1,seed=2"), HasSubstr("seed given twice"));
  EXPECT_THAT(input_error_of("synthetic:samples"), HasSubstr("'samples' is not KEY=VALUE"));
}

TEST(DatasetSpec, SplitNames) {
  EXPECT_EQ(parse_split("train"), Split::kTrain);
  EXPECT_EQ(parse_split("test"), Split::kTest);
  EXPECT_THROW(parse_split("validation"), InputError);
}

}  // namespace
}  // namespace splitbrain::exec::data
