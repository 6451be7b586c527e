// `scalelab pipeline`: the JPEG input pipeline alone (lib/data/pipeline.h), per configuration of
// workers, augmentation and IDCT: images/s, the time per stage, and the decoded data rate beside
// what a PCIe host-to-device link carries (lib/topo's link figures).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "commands.h"
#include "core/cpu_share.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/results.h"
#include "core/size_parse.h"
#include "core/text.h"
#include "data/pipeline.h"
#include "sim/workload.h"
#include "topo/link.h"

namespace scalelab::cli {

int cmd_pipeline(const Args& args) {
  po::options_description opts("scalelab pipeline options");
  opts.add_options()("dataset", po::value<std::string>(), "jpeg:DIR, a data set from `scalelab data make-jpeg`")(
      "workers", po::value<std::string>()->default_value("1,2"), "worker thread counts to measure, e.g. 1,2")(
      "augment", po::value<std::string>()->default_value("simple,complex"), "simple and/or complex")(
      "decode", po::value<std::string>()->default_value("accurate,fast"), "accurate and/or fast IDCT")(
      "batch-size", po::value<int>()->default_value(64), "samples per batch")(
      "prefetch", po::value<int>()->default_value(0), "batches prepared ahead of the consumer (0: 2 per worker)")(
      "images", po::value<std::string>()->default_value("8192"),
      "images per configuration (the set is cycled; give each row a second or more)")(
      "crop", po::value<int>()->default_value(0), "output width and height (0: 7/8 of the set's image size)")(
      "seed", po::value<long long>()->default_value(42), "augmentation seed")(
      "cold", po::bool_switch(), "drop each JPEG from the page cache before reading it (posix_fadvise)")(
      "on-bad-sample", po::value<std::string>()->default_value("stop"), "stop (one line, exit 2) or skip (count them)")(
      "workload", po::value<std::string>()->default_value("resnet50"),
      "the network whose gradients the PCIe arithmetic compares with (a catalog workload or file)")(
      "predict", po::bool_switch(),
      "first time one worker per augmentation and IDCT (the per-core rates), then predict every row from them "
      "(rate x min(workers, cores)) and print the prediction beside the measurement")(
      "json", po::value<std::string>(), "write the rows as JSON (schema scalelab.pipeline)");
  const auto vm = parse(args,
                        "scalelab pipeline --dataset jpeg:DIR [--workers 1,2] [--augment simple,complex]\n"
                        "                  [--decode accurate,fast] [--batch-size N] [--images N] [--cold] [--predict]\n"
                        "                  [--json FILE]\n\n"
                        "Runs the JPEG input pipeline alone (read, decode, augment, batch into NCHW float32) for every\n"
                        "combination of the lists and prints images/s, the seconds each stage took (summed over the\n"
                        "workers) and the decoded tensors' MB/s beside what PCIe Gen3/4/5 x16 carries host to device.\n\n"
                        "example:\n"
                        "  scalelab data make-jpeg --limit 1000 --colour --out fm-jpeg\n"
                        "  scalelab pipeline --dataset jpeg:fm-jpeg --workers 1,2 --json pipeline.json",
                        opts);
  if (!vm) return 0;
  if (!vm->count("dataset")) usage_error(args, "give --dataset jpeg:DIR (make one with scalelab data make-jpeg)");
  check_output_files(*vm, {"json"});
  const std::string dataset = (*vm)["dataset"].as<std::string>();
  if (dataset.rfind("jpeg:", 0) != 0 || dataset.size() == 5) {
    usage_error(args, "--dataset " + dataset + ": give jpeg:DIR, a folder made by scalelab data make-jpeg");
  }
  std::vector<int> workers;
  for (const std::string& w : split_list((*vm)["workers"].as<std::string>())) {
    std::size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(w, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != w.size() || n < 1 || n > 256) usage_error(args, "--workers " + (*vm)["workers"].as<std::string>() + ": '" + w + "' is not a count 1..256");
    workers.push_back(n);
  }
  std::vector<data::Augment> augments;
  for (const std::string& a : split_list((*vm)["augment"].as<std::string>())) {
    if (a == "simple") augments.push_back(data::Augment::simple);
    else if (a == "complex") augments.push_back(data::Augment::complex);
    else usage_error(args, "--augment " + (*vm)["augment"].as<std::string>() + ": '" + a + "' is not simple or complex");
  }
  std::vector<data::JpegIdct> idcts;
  for (const std::string& d : split_list((*vm)["decode"].as<std::string>())) {
    if (d == "accurate") idcts.push_back(data::JpegIdct::accurate);
    else if (d == "fast") idcts.push_back(data::JpegIdct::fast);
    else usage_error(args, "--decode " + (*vm)["decode"].as<std::string>() + ": '" + d + "' is not accurate or fast");
  }
  if (workers.empty() || augments.empty() || idcts.empty()) usage_error(args, "--workers, --augment and --decode each need at least one value");
  // A value given twice would measure the same configuration twice, as if they were two.
  const auto twice = [&](const char* flag, const auto& values) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (std::find(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(i), values[i]) != values.begin() + static_cast<std::ptrdiff_t>(i)) {
        usage_error(args, std::string("--") + flag + " " + (*vm)[flag].as<std::string>() + ": a value given twice; give each once");
      }
    }
  };
  twice("workers", workers);
  twice("augment", augments);
  twice("decode", idcts);
  const std::string on_bad = (*vm)["on-bad-sample"].as<std::string>();
  if (on_bad != "stop" && on_bad != "skip") usage_error(args, "--on-bad-sample " + on_bad + ": give stop or skip");
  const long long seed = (*vm)["seed"].as<long long>();
  if (seed < 0) usage_error(args, "--seed " + std::to_string(seed) + ": give 0 or more");
  if (const int p = (*vm)["prefetch"].as<int>(); p < 0 || p > limits::kMaxPrefetch) {
    usage_error(args, "--prefetch " + std::to_string(p) + ": give 0 (automatic) to " + std::to_string(limits::kMaxPrefetch) + " batches");
  }
  if ((*vm)["batch-size"].as<int>() < 1) usage_error(args, "--batch-size " + std::to_string((*vm)["batch-size"].as<int>()) + ": a batch needs at least one sample");
  // A whole number, not Boost's unsigned parse (which takes -5 for 2^64 - 5); at most ten million
  // (the set is cycled, and each configuration keeps one index per image).
  const std::string images_text = (*vm)["images"].as<std::string>();
  const std::int64_t images_asked = parse_int(images_text, "--images");
  constexpr std::int64_t kMaxImages = 10'000'000;
  if (images_asked < 1 || images_asked > kMaxImages) {
    usage_error(args, "--images " + images_text + ": give 1 to " + std::to_string(kMaxImages) + " images per configuration");
  }
  const auto images = static_cast<std::size_t>(images_asked);
  const int batch = (*vm)["batch-size"].as<int>();
  if (static_cast<std::size_t>(batch) > images) {
    usage_error(args, "--batch-size " + std::to_string(batch) + ": more than the " + images_text +
                          " images of a configuration (--images); give at most that, or more images");
  }

  const sim::Workload network = sim::resolve_workload((*vm)["workload"].as<std::string>());  // a bad name fails before the work
  const data::JpegDataset set(dataset.substr(5));
  if (set.size() == 0) usage_error(args, "--dataset " + dataset + ": the data set holds no images");
  std::vector<std::size_t> stream(images);
  for (std::size_t p = 0; p < images; ++p) stream[p] = p % set.size();

  // The host-to-device links the decoded data would cross: PCIe x16 copies, from lib/topo.
  std::vector<std::pair<std::string, double>> links;
  for (const char* gen : {"3", "4", "5"}) {
    topo::LinkSpec spec;
    spec.type = topo::LinkType::pcie;
    spec.generation = gen;
    spec.width = 16;
    if (const auto f = topo::figures_of(spec)) links.emplace_back(topo::describe(spec), f->copy_GBps * 1e3);
  }

  std::printf("# scalelab pipeline: %s, %zu images of %ux%ux%u, %zu per configuration, batch %d\n", set.dir().c_str(),
              set.size(), set.index().width, set.index().height, set.index().channels, images, (*vm)["batch-size"].as<int>());
  auto options_for = [&](int w, data::Augment a, data::JpegIdct d) {
    data::PipelineOptions o;
    o.workers = w;
    o.augment = a;
    o.idct = d;
    o.batch = (*vm)["batch-size"].as<int>();
    o.crop = (*vm)["crop"].as<int>();
    o.seed = static_cast<std::uint64_t>(seed);
    o.cold = (*vm)["cold"].as<bool>();
    o.prefetch = (*vm)["prefetch"].as<int>();
    o.on_bad = on_bad == "skip" ? data::BadSamples::skip : data::BadSamples::stop;
    return o;
  };
  // A warm-up run with the most workers, not reported (up to 4096 images: the page cache, the
  // allocator's arenas and the CPU's clock settle before the first measured row).
  {
    const int most = *std::max_element(workers.begin(), workers.end());
    const std::vector<std::size_t> warm(
        stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(stream.size(), 4096)));
    data::Pipeline pipe(set, warm, options_for(most, augments.front(), idcts.front()));
    data::Batch b;
    while (pipe.next(b)) {
    }
  }
  // --predict: the per-core rate of each augmentation and IDCT, from one worker over half of
  // the images (at least one batch), before any measured row.
  const bool predict = (*vm)["predict"].as<bool>();
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  nlohmann::json per_core = nlohmann::json::array();
  auto per_core_rate = [&](data::Augment a, data::JpegIdct d) {
    for (const auto& r : per_core) {
      if (r["augment"] == data::name_of(a) && r["decode"] == data::name_of(d)) return r["images_per_s"].get<double>();
    }
    return 0.0;
  };
  if (predict) {
    const std::size_t probe_n = std::max<std::size_t>(images / 2, static_cast<std::size_t>((*vm)["batch-size"].as<int>()));
    const std::vector<std::size_t> probe(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(std::min(probe_n, stream.size())));
    for (const data::Augment a : augments) {
      for (const data::JpegIdct d : idcts) {
        data::Pipeline pipe(set, probe, options_for(1, a, d));
        data::Batch b;
        std::size_t delivered = 0;
        while (pipe.next(b)) delivered += static_cast<std::size_t>(b.count);
        const double busy = pipe.stage_seconds().total();
        per_core.push_back({{"augment", data::name_of(a)}, {"decode", data::name_of(d)}, {"images", delivered},
                            {"images_per_s", busy > 0 ? static_cast<double>(delivered) / busy : 0.0}});
        std::printf("# per core, %s augmentation, %s IDCT: %.1f images/s (one worker, %zu images, its stages' busy time)\n",
                    data::name_of(a).c_str(), data::name_of(d).c_str(), per_core.back()["images_per_s"].get<double>(), delivered);
      }
    }
    std::printf("# predicted images/s = per-core rate x min(workers, %d cores)\n", cores);
  }
  std::printf("%7s %8s %8s %10s %9s %9s %9s %9s %9s %8s%s\n", "workers", "augment", "decode", "images/s", "read_s",
              "decode_s", "augment_s", "batch_s", "MB/s", "skipped", predict ? "  predicted  error" : "");
  std::fflush(stdout);
  nlohmann::json doc = make_envelope("pipeline", 1, args.full);
  doc["dataset"] = set.dir();
  doc["images"] = images;
  doc["batch_size"] = (*vm)["batch-size"].as<int>();
  doc["cold"] = (*vm)["cold"].as<bool>();
  doc["rows"] = nlohmann::json::array();
  // The machine's load while it measured (the workers' own run-queue waits end with their threads).
  const CpuShareMeter meter;
  for (const int w : workers) {
    for (const data::Augment a : augments) {
      for (const data::JpegIdct d : idcts) {
        const data::PipelineOptions o = options_for(w, a, d);
        const auto t0 = std::chrono::steady_clock::now();
        data::Pipeline pipe(set, stream, o);
        data::Batch b;
        std::size_t delivered = 0;
        while (pipe.next(b)) delivered += static_cast<std::size_t>(b.count);
        // Skipping every sample measured nothing: as train says, the set is unusable.
        if (delivered == 0 && pipe.skipped() > 0) {
          throw_input(set.images_path() + ": every sample is bad (" + std::to_string(pipe.skipped()) +
                      " skipped, none delivered); remake the data set with `scalelab data make-jpeg`");
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const data::StageSeconds st = pipe.stage_seconds();
        const double ips = static_cast<double>(delivered) / s;
        const double mbps = ips * static_cast<double>(pipe.output_shape().elements() * sizeof(float)) / 1e6;
        const double predicted = per_core_rate(a, d) * std::min(w, cores);
        std::printf("%7d %8s %8s %10.1f %9.3f %9.3f %9.3f %9.3f %9.1f %8zu", w, data::name_of(a).c_str(),
                    data::name_of(d).c_str(), ips, st.read, st.decode, st.augment, st.batch, mbps, pipe.skipped());
        if (predict) std::printf(" %10.1f %+6.1f%%", predicted, 100 * (predicted - ips) / ips);
        std::printf("\n");
        std::fflush(stdout);  // a row as soon as it is measured, also into a pipe or a lab's log
        doc["rows"].push_back({{"workers", w},
                               {"augment", data::name_of(a)},
                               {"decode", data::name_of(d)},
                               {"images", delivered},
                               {"skipped", pipe.skipped()},
                               {"seconds", s},
                               {"images_per_s", ips},
                               {"decoded_MBps", mbps},
                               {"stage_seconds",
                                {{"read", st.read}, {"decode", st.decode}, {"augment", st.augment}, {"batch", st.batch}}}});
        if (predict) doc["rows"].back()["predicted_images_per_s"] = predicted;
      }
    }
  }
  if (predict) {
    doc["per_core_images_per_s"] = per_core;
    doc["cores"] = cores;
  }
  const RankLoad load = meter.stop(*std::max_element(workers.begin(), workers.end()));
  doc["load_average_start"] = load.load_average_start;
  doc["load_average_end"] = load.load_average_end;
  std::printf("(load average %.2f at the start, %.2f at the end)\n", load.load_average_start, load.load_average_end);
  double best = 0;
  for (const auto& r : doc["rows"]) best = std::max(best, r["decoded_MBps"].get<double>());
  std::printf("\nthe fastest configuration produces %.1f MB/s of float32 tensors; host to device, a copy reaches:\n", best);
  nlohmann::json link_rows = nlohmann::json::array();
  for (const auto& [name, mbps] : links) {
    std::printf("  %-16s %9.0f MB/s  (%.1f%% of it used)\n", name.c_str(), mbps, 100 * best / mbps);
    link_rows.push_back({{"link", name}, {"copy_MBps", mbps}});
  }
  doc["host_to_device"] = link_rows;
  // The course's other PCIe figure: the gradients each GPU sends and receives every step, at the
  // step rate the fastest configuration would feed (a batch per step).
  {
    double best_ips = 0;
    for (const auto& r : doc["rows"]) best_ips = std::max(best_ips, r["images_per_s"].get<double>());
    const double steps_per_s = best_ips / (*vm)["batch-size"].as<int>();
    const double grad_MB = static_cast<double>(network.parameters()) * 4 / 1e6;
    std::printf("%s's gradients: %.1f MB of float32 per step; a GPU training at the pipeline's pace (%.1f steps/s of %d) would "
                "send and receive %.0f MB/s of them\n",
                network.name.c_str(), grad_MB, steps_per_s, (*vm)["batch-size"].as<int>(), grad_MB * steps_per_s);
    doc["gradients"] = {{"workload", network.name}, {"MB_per_step", grad_MB}, {"steps_per_s", steps_per_s}, {"MBps", grad_MB * steps_per_s}};
  }
  if (vm->count("json")) write_json_file((*vm)["json"].as<std::string>(), doc);
  return 0;
}

}  // namespace scalelab::cli
