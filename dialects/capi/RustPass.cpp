//===- RustPass.cpp - passes and pipelines defined outside C++, with options ===//
//
// The C API can neither register a pass by name nor give an external pass
// options. `RustPass` is a real MLIR pass that owns string options (so that
// `arg{opt=value}` parses and --help lists them); each run it asks its
// creator for the external pass those values describe and runs it as a
// nested pipeline on the same op.
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

  LogicalResult
  initializeOptions(StringRef text,
                    function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Pass::initializeOptions(text, errorHandler)))
      return failure();
    std::string error;
    std::unique_ptr<Pass> pass = create(error);
    if (!pass)
      return errorHandler(Twine(info->argument) + ": " + error);
    return success();
  }

  std::unique_ptr<Pass> clonePass() const override {
    auto copy = std::make_unique<RustPass>(info);
    copy->copyOptionValuesFrom(this);
    return copy;
  }

  void runOnOperation() override {
    std::string error;
    std::unique_ptr<Pass> pass = create(error);
    if (!pass) {
      getOperation()->emitError() << info->argument << ": " << error;
      return signalPassFailure();
    }
    OpPassManager pipeline(getOperation()->getName().getStringRef());
    pipeline.addPass(std::move(pass));
    if (failed(runPipeline(pipeline, getOperation())))
      signalPassFailure();
  }

private:
  std::unique_ptr<Pass> create(std::string &error) const {
    std::vector<MlirStringRef> current = values(options);
    MlirPass pass = info->create(info->userData, current.data(), current.size(),
                                 appendMessage, &error);
    return std::unique_ptr<Pass>(pass.ptr ? unwrap(pass) : nullptr);
  }

  const HirPassInfo *info;
  std::vector<std::unique_ptr<Option<std::string>>> options;
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
