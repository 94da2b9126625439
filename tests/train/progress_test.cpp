// The progress lines of a training run (train/progress.hpp), written from metric records.
#include <gtest/gtest.h>

#include <sstream>

#include "scalelab/train/progress.hpp"

namespace scalelab {
namespace {

Json train_record(int64_t step, double loss, double time_s) {
  return {{"split", "train"}, {"step", step},          {"loss", loss},         {"nll", loss},
          {"lr", 1e-3},       {"grad_norm", 1.0},      {"tokens", 64 * step}, {"tokens_per_s", 3200.4},
          {"time_s", time_s}};
}

TEST(TrainProgress, HeaderTrainAndValidLines) {
  std::ostringstream out;
  TrainProgress progress(&out, 100, 0);
  progress.header({.parameters = 1234, .examples = 50, .run_dir = "runs/x"});
  progress.record(train_record(10, 2.5, 2.0));  // ETA: 2 s / 10 steps · 90 steps to go
  progress.record({{"split", "valid"}, {"step", 10}, {"loss", 2.4}, {"nll", 2.25},
                   {"token_accuracy", 0.5}, {"exact_match", 0.125}});
  progress.record({{"split", "valid"}, {"step", 20}, {"loss", 2.4}, {"nll", 2.0},
                   {"token_accuracy", 0.75}});  // decoder-only: no exact match
  EXPECT_EQ(out.str(),
            "scalelab train: 1234 parameters, 50 training examples, run dir runs/x\n"
            "step 10/100  loss 2.5000  lr 1.00e-03  tok/s 3200  ETA 18s\n"
            "valid step 10: loss 2.2500 nats, token accuracy 0.5000, exact match 0.1250\n"
            "valid step 20: loss 2.0000 nats, token accuracy 0.7500\n");
}

TEST(TrainProgress, ResumeHeaderNoteAndEtaFromTheResumedStep) {
  std::ostringstream out;
  TrainProgress progress(&out, 400, 100);
  progress.header({.parameters = 7, .examples = 3, .run_dir = "r", .ranks = 2, .resume = true,
                   .start_step = 100, .steps_changed = true, .saved_steps = 200});
  progress.record(train_record(110, 1.0, 100.0));  // 100 s / 10 steps · 290 steps = 48m20s
  EXPECT_EQ(out.str(),
            "scalelab train: 7 parameters, 3 training examples, run dir r, 2 ranks (data parallel)"
            " (resuming from step 100)\n"
            "note: train.steps changed from 200 to 400: the cosine decay is recomputed over the new "
            "total from step 101\n"
            "step 110/400  loss 1.0000  lr 1.00e-03  tok/s 3200  ETA 48m20s\n");
}

TEST(FormatDuration, SecondsMinutesHours) {
  EXPECT_EQ(format_duration(12.4), "12s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(3720), "1h02m");
}

}  // namespace
}  // namespace scalelab
