// Slurm sites from the machine catalog (see slurm_site.h).
#include "cluster/slurm_site.h"

#include <cctype>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/embedded_files.h"
#include "core/error.h"
#include "core/json_text.h"
#include "topo/catalog.h"

namespace scalelab::topo::detail {
const EmbeddedFile* embedded_machines(std::size_t& count);  // generated (cmake/EmbedFiles.cmake)
}  // namespace scalelab::topo::detail

namespace scalelab::cluster {

namespace {

using nlohmann::json;

// A catalog file's "slurm" section is part of the product: a malformed one is a build defect, but
// it is still named, not a crash.
[[noreturn]] void bad(const std::string& machine, const std::string& what) {
  throw_input("catalog:" + machine + ": \"slurm\": " + what + " (docs/machine-format.md)");
}

std::string text(const json& j, const char* key, const std::string& machine, bool required) {
  if (!j.contains(key)) {
    if (required) bad(machine, std::string("missing \"") + key + "\"");
    return {};
  }
  if (!j[key].is_string()) bad(machine, std::string("\"") + key + "\" must be text");
  return j[key].get<std::string>();
}

int whole(const json& j, const char* key, const std::string& machine, int fallback) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_number_integer() || j[key].get<long long>() < 0 || j[key].get<long long>() > 1'000'000) {
    bad(machine, std::string("\"") + key + "\" must be a whole number from 0 to 1000000");
  }
  return j[key].get<int>();
}

bool truth(const json& j, const char* key, const std::string& machine) {
  if (!j.contains(key)) return false;
  if (!j[key].is_boolean()) bad(machine, std::string("\"") + key + "\" must be true or false");
  return j[key].get<bool>();
}

SlurmSite from_json(const json& s, const std::string& machine, const topo::Machine& m) {
  SlurmSite site;
  site.cluster = text(s, "cluster", machine, true);
  site.machine = machine;
  site.title = m.title;
  site.gpus_per_node = m.gpus_per_node();
  site.nodes = m.nodes;
  const std::string request = text(s, "gpu_request", machine, true);
  if (request == "gres") site.gpu_request = GpuRequest::gres;
  else if (request == "gpus-per-node") site.gpu_request = GpuRequest::gpus_per_node;
  else bad(machine, "\"gpu_request\" is '" + request + "'; use gres or gpus-per-node");
  site.gres_name = text(s, "gres_name", machine, site.gpu_request == GpuRequest::gres);
  site.cores_per_gpu = whole(s, "cores_per_gpu", machine, 0);
  site.memory_GiB_per_node = whole(s, "memory_GiB_per_node", machine, 0);
  site.whole_nodes = truth(s, "whole_nodes", machine);
  site.srun_mpi = text(s, "srun_mpi", machine, false);
  site.cpu_bind = text(s, "cpu_bind", machine, false);
  site.device_variable = text(s, "device_variable", machine, false);
  site.modules = text(s, "modules", machine, false);
  site.containers = truth(s, "containers", machine);
  site.account_required = truth(s, "account_required", machine);
  if (!s.contains("partitions") || !s["partitions"].is_array()) bad(machine, "needs \"partitions\", an array (empty: none named)");
  for (const json& p : s["partitions"]) {
    SlurmPartition part;
    part.name = text(p, "name", machine, true);
    part.max_seconds = parse_slurm_time(text(p, "max_time", machine, true), "catalog:" + machine + " partition " + part.name);
    part.max_nodes = whole(p, "max_nodes", machine, 0);
    part.max_gpus = whole(p, "max_gpus", machine, 0);
    if (part.max_nodes < 1) bad(machine, "partition " + part.name + " needs \"max_nodes\" of at least 1");
    site.partitions.push_back(part);
  }
  if (s.contains("sources") && s["sources"].is_array()) {
    for (const json& src : s["sources"]) site.sources.push_back(src.is_string() ? src.get<std::string>() : src.dump());
  }
  return site;
}

SlurmSite generic_site() {
  SlurmSite site;
  site.cluster = "generic";
  site.title = "any Slurm cluster: GPUs asked per node, srun with PMIx; no partition or limits assumed";
  site.gpu_request = GpuRequest::gpus_per_node;
  site.srun_mpi = "pmix";
  site.containers = true;
  site.sources = {"Slurm documentation: sbatch(1) and srun(1) options, and the MPI guide (srun --mpi=pmix)"};
  return site;
}

}  // namespace

std::vector<std::string> slurm_cluster_names() {
  std::vector<std::string> names;
  std::size_t n = 0;
  const EmbeddedFile* files = topo::detail::embedded_machines(n);
  for (std::size_t i = 0; i < n; ++i) {
    const json doc = parse_json_text(files[i].text);
    if (doc.contains("slurm") && doc["slurm"].is_object() && doc["slurm"].contains("cluster")) {
      names.push_back(doc["slurm"]["cluster"].get<std::string>());
    }
  }
  names.push_back("generic");
  return names;
}

SlurmSite load_slurm_site(const std::string& cluster) {
  if (cluster == "generic") return generic_site();
  std::size_t n = 0;
  const EmbeddedFile* files = topo::detail::embedded_machines(n);
  for (std::size_t i = 0; i < n; ++i) {
    const json doc = parse_json_text(files[i].text);
    if (!doc.contains("slurm") || !doc["slurm"].is_object()) continue;
    if (doc["slurm"].value("cluster", std::string()) != cluster) continue;
    return from_json(doc["slurm"], files[i].name, topo::resolve_machine(files[i].name));
  }
  std::string known;
  for (const auto& name : slurm_cluster_names()) known += (known.empty() ? "" : ", ") + name;
  throw_parameter(ErrorKind::input, "cluster", cluster + ": not a cluster scalelab writes job scripts for; use one of " + known);
}

long long parse_slurm_time(const std::string& t, const std::string& parameter) {
  const auto fail = [&]() -> long long {
    throw_parameter(ErrorKind::usage, parameter,
                    t + ": not a Slurm time; write HH:MM:SS, D-HH:MM:SS or minutes (e.g. 00:15:00, 1-12:00:00, 30)");
  };
  if (t.empty() || t.size() > 32) fail();
  for (char c : t) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != ':' && c != '-') fail();
  }
  long long days = 0;
  std::string rest = t;
  const auto dash = t.find('-');
  if (dash != std::string::npos) {
    if (dash == 0 || dash > 3 || t.find('-', dash + 1) != std::string::npos || t.find(':') < dash) fail();
    days = std::stoll(t.substr(0, dash));
    rest = t.substr(dash + 1);
  }
  std::vector<long long> parts;
  std::size_t at = 0;
  while (true) {
    const auto colon = rest.find(':', at);
    const std::string piece = rest.substr(at, colon == std::string::npos ? std::string::npos : colon - at);
    if (piece.empty() || piece.size() > 6) fail();
    parts.push_back(std::stoll(piece));
    if (colon == std::string::npos) break;
    at = colon + 1;
  }
  if (parts.size() > 3) fail();
  long long seconds = 0;
  if (dash != std::string::npos) {
    // D-HH, D-HH:MM, D-HH:MM:SS
    seconds = parts[0] * 3600 + (parts.size() > 1 ? parts[1] * 60 : 0) + (parts.size() > 2 ? parts[2] : 0);
  } else if (parts.size() == 1) {
    seconds = parts[0] * 60;  // minutes
  } else if (parts.size() == 2) {
    seconds = parts[0] * 60 + parts[1];  // MM:SS
  } else {
    seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
  }
  if (parts.size() > 1 && (parts.back() >= 60 || (parts.size() == 3 && parts[1] >= 60))) fail();
  seconds += days * 86400;
  if (seconds <= 0 || seconds > 365LL * 86400) fail();
  return seconds;
}

std::string format_slurm_time(long long s) {
  char buf[48];
  const long long d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60, sec = s % 60;
  if (d > 0) std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", d, h, m, sec);
  else std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", h, m, sec);
  return buf;
}

}  // namespace scalelab::cluster
