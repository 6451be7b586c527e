// sgemm through OpenBLAS loaded with dlopen, or through Eigen when OpenBLAS is absent.
// Why dlopen rather than linking: OpenBLAS picks its kernels once, when it is loaded, from the
// OPENBLAS_CORETYPE environment variable if set. These machines preset OPENBLAS_CORETYPE=Haswell,
// which selects AVX2 kernels on an AVX-512 CPU and halves the product's speed
// (docs/references.md, "Measured on the build machines").
// Loading it ourselves lets us clear that variable (or apply SCALELAB_BLAS_CORETYPE) for the
// duration of the load only, then restore the environment as it was, so nothing else changes.
#include "nn/blas.h"

#include "core/error.h"
#include "core/launch_env.h"

#include <dlfcn.h>

#include <Eigen/Core>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>

namespace scalelab::nn {
namespace {

// cblas_sgemm's enums, by value (CblasRowMajor = 101, CblasNoTrans = 111, CblasTrans = 112).
using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                         float*, int);
using CharFn = char* (*)();
using SetThreadsFn = void (*)(int);

struct Backend {
  SgemmFn sgemm = nullptr;
  SetThreadsFn set_threads = nullptr;
  std::string description;
  std::string problem;  // the environment asked for what could not be had (check_blas_environment)
  std::string warning;  // it asked for kernels OpenBLAS did not choose
};

// Sets (or unsets) an environment variable for the lifetime of this object, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string eigen_version() {
  return std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
         std::to_string(EIGEN_MINOR_VERSION);
}

bool same_name(std::string a, std::string b) {
  for (std::string* x : {&a, &b}) {
    for (char& c : *x) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return a == b;
}

Backend load_backend() {
  Backend b;
  const char* choice = std::getenv("SCALELAB_BLAS");
  const std::string chosen = choice ? choice : "";
  if (chosen == "eigen") {
    b.description = "Eigen " + eigen_version() + " built-in product (SCALELAB_BLAS=eigen)";
    return b;
  }
  if (!chosen.empty() && chosen != "openblas") {
    b.problem = "SCALELAB_BLAS=" + chosen + ": not a BLAS scalelab uses; set it to eigen or openblas, or unset it";
  }
  const char* given = std::getenv("SCALELAB_BLAS_LIBRARY");
  const bool library_given = given != nullptr && *given != '\0';
  const char* lib = library_given ? given : "libopenblas.so.0";
  const char* coretype = std::getenv("SCALELAB_BLAS_CORETYPE");
  if (coretype && !*coretype) coretype = nullptr;
  void* handle = nullptr;
  {
    ScopedEnv core("OPENBLAS_CORETYPE", coretype);
    handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  }
  if (!handle) {
    const char* err = dlerror();
    const std::string why = err ? err : lib;
    b.description = "Eigen " + eigen_version() + " built-in product (OpenBLAS not loaded: " + why + "; install libopenblas0)";
    if (b.problem.empty() && (library_given || chosen == "openblas" || coretype != nullptr)) {
      // Asked for by name (the library, OpenBLAS itself, or its kernels): say why it is not there.
      const std::string asked = library_given ? "SCALELAB_BLAS_LIBRARY=" + std::string(lib)
                                : chosen == "openblas" ? std::string("SCALELAB_BLAS=openblas")
                                                       : std::string("SCALELAB_BLAS_CORETYPE=") + coretype;
      b.problem = asked + ": cannot load " + lib + " (" + why + "); install libopenblas0, point SCALELAB_BLAS_LIBRARY at an "
                  "OpenBLAS shared library, or unset it";
    }
    return b;
  }
  b.sgemm = reinterpret_cast<SgemmFn>(dlsym(handle, "cblas_sgemm"));
  b.set_threads = reinterpret_cast<SetThreadsFn>(dlsym(handle, "openblas_set_num_threads"));
  auto corename = reinterpret_cast<CharFn>(dlsym(handle, "openblas_get_corename"));
  auto config = reinterpret_cast<CharFn>(dlsym(handle, "openblas_get_config"));
  if (!b.sgemm) {
    b.description = "Eigen " + eigen_version() + " built-in product (" + lib + " has no cblas_sgemm)";
    if (library_given && b.problem.empty()) {
      b.problem = "SCALELAB_BLAS_LIBRARY=" + std::string(lib) + ": has no cblas_sgemm; point it at an OpenBLAS shared library, or unset it";
    }
    return b;
  }
  const std::string kernels = corename ? corename() : "?";
  std::string how = ", CPU detected";
  if (coretype && same_name(coretype, kernels)) how = std::string(", SCALELAB_BLAS_CORETYPE=") + coretype;
  if (coretype && corename == nullptr) {
    how = std::string(", SCALELAB_BLAS_CORETYPE=") + coretype + " not applied";
    b.warning = std::string("SCALELAB_BLAS_CORETYPE=") + coretype + ": " + lib +
                " is not an OpenBLAS that names its kernels (no openblas_get_corename), so the core type cannot be applied";
  } else if (coretype && !same_name(coretype, kernels)) {
    // OpenBLAS takes an unknown name, or kernels this CPU cannot run, silently and picks its own.
    how = std::string(", SCALELAB_BLAS_CORETYPE=") + coretype + " not applied";
    b.warning = std::string("SCALELAB_BLAS_CORETYPE=") + coretype + ": OpenBLAS chose its " + kernels +
                " kernels instead (it knows no such core type, or this CPU cannot run it); see OpenBLAS's TargetList.txt";
  }
  b.description = std::string(config ? config() : "OpenBLAS") + ", " + kernels + " kernels (" + lib + how + ")";
  // One thread until set_compute_threads says otherwise: one rank per core is the default, and a
  // pthread OpenBLAS would otherwise start a thread per core in every rank.
  if (b.set_threads) b.set_threads(1);
  return b;
}

Backend& backend() {
  static Backend b = load_backend();
  return b;
}

template <class M>
using RowMap = Eigen::Map<M, Eigen::Unaligned, Eigen::OuterStride<>>;
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ColMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;

void eigen_sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                 int ldb, float beta, float* c, int ldc) {
  RowMap<RowMat> C(c, m, n, Eigen::OuterStride<>(ldc));
  // A row-major (k x m) matrix read as column-major (m x k) is A^T, with no copy.
  auto prod = [&](const auto& A) {
    auto run = [&](const auto& B) {
      if (beta == 0.0f) C.noalias() = alpha * (A * B);
      else {
        if (beta != 1.0f) C *= beta;
        C.noalias() += alpha * (A * B);
      }
    };
    if (tb) run(RowMap<const ColMat>(b, k, n, Eigen::OuterStride<>(ldb)));
    else run(RowMap<const RowMat>(b, k, n, Eigen::OuterStride<>(ldb)));
  };
  if (ta) prod(RowMap<const ColMat>(a, m, k, Eigen::OuterStride<>(lda)));
  else prod(RowMap<const RowMat>(a, m, k, Eigen::OuterStride<>(lda)));
}

}  // namespace

namespace {
std::atomic<std::vector<GemmCall>*> g_gemm_sink{nullptr};
std::mutex g_gemm_sink_mutex;
}  // namespace

void record_gemms(std::vector<GemmCall>* sink) {
  const std::lock_guard<std::mutex> lock(g_gemm_sink_mutex);
  g_gemm_sink.store(sink);
}

void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  if (g_gemm_sink.load(std::memory_order_relaxed) != nullptr) {
    const std::lock_guard<std::mutex> lock(g_gemm_sink_mutex);
    if (auto* sink = g_gemm_sink.load()) sink->push_back({trans_a, trans_b, m, n, k, lda, ldb, ldc, beta});
  }
  Backend& be = backend();
  if (be.sgemm) {
    be.sgemm(101, trans_a ? 112 : 111, trans_b ? 112 : 111, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    eigen_sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

void check_blas_environment() {
  const auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0';
  };
  if (!set("SCALELAB_BLAS") && !set("SCALELAB_BLAS_LIBRARY") && !set("SCALELAB_BLAS_CORETYPE")) return;
  const Backend& be = backend();
  if (!be.problem.empty()) throw_input(be.problem);
  // Once per job: every rank finds the same, so rank 0 (or a process outside a launcher) says it.
  static std::once_flag warned;
  if (!be.warning.empty() && read_launch_env().rank == 0) {
    std::call_once(warned, [&] { std::fprintf(stderr, "warning: %s\n", be.warning.c_str()); });
  }
}

std::string blas_description() { return backend().description; }
std::string blas_backend() { return backend().sgemm ? "openblas" : "eigen"; }

void blas_set_threads(int n) {
  Backend& be = backend();
  if (be.set_threads) be.set_threads(n);
  Eigen::setNbThreads(n);
}

}  // namespace scalelab::nn
