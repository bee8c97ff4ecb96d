// How MiniPTXAgent gets a kernel judged: an EvalRequest in, an EvalResult out. The request is
// the same serializable object `ptxbench eval` builds and a remote evaluation service will
// receive (eval/eval_types.h), so swapping the in-process pipeline for a service changes no
// agent code.
//
//   PipelineTurnEvaluator  the real one: eval/eval_pipeline.h's evaluate() (compile here, GPU
//                          stages in the trusted supervisor; skipped without a GPU).
// The tests' double, FakeTurnEvaluator, lives in tests/support/fake_turn_evaluator.h.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/process.h"
#include "eval/eval_pipeline.h"
#include "eval/eval_types.h"
#include "tasks/registry.h"

namespace ptxb {

class TurnEvaluator {
 public:
  virtual ~TurnEvaluator() = default;
  // An Error is an infrastructure failure (the turn is cut off and redone on resume); anything
  // about the kernel is a status inside the result.
  virtual Result<EvalResult> evaluate(const EvalRequest& request) = 0;
  // Why this evaluator would skip the GPU stages of every turn ("" when it runs them, or when
  // it hands them to something that does, e.g. a remote service): `ptxbench run` refuses to pay
  // a model for turns that can only be compiled unless asked to (--compile-only).
  virtual std::string gpu_unavailable_reason() const { return ""; }

  // One attempt of one turn. `turn_key` names that attempt uniquely and stably (trajectory,
  // turn, attempt), so an evaluator that hands the request to a service can make the hand-over
  // idempotent: a resumed run or a fail-over finds the evaluation again instead of repeating it
  // (service/remote_evaluator.h). In-process evaluators ignore it.
  virtual Result<EvalResult> evaluate_turn(const EvalRequest& request,
                                           const std::string& turn_key) {
    (void)turn_key;
    return evaluate(request);
  }
};

class PipelineTurnEvaluator final : public TurnEvaluator {
 public:
  // `cuda_visible_devices`: pins this evaluator's supervisor (and so the candidate's runner) to
  // one GPU; "" inherits the environment.
  PipelineTurnEvaluator(const TaskRegistry& registry, std::vector<std::string> tasks_dirs,
                        EvalTools tools, std::string cuda_visible_devices = "");
  Result<EvalResult> evaluate(const EvalRequest& request) override;
  std::string gpu_unavailable_reason() const override;

 private:
  const TaskRegistry& registry_;
  std::vector<std::string> tasks_dirs_;
  EvalTools tools_;
  std::string cuda_visible_devices_;
};

// GPU evaluation slots (concurrency.gpu): each slot's evaluator runs one evaluation at a time,
// so a GPU is never shared by two timed candidates.
class EvaluatorPool {
 public:
  explicit EvaluatorPool(std::vector<TurnEvaluator*> slots) : free_(std::move(slots)) {}

  class Lease {
   public:
    Lease(EvaluatorPool& pool, TurnEvaluator* evaluator) : pool_(pool), evaluator_(evaluator) {}
    ~Lease() { pool_.give_back(evaluator_); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    TurnEvaluator& evaluator() { return *evaluator_; }

   private:
    EvaluatorPool& pool_;
    TurnEvaluator* evaluator_;
  };

  // Blocks until a slot is free.
  std::unique_ptr<Lease> acquire() {
    std::unique_lock<std::mutex> lock(mutex_);
    available_.wait(lock, [&] { return !free_.empty(); });
    TurnEvaluator* evaluator = free_.back();
    free_.pop_back();
    return std::make_unique<Lease>(*this, evaluator);
  }

 private:
  void give_back(TurnEvaluator* evaluator) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      free_.push_back(evaluator);
    }
    available_.notify_one();
  }

  std::mutex mutex_;
  std::condition_variable available_;
  std::vector<TurnEvaluator*> free_;
};

}  // namespace ptxb
