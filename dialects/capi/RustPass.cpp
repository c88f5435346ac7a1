//===- RustPass.cpp - passes and pipelines defined outside C++, with options ===//
//
// The C API can neither register a pass by name nor give an external pass
// options. `RustPass` is a real MLIR pass that owns string options (so that
// `arg{opt=value}` parses and --help lists them) and one instance of the Rust
// pass those values describe, which it runs directly on its op: each HIR pass
// is one pass to the pass manager, in IR dumps, timings and reproducers.
//
//===----------------------------------------------------------------------===//
#include "hir-c/Registration.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <memory>
#include <string>
#include <vector>

using namespace mlir;

namespace {

/// Collects what the Rust side reports through an `MlirStringCallback`.
void appendMessage(MlirStringRef part, void *userData) {
  static_cast<std::string *>(userData)->append(part.data, part.length);
}

/// String options declared at run time under `parent`.
template <typename Parent, typename OptionT>
std::vector<std::unique_ptr<OptionT>> declareOptions(Parent &parent, const HirPassOption *options,
                                                     intptr_t numOptions) {
  std::vector<std::unique_ptr<OptionT>> declared;
  for (intptr_t i = 0; i < numOptions; ++i)
    declared.push_back(std::make_unique<OptionT>(parent, options[i].name,
                                                 llvm::cl::desc(options[i].description),
                                                 llvm::cl::init(options[i].defaultValue)));
  return declared;
}

template <typename OptionT>
std::vector<MlirStringRef> values(const std::vector<std::unique_ptr<OptionT>> &options) {
  std::vector<MlirStringRef> result;
  for (const auto &option : options)
    result.push_back(wrap(StringRef(option->getValue())));
  return result;
}

class RustPass : public Pass {
public:
  explicit RustPass(const HirPassInfo *info)
      : Pass(TypeID::getFromOpaquePointer(info),
             *info->anchor ? std::optional<StringRef>(info->anchor) : std::nullopt),
        info(info),
        options(declareOptions<Pass, Option<std::string>>(*this, info->options,
                                                          info->numOptions)) {}

  RustPass(const RustPass &) = delete;
  RustPass &operator=(const RustPass &) = delete;
  ~RustPass() override { destroyInstance(); }

  StringRef getName() const override { return info->argument; }
  StringRef getArgument() const override { return info->argument; }
  StringRef getDescription() const override { return info->description; }

  bool canScheduleOn(RegisteredOperationName opName) const override {
    return !*info->anchor || opName.getStringRef() == info->anchor;
  }

  // Rust passes create ops of any HIR or lowering dialect.
  void getDependentDialects(DialectRegistry &registry) const override {
    hirRegisterAllDialects(wrap(&registry));
  }

  /// Checks the values by creating the instance they describe, so that a bad
  /// value is an error when the pipeline is parsed.
  LogicalResult
  initializeOptions(StringRef text,
                    function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Pass::initializeOptions(text, errorHandler)))
      return failure();
    std::string error;
    if (!createInstance(error))
      return errorHandler(Twine(info->argument) + ": " + error);
    return success();
  }

  /// A copy with the same option values and an instance of its own (the
  /// pass manager runs copies on several threads at once).
  std::unique_ptr<Pass> clonePass() const override {
    auto copy = std::make_unique<RustPass>(info);
    copy->copyOptionValuesFrom(this);
    // The values were checked when this pass's were set; should creating fail
    // anyway, the copy reports it when it runs.
    std::string error;
    copy->createInstance(error);
    return copy;
  }

  void runOnOperation() override {
    std::string error;
    if (!instance && !createInstance(error)) {
      getOperation()->emitError() << info->argument << ": " << error;
      return signalPassFailure();
    }
    if (!info->run(instance, wrap(getOperation())))
      signalPassFailure();
  }

private:
  /// Replaces the instance with one made from the current option values;
  /// false, with the reason in `error`, if they are invalid.
  bool createInstance(std::string &error) {
    destroyInstance();
    std::vector<MlirStringRef> current = values(options);
    instance = info->create(info->userData, current.data(), current.size(), appendMessage,
                            &error);
    return instance != nullptr;
  }

  void destroyInstance() {
    if (instance)
      info->destroy(instance);
    instance = nullptr;
  }

  const HirPassInfo *info;
  std::vector<std::unique_ptr<Option<std::string>>> options;
  /// The Rust pass, owned; null until the options are set or on failure.
  void *instance = nullptr;
};

/// A pipeline's options, declared at run time.
class PipelineOptions : public detail::PassOptions {
public:
  explicit PipelineOptions(const HirPipelineInfo *info)
      : options(declareOptions<detail::PassOptions, Option<std::string>>(*this, info->options,
                                                                         info->numOptions)) {}

  std::vector<MlirStringRef> current() const { return values(options); }

private:
  std::vector<std::unique_ptr<Option<std::string>>> options;
};

} // namespace

void hirRegisterPass(const HirPassInfo *info) {
  registerPass([info]() { return std::make_unique<RustPass>(info); });
}

void hirRegisterPassPipeline(const HirPipelineInfo *info) {
  registerPassPipeline(
      info->argument, info->description,
      [info](OpPassManager &passManager, StringRef text,
             function_ref<LogicalResult(const Twine &)> errorHandler) -> LogicalResult {
        PipelineOptions options(info);
        if (failed(options.parseFromString(text)))
          return failure();
        std::vector<MlirStringRef> current = options.current();
        std::string error;
        if (!info->build(info->userData, wrap(&passManager), current.data(), current.size(),
                         appendMessage, &error))
          return errorHandler(Twine(info->argument) + ": " + error);
        return success();
      },
      [info](function_ref<void(const detail::PassOptions &)> print) {
        PipelineOptions options(info);
        print(options);
      });
}
