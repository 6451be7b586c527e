// `scalelab data make-jpeg`: a packed JPEG data set made from Fashion-MNIST (lib/data/jpeg_dataset.h).
#include <cstdio>

#include "commands.h"
#include "core/size_parse.h"
#include "data/jpeg_dataset.h"
#include "data/load.h"

namespace scalelab::cli {

int cmd_data(const Args& args) {
  po::options_description opts("scalelab data make-jpeg options");
  opts.add_options()("action", po::value<std::string>(), "make-jpeg")(
      "from", po::value<std::string>()->default_value("fashion-mnist"),
      "the source: fashion-mnist, or a folder of MNIST-format files")(
      "data-dir", po::value<std::string>(), "where Fashion-MNIST's IDX files are (default: $SCALELAB_DATA_DIR, then Debian's)")(
      "split", po::value<std::string>()->default_value("train"), "train or test")(
      "size", po::value<int>()->default_value(224), "output width and height in pixels (bilinear upsampling)")(
      "quality", po::value<int>()->default_value(90), "JPEG quality, 1..100")(
      "colour", po::bool_switch(), "RGB with a per-class tint and texture, compressing roughly as photographs do")(
      "limit", po::value<std::string>()->default_value("0"), "the first N samples only (0: all)")(
      "seed", po::value<long long>()->default_value(42), "seed of the colour and texture")(
      "out", po::value<std::string>(), "the folder to write (images.bin, index.bin, manifest.json)");
  po::positional_options_description pos;
  pos.add("action", 1);
  const auto vm = parse(args,
                        "scalelab data make-jpeg --out DIR [--from fashion-mnist] [--size 224] [--quality 90] [--colour]\n"
                        "                        [--limit N] [--split train|test]\n\n"
                        "Makes a packed JPEG data set (docs/jpeg-dataset.md) from Fashion-MNIST: each image upsampled to\n"
                        "--size with bilinear interpolation and encoded with libjpeg-turbo, labels kept. `scalelab pipeline\n"
                        "--dataset jpeg:DIR` measures the input pipeline on it.\n\n"
                        "example:\n"
                        "  scalelab data make-jpeg --size 224 --quality 90 --colour --limit 2000 --out fm-jpeg",
                        opts, &pos);
  if (!vm) return 0;
  if (!vm->count("action")) usage_error(args, "give the action: scalelab data make-jpeg --out DIR");
  const std::string action = (*vm)["action"].as<std::string>();
  if (action != "make-jpeg") usage_error(args, "unknown action '" + action + "' (make-jpeg)");
  if (!vm->count("out")) usage_error(args, "give --out DIR, the folder to write the data set to");
  const std::string split = (*vm)["split"].as<std::string>();
  if (split != "train" && split != "test") usage_error(args, "--split " + split + ": give train or test");

  data::DatasetSpec spec;
  spec.name = (*vm)["from"].as<std::string>();
  if (spec.name == "synthetic") usage_error(args, "--from synthetic: JPEG data sets are made from fashion-mnist or a folder of MNIST-format files");
  if (vm->count("data-dir")) {
    // It says where fashion-mnist's files are; a folder given with --from is read as it is.
    if (spec.name != "fashion-mnist") {
      usage_error(args, "--data-dir applies to --from fashion-mnist; leave it out (--from " + spec.name + " names its own folder)");
    }
    spec.data_dir = (*vm)["data-dir"].as<std::string>();
  }
  data::check_dataset_name(spec.name);
  data::MakeJpegOptions o;
  o.size = (*vm)["size"].as<int>();
  o.quality = (*vm)["quality"].as<int>();
  o.colour = (*vm)["colour"].as<bool>();
  // A whole number, not Boost's unsigned parse (which takes -1 for "everything").
  const std::string limit_text = (*vm)["limit"].as<std::string>();
  const std::int64_t limit = parse_int(limit_text, "--limit");
  if (limit < 0) usage_error(args, "--limit " + limit_text + ": give 0 (every sample) or more");
  o.limit = static_cast<std::size_t>(limit);
  const long long seed = (*vm)["seed"].as<long long>();
  if (seed < 0) usage_error(args, "--seed " + std::to_string(seed) + ": give 0 or more");
  o.seed = static_cast<std::uint64_t>(seed);
  // Check the cheap options before loading the source.
  if (o.size < 1 || o.size > 16384) usage_error(args, "--size " + std::to_string(o.size) + ": give 1..16384 pixels");
  if (o.quality < 1 || o.quality > 100) usage_error(args, "--quality " + std::to_string(o.quality) + ": give 1..100");
  const data::DatasetSplits splits = data::load_dataset(spec);
  const auto* source = dynamic_cast<const data::InMemoryDataset*>(split == "train" ? splits.train.get() : splits.test.get());
  if (source == nullptr) usage_error(args, "--from " + spec.name + ": not a data set of stored images");
  if (o.limit > source->size()) {
    usage_error(args, "--limit " + limit_text + ": " + source->name() + " holds " + std::to_string(source->size()) +
                          " samples; give at most that, or 0 for all");
  }
  const std::string out = (*vm)["out"].as<std::string>();
  const data::MakeJpegResult r = data::make_jpeg_dataset(*source, o, out);
  std::printf("wrote %s: %zu JPEGs of %dx%d (%s, quality %d), %.1f MB, %.1f KB per image, from %s\n", out.c_str(), r.count,
              o.size, o.size, o.colour ? "colour" : "grey", o.quality, static_cast<double>(r.jpeg_bytes) / 1e6,
              r.count ? static_cast<double>(r.jpeg_bytes) / 1e3 / static_cast<double>(r.count) : 0.0, source->name().c_str());
  return 0;
}

}  // namespace scalelab::cli
