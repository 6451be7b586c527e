// bench_cnn_step: training-step throughput of a named model (default the course's cnn) on one
// rank: forward + softmax cross-entropy + backward + Adam, on synthetic Fashion-MNIST-shaped
// inputs (so the input pipeline is out of the picture), median over repeats.
// Build: cmake --build <dir> --target bench_cnn_step
// Run:   <dir>/tests/perf/bench_cnn_step [--threads 1] [--batch 128] [--steps 20] [--repeats 5]
//                                        [--warmup 5] [--model cnn] [--profile] [--json FILE]
// Prints one line per repeat and a summary (img/s, ms/step, GFLOP/s, peak RSS, BLAS in use);
// tests/perf/compare_torch.py runs it beside PyTorch.
//
// It also measures the step's GEMM-bound limit: one step's matrix products are recorded (shape,
// transposes, leading dimensions), then each is timed alone on buffers of its own, 64-byte
// aligned as the engine's tensors are (median of repeats, after a warm-up), and their sum is the
// step's time if it did nothing but its products at the rates the BLAS reaches on those shapes:
// images/s = batch / that sum. The share of it the step reaches is the limit's time over the
// step's. A second figure prices the step's FLOPs at
// the BLAS's rate on one large square product (2048^3), the rate the products would reach if
// their shapes were ideal.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/malloc_tuning.h"
#include "core/rng.h"
#include "core/timer.h"
#include "nn/blas.h"
#include "nn/compute.h"
#include "nn/loss.h"
#include "nn/model.h"
#include "optim/factory.h"

namespace {

namespace nn = scalelab::nn;

struct Options {
  int threads = 1;
  std::size_t batch = 128, steps = 20, repeats = 5, warmup = 5;
  std::string model = "cnn", json;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "bench_cnn_step: %s\nusage: bench_cnn_step [--threads N] [--batch B] [--steps S] [--repeats R] "
               "[--warmup W] [--model NAME] [--json FILE]\n",
               why.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") usage("training-step throughput (forward, backward, Adam) on synthetic data");
    if (i + 1 >= argc) usage(a + " needs a value");
    std::string v = argv[++i];
    char* end = nullptr;
    long n = std::strtol(v.c_str(), &end, 10);
    bool numeric = end && *end == '\0' && n > 0;
    if (a == "--model") o.model = v;
    else if (a == "--json") o.json = v;
    else if (!numeric) usage(a + " " + v + ": expected a positive integer");
    else if (a == "--threads") o.threads = static_cast<int>(n);
    else if (a == "--batch") o.batch = static_cast<std::size_t>(n);
    else if (a == "--steps") o.steps = static_cast<std::size_t>(n);
    else if (a == "--repeats") o.repeats = static_cast<std::size_t>(n);
    else if (a == "--warmup") o.warmup = static_cast<std::size_t>(n);
    else usage("unknown option " + a);
  }
  return o;
}

// CPU time of this process: on a shared, loaded machine img/s per CPU-second estimates what a
// quiet machine gives far better than wall time (printed beside it, never instead of it).
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Times `calls` products of one shape on buffers of their own, 64-byte aligned as the engine's
// tensors are: the median of `reps` after a warm-up.
double time_gemm(const nn::GemmCall& c, int reps) {
  // Stored sizes: A is m x k (k x m transposed) with row stride lda, and so on.
  const std::size_t a_rows = static_cast<std::size_t>(c.trans_a ? c.k : c.m);
  const std::size_t b_rows = static_cast<std::size_t>(c.trans_b ? c.n : c.k);
  nn::Tensor a(nn::Shape{a_rows * static_cast<std::size_t>(c.lda)}), b(nn::Shape{b_rows * static_cast<std::size_t>(c.ldb)}),
      out(nn::Shape{static_cast<std::size_t>(c.m) * static_cast<std::size_t>(c.ldc)});
  a.fill(0.5f);
  b.fill(0.25f);
  out.fill(0.0f);
  const auto run = [&] {
    nn::sgemm(c.trans_a, c.trans_b, c.m, c.n, c.k, 1.0f, a.data(), c.lda, b.data(), c.ldb, c.beta, out.data(), c.ldc);
  };
  for (int i = 0; i < 3; ++i) run();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    scalelab::Stopwatch sw;
    run();
    t.push_back(sw.elapsed().value);
  }
  return median(t);
}

struct GemmBound {
  double seconds = 0;        // the step's products, each timed alone, added up
  std::size_t calls = 0;     // products in one step
  double square_gflops = 0;  // the BLAS on a 2048^3 product
};

// The GEMM-bound limit of `step` (see the top of this file).
template <class Step>
GemmBound gemm_bound(Step& step, int threads) {
  std::vector<nn::GemmCall> calls;
  nn::record_gemms(&calls);
  step();
  nn::record_gemms(nullptr);
  GemmBound out;
  out.calls = calls.size();
  // Identical shapes are timed once and counted as often as the step makes them.
  std::vector<std::pair<nn::GemmCall, std::size_t>> shapes;
  for (const auto& c : calls) {
    auto same = [&](const auto& s) {
      const nn::GemmCall& x = s.first;
      return x.trans_a == c.trans_a && x.trans_b == c.trans_b && x.m == c.m && x.n == c.n && x.k == c.k &&
             x.lda == c.lda && x.ldb == c.ldb && x.ldc == c.ldc && x.beta == c.beta;
    };
    auto it = std::find_if(shapes.begin(), shapes.end(), same);
    if (it == shapes.end()) shapes.push_back({c, 1});
    else ++it->second;
  }
  // With several compute threads the products of a layer run at once on separate chunks; their
  // time alone, one after another, would understate the limit: divide by the threads used.
  for (const auto& [c, count] : shapes) out.seconds += double(count) * time_gemm(c, 15);
  out.seconds /= double(std::max(1, threads));
  const nn::GemmCall square{false, false, 2048, 2048, 2048, 2048, 2048, 2048, 0.0f};
  out.square_gflops = 2.0 * 2048.0 * 2048.0 * 2048.0 / time_gemm(square, 5) / 1e9;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  scalelab::keep_large_allocations();  // as `scalelab train` runs
  using namespace scalelab;
  const Options o = parse(argc, argv);
  try {
    nn::set_compute_threads(o.threads);
    auto model = nn::make_model(o.model, nn::Shape{1, 28, 28}, 10, 42);
    auto opt = optim::make_optimizer("adam", {});
    // Synthetic batch: pixels in [0, 1] like scaled Fashion-MNIST, labels uniform over 10 classes.
    Rng rng(7);
    nn::Tensor x(nn::Shape{o.batch, 1, 28, 28}), dlogits(nn::Shape{o.batch, 10});
    for (std::size_t i = 0; i < x.numel(); ++i) x.data()[i] = rng.uniform();
    std::vector<std::int32_t> labels(o.batch);
    for (auto& l : labels) l = static_cast<std::int32_t>(rng.below(10));
    auto step = [&] {
      model->zero_grad();
      nn::ConstTensorView logits = model->forward(x.view(), true);
      nn::softmax_cross_entropy(logits, labels, dlogits.view());
      model->backward(dlogits.view());
      opt->step(model->parameters(), 1e-3f);
    };
    for (std::size_t i = 0; i < o.warmup; ++i) step();
    std::vector<double> ips, cpu_ips;
    for (std::size_t r = 0; r < o.repeats; ++r) {
      Stopwatch sw;
      const double c0 = cpu_seconds();
      for (std::size_t i = 0; i < o.steps; ++i) step();
      const double s = sw.elapsed().value, c = cpu_seconds() - c0;
      ips.push_back(double(o.steps * o.batch) / s);
      cpu_ips.push_back(double(o.steps * o.batch) / c);
      std::printf("repeat %zu: %.0f img/s (%.2f ms/step); per CPU-second %.0f img/s\n", r + 1, ips.back(),
                  1e3 * s / double(o.steps), cpu_ips.back());
    }
    const double med = median(ips), cpu_med = median(cpu_ips);
    const GemmBound bound = gemm_bound(step, o.threads);
    const double step_s = double(o.batch) / med;
    const nn::FlopCount f = model->flops_per_image();
    const double gflops = med * (f.forward + f.backward()) / 1e9;
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const double rss_mib = double(ru.ru_maxrss) / 1024.0;
    std::printf("model %s batch %zu threads %d: median %.0f img/s, %.2f ms/step, %.1f GFLOP/s (%.1f MFLOP/img), "
                "peak RSS %.0f MiB; per CPU-second %.0f img/s\nblas: %s\n",
                o.model.c_str(), o.batch, o.threads, med, 1e3 * double(o.batch) / med, gflops,
                (f.forward + f.backward()) / 1e6, rss_mib, cpu_med, nn::blas_description().c_str());
    const double square_limit = bound.square_gflops * 1e9 / (f.forward + f.backward());
    std::printf("GEMM-bound limit: %.0f img/s (the step's %zu products alone, each timed on its own: %.2f of its %.2f ms, "
                "%.1f%% reached); at the BLAS's %.0f GFLOP/s on a 2048^3 product: %.0f img/s (%.1f%% reached)\n",
                double(o.batch) / bound.seconds, bound.calls, 1e3 * bound.seconds, 1e3 * step_s,
                100 * bound.seconds / step_s, bound.square_gflops, square_limit, 100 * med / square_limit);
    if (!o.json.empty()) {
      std::ofstream js(o.json);
      js << "{\"model\": \"" << o.model << "\", \"batch\": " << o.batch << ", \"threads\": " << o.threads
         << ", \"steps\": " << o.steps << ", \"repeats\": " << o.repeats << ", \"median_img_per_s\": " << med
         << ", \"median_img_per_cpu_s\": " << cpu_med << ", \"gflops\": " << gflops << ", \"peak_rss_mib\": " << rss_mib << ", \"blas\": \""
         << nn::blas_description() << "\", \"gemm_calls_per_step\": " << bound.calls
         << ", \"gemm_bound_step_s\": " << bound.seconds << ", \"gemm_bound_img_per_s\": " << double(o.batch) / bound.seconds
         << ", \"gemm_bound_reached\": " << bound.seconds / step_s << ", \"square_gemm_gflops\": " << bound.square_gflops
         << ", \"square_gemm_img_per_s\": " << square_limit << ", \"img_per_s\": [";
      for (std::size_t i = 0; i < ips.size(); ++i) js << (i ? ", " : "") << ips[i];
      js << "]}\n";
      if (!js) usage("--json " + o.json + ": cannot write the file");
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_cnn_step: %s\n", e.what());
    return e.exit_code();
  }
  return 0;
}
