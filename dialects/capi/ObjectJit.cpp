//===- ObjectJit.cpp - running a cached object file without compiling -----===//
//
// HIR's compile cache keeps the object file MLIR's ExecutionEngine compiled a
// lowered program to. A hit loads that object into an ORC LLJIT set up as the
// ExecutionEngine sets up its own (RuntimeDyld with a SectionMemoryManager,
// the runtime's functions as absolute symbols of the main JITDylib, the
// process's symbols behind them), so that the loaded code links as freshly
// compiled code does, with no pass pipeline and no code generation. The C API
// has no way to add an object file to an ExecutionEngine, hence this shim.
//
//===----------------------------------------------------------------------===//
#include "hir-c/ObjectJit.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

#include <memory>
#include <string>

struct HirObjectJit {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

namespace {

void report(MlirStringCallback callback, void *userData, const std::string &text) {
  callback(MlirStringRef{text.data(), text.size()}, userData);
}

std::string describe(llvm::Error error) { return llvm::toString(std::move(error)); }

/// Checks that the object can run as it is loaded here, and finds a global
/// symbol it defines (`defined`, empty if none); returns why not, or "".
/// LLJIT's platform runs the static constructors of IR it compiles (renamed
/// to `__orc_init_func.*` when the module is added), not those of an object
/// file; lowered HIR has none, and an object with any is refused rather than
/// run uninitialized.
std::string inspect(llvm::MemoryBufferRef buffer, std::string &defined) {
  auto object = llvm::object::ObjectFile::createObjectFile(buffer);
  if (!object)
    return "it is not an object file: " + describe(object.takeError());
  for (const llvm::object::SectionRef &section : (*object)->sections()) {
    auto name = section.getName();
    if (!name)
      return describe(name.takeError());
    for (llvm::StringRef initializers : {".init_array", ".fini_array", ".ctors", ".dtors"})
      if (name->starts_with(initializers))
        return ("it has a " + *name + " section").str();
  }
  for (const llvm::object::SymbolRef &symbol : (*object)->symbols()) {
    auto name = symbol.getName();
    auto flags = symbol.getFlags();
    if (!name || !flags)
      return describe(name ? flags.takeError() : name.takeError());
    if (name->starts_with("__orc_init_func") || name->starts_with("__orc_deinit_func"))
      return ("it has the static initializer " + *name).str();
    if (defined.empty() && (*flags & llvm::object::BasicSymbolRef::SF_Global) &&
        !(*flags & llvm::object::BasicSymbolRef::SF_Undefined))
      defined = name->str();
  }
  return "";
}

} // namespace

HirObjectJit *hirObjectJitCreate(const void *object, size_t size, const MlirStringRef *names,
                                 void *const *addresses, intptr_t numSymbols,
                                 MlirStringCallback onError, void *userData) {
  // The host's target, for the data layout (mlirExecutionEngineCreate
  // initializes it too, with what code generation needs besides).
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    return true;
  }();
  (void)initialized;

  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(static_cast<const char *>(object), size), "hir-compile-cache");
  std::string defined;
  std::string refused = inspect(buffer->getMemBufferRef(), defined);
  if (!refused.empty()) {
    report(onError, userData, "the cached object cannot be loaded: " + refused);
    return nullptr;
  }
  auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!host) {
    report(onError, userData, describe(host.takeError()));
    return nullptr;
  }
  auto layout = host->getDefaultDataLayoutForTarget();
  if (!layout) {
    report(onError, userData, describe(layout.takeError()));
    return nullptr;
  }
  // The ExecutionEngine's linker: RuntimeDyld places the sections near each
  // other and builds stubs for the far calls of the default code model.
  auto linker = [](llvm::orc::ExecutionSession &session)
      -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
    return std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
        session, [](const llvm::MemoryBuffer &) {
          return std::make_unique<llvm::SectionMemoryManager>();
        });
  };
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(*host))
                 .setDataLayout(*layout)
                 .setObjectLinkingLayerCreator(linker)
                 .create();
  if (!jit) {
    report(onError, userData, describe(jit.takeError()));
    return nullptr;
  }
  llvm::orc::JITDylib &main = (*jit)->getMainJITDylib();
  const llvm::DataLayout &dataLayout = (*jit)->getDataLayout();
  auto process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(dataLayout.getGlobalPrefix());
  if (!process) {
    report(onError, userData, describe(process.takeError()));
    return nullptr;
  }
  main.addGenerator(std::move(*process));
  llvm::orc::MangleAndInterner mangle(main.getExecutionSession(), dataLayout);
  llvm::orc::SymbolMap symbols;
  for (intptr_t i = 0; i < numSymbols; ++i)
    symbols[mangle(llvm::StringRef(names[i].data, names[i].length))] = {
        llvm::orc::ExecutorAddr::fromPtr(addresses[i]), llvm::JITSymbolFlags::Exported};
  if (llvm::Error error = main.define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
    report(onError, userData, describe(std::move(error)));
    return nullptr;
  }
  if (llvm::Error error = (*jit)->addObjectFile(std::move(buffer))) {
    report(onError, userData, describe(std::move(error)));
    return nullptr;
  }
  // Links the object now (RuntimeDyld links it whole on its first lookup),
  // so that a symbol defined nowhere fails the load, which the cache then
  // treats as a miss, not a later lookup.
  if (!defined.empty()) {
    auto linked = (*jit)->lookupLinkerMangled(defined);
    if (!linked) {
      report(onError, userData, "the cached object does not link: " + describe(linked.takeError()));
      return nullptr;
    }
  }
  return new HirObjectJit{std::move(*jit)};
}

void *hirObjectJitLookupPacked(HirObjectJit *jit, MlirStringRef name, MlirStringCallback onError,
                               void *userData) {
  auto address = jit->jit->lookup(("_mlir_" + llvm::StringRef(name.data, name.length)).str());
  if (!address) {
    report(onError, userData, describe(address.takeError()));
    return nullptr;
  }
  return address->toPtr<void *>();
}

void hirObjectJitDestroy(HirObjectJit *jit) { delete jit; }

void hirJitHostTarget(MlirStringCallback callback, void *userData) {
  std::string text = "LLVM " LLVM_VERSION_STRING;
  auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!host) {
    // Nothing compiles for an undetected host: the text still differs from
    // any a compile produced.
    report(callback, userData, text + " undetected host: " + describe(host.takeError()));
    return;
  }
  text += " " + host->getTargetTriple().str() + " " + host->getCPU() + " " +
          host->getFeatures().getString();
  report(callback, userData, text);
}
